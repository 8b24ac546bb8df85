"""Devices, memory descriptions and allocator settings with onnxruntime's Python names.

cort runs on the CPU only: these objects describe that device with onnxruntime's numbering (so
code comparing device types or memory types keeps working), and refuse to place anything elsewhere.
"""
import enum

from ._errors import InvalidArgument


class OrtDevice:
    """A device (type, memory type, id[, vendor id]) numbered as onnxruntime numbers them."""

    _CPU, _GPU, _FPGA, _NPU = 0, 1, 2, 3
    _DEFAULT, _CUDA_PINNED, _HIP_PINNED, _CANN_PINNED, _QNN_HTP_SHARED, _HOST_ACCESSIBLE = 0, 1, 2, 3, 4, 5

    def __init__(self, device_type=0, mem_type=0, device_id=0, vendor_id=None):
        self._type = int(device_type)
        self._mem = int(mem_type)
        self._id = int(device_id)
        self._vendor = int(vendor_id) if vendor_id is not None else (0x10DE if self._type == self._GPU else 0)

    @staticmethod
    def cpu():
        return OrtDevice._CPU

    @staticmethod
    def cuda():
        return OrtDevice._GPU

    @staticmethod
    def dml():
        return OrtDevice._GPU

    @staticmethod
    def gpu():
        return OrtDevice._GPU

    @staticmethod
    def fpga():
        return OrtDevice._FPGA

    @staticmethod
    def npu():
        return OrtDevice._NPU

    @staticmethod
    def default_memory():
        return OrtDevice._DEFAULT

    @staticmethod
    def cuda_pinned():
        return OrtDevice._CUDA_PINNED

    @staticmethod
    def host_accessible():
        return OrtDevice._HOST_ACCESSIBLE

    @staticmethod
    def make(device_type, device_id=0):
        """OrtDevice.make("cpu" | "cuda" | ..., id): the device as onnxruntime numbers it."""
        name = str(device_type).lower()
        if name not in _NAME_TO_TYPE:
            raise InvalidArgument("Unsupported device type: %s" % device_type)
        t = _NAME_TO_TYPE[name]
        vendor = {"cuda": OrtDeviceVendorId.NVIDIA, "dml": OrtDeviceVendorId.MICROSOFT}.get(name, OrtDeviceVendorId.NONE)
        return OrtDevice(t, 0, device_id, int(vendor))

    def device_id(self):
        return self._id

    def device_vendor_id(self):
        return self._vendor

    def device_type(self):
        return self._type

    def device_mem_type(self):
        return self._mem

    def vendor_id(self):
        return self._vendor

    def __eq__(self, other):
        return isinstance(other, OrtDevice) and (self._type, self._mem, self._id, self._vendor) == \
            (other._type, other._mem, other._id, other._vendor)

    def __hash__(self):
        return hash((self._type, self._mem, self._id, self._vendor))

    def __repr__(self):
        return "Device:[DeviceType:%d MemoryType:%d DeviceId:%d VendorId:%d]" % (self._type, self._mem, self._id,
                                                                                  self._vendor)

    __str__ = __repr__


_NAME_TO_TYPE = {"cpu": OrtDevice._CPU, "cuda": OrtDevice._GPU, "gpu": OrtDevice._GPU, "dml": OrtDevice._GPU,
                 "cann": OrtDevice._NPU, "npu": OrtDevice._NPU, "fpga": OrtDevice._FPGA}


def device_from_args(device, device_id=0):
    """The OrtDevice a (device_type string or OrtDevice, device_id) pair names; only the CPU is accepted."""
    if isinstance(device, OrtDevice):
        dev = device
    else:
        name = str(device).lower()
        if name not in _NAME_TO_TYPE:
            raise InvalidArgument("Unsupported device type: %s" % device)
        dev = OrtDevice(_NAME_TO_TYPE[name], 0, device_id)
    if dev.device_type() != OrtDevice._CPU:
        raise InvalidArgument("cort only supports the 'cpu' device, not %s (device type %d)" % (device, dev.device_type()))
    return dev


class OrtDeviceVendorId(enum.IntEnum):
    NONE = 0
    AMD = 0x1002
    NVIDIA = 0x10DE
    ARM = 0x13B5
    MICROSOFT = 0x1414
    HUAWEI = 0x19E5
    QUALCOMM = 0x5143
    INTEL = 0x8086


class OrtMemoryInfoDeviceType(enum.IntEnum):
    CPU = 0
    GPU = 1
    FPGA = 2
    NPU = 3


class OrtAllocatorType(enum.IntEnum):
    INVALID = -1
    ORT_DEVICE_ALLOCATOR = 0
    ORT_ARENA_ALLOCATOR = 1


class OrtMemType(enum.IntEnum):
    CPU_INPUT = -2
    CPU_OUTPUT = -1
    CPU = -1
    DEFAULT = 0


class OrtDeviceMemoryType(enum.IntEnum):
    DEFAULT = 0
    HOST_ACCESSIBLE = 5


class OrtMemoryInfo:
    """Where an allocator's memory lives: name ('Cpu'), allocator type, device id and memory type."""

    def __init__(self, name, alloc_type, device_id, mem_type):
        self.name = str(name)
        self.allocator_type = OrtAllocatorType(int(alloc_type))
        self.device_id = int(device_id)
        self.mem_type = OrtMemType(int(mem_type))
        self._device = OrtDevice(OrtDevice._CPU, 0, self.device_id)

    @staticmethod
    def create_v2(name, device_type, vendor_id, device_id, mem_type, alignment, allocator_type):
        if int(device_type) != OrtDevice._CPU:
            raise InvalidArgument("cort only describes CPU memory (device type %d)" % int(device_type))
        info = OrtMemoryInfo(name, allocator_type, device_id, OrtMemType.DEFAULT)
        info._device = OrtDevice(int(device_type), int(mem_type), int(device_id), int(vendor_id))
        info.alignment = int(alignment)
        return info

    @property
    def device(self):
        return self._device

    @property
    def device_mem_type(self):
        return OrtDeviceMemoryType(self._device.device_mem_type())

    @property
    def device_vendor_id(self):
        return self._device.vendor_id()

    def __eq__(self, other):
        return isinstance(other, OrtMemoryInfo) and (self.name, self.allocator_type, self.device_id, self.mem_type) == \
            (other.name, other.allocator_type, other.device_id, other.mem_type)

    def __hash__(self):
        return hash((self.name, int(self.allocator_type), self.device_id, int(self.mem_type)))

    def __repr__(self):
        return "OrtMemoryInfo:[name:%s id:%d OrtMemType:%d AllocatorType:%d %r]" % (
            self.name, self.device_id, int(self.mem_type), int(self.allocator_type), self._device)


def cpu_memory_info():
    """What cort's tensors live in: the CPU arena allocator, as onnxruntime describes its default one."""
    return OrtMemoryInfo("Cpu", OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, OrtMemType.DEFAULT)


class OrtArenaCfg:
    """Arena settings, accepted for compatibility (cort's allocator has no arena to configure):
    OrtArenaCfg(max_mem, arena_extend_strategy, initial_chunk_size_bytes, max_dead_bytes_per_chunk)
    or OrtArenaCfg({key: value})."""

    _KEYS = ("max_mem", "arena_extend_strategy", "initial_chunk_size_bytes", "max_dead_bytes_per_chunk",
             "initial_growth_chunk_size_bytes", "max_power_of_two_extend_bytes")

    def __init__(self, *args):
        self.max_mem = 0
        self.arena_extend_strategy = -1
        self.initial_chunk_size_bytes = -1
        self.max_dead_bytes_per_chunk = -1
        self.initial_growth_chunk_size_bytes = -1
        self.max_power_of_two_extend_bytes = -1
        if len(args) == 1 and isinstance(args[0], dict):
            for k, v in args[0].items():
                if k not in self._KEYS:
                    raise ValueError("Invalid OrtArenaCfg key: %s" % k)
                setattr(self, k, int(v))
        elif len(args) == 4:
            (self.max_mem, self.arena_extend_strategy, self.initial_chunk_size_bytes,
             self.max_dead_bytes_per_chunk) = (int(a) for a in args)
        elif args:
            raise TypeError("OrtArenaCfg(max_mem, arena_extend_strategy, initial_chunk_size_bytes, "
                            "max_dead_bytes_per_chunk) or OrtArenaCfg(dict)")


_registered_allocators = []


def create_and_register_allocator(mem_info, arena_cfg=None):
    """Registers a shared CPU allocator (onnxruntime's env allocators). cort's sessions always share
    its one process-wide allocator, so this checks the arguments and records the request."""
    if not isinstance(mem_info, OrtMemoryInfo):
        raise TypeError("create_and_register_allocator: mem_info must be an OrtMemoryInfo")
    if mem_info.device.device_type() != OrtDevice._CPU:
        raise InvalidArgument("cort can only register CPU allocators")
    if arena_cfg is not None and not isinstance(arena_cfg, OrtArenaCfg):
        raise TypeError("create_and_register_allocator: arena_cfg must be an OrtArenaCfg or None")
    _registered_allocators.append((mem_info, arena_cfg))


def create_and_register_allocator_v2(provider_type, mem_info, provider_options, arena_cfg=None):
    create_and_register_allocator(mem_info, arena_cfg)
