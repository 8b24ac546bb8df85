"""DLPack exchange (DLManagedTensor capsules named "dltensor") through ctypes, for OrtValue's
to_dlpack / __dlpack__ / from_dlpack. CPU tensors only; nothing is copied."""
import ctypes

from . import _values as V
from ._errors import InvalidArgument
from ._lib import lib, check, c_p, c_i64

KDL_CPU = 1
KDL_INT, KDL_UINT, KDL_FLOAT, KDL_COMPLEX, KDL_BOOL = 0, 1, 2, 5, 6


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]

_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_ptr = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_ptr.restype = ctypes.c_void_p
_capsule_ptr.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_set_name = ctypes.pythonapi.PyCapsule_SetName
_capsule_set_name.restype = ctypes.c_int
_capsule_set_name.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_is_valid.restype = ctypes.c_int
_capsule_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]

# cort type -> (code, bits)
_TO_DL = {V.T_FLOAT: (KDL_FLOAT, 32), V.T_DOUBLE: (KDL_FLOAT, 64), V.T_FLOAT16: (KDL_FLOAT, 16),
          V.T_INT8: (KDL_INT, 8), V.T_INT16: (KDL_INT, 16), V.T_INT32: (KDL_INT, 32), V.T_INT64: (KDL_INT, 64),
          V.T_UINT8: (KDL_UINT, 8), V.T_UINT16: (KDL_UINT, 16), V.T_UINT32: (KDL_UINT, 32),
          V.T_UINT64: (KDL_UINT, 64), V.T_BOOL: (KDL_BOOL, 8), V.T_COMPLEX64: (KDL_COMPLEX, 64),
          V.T_COMPLEX128: (KDL_COMPLEX, 128)}
_FROM_DL = {v: k for k, v in _TO_DL.items()}

# Exported tensors stay here until their consumer calls the deleter.
_live = {}


@DELETER
def _delete(managed):
    entry = _live.pop(ctypes.addressof(managed.contents), None)
    if entry is not None:
        lib.cort_value_release(entry[0])


def to_capsule(value):
    """A "dltensor" capsule over the tensor `value` (a cort_value*, retained until consumed)."""
    t = lib.cort_tensor_type(value)
    if lib.cort_value_kind(value) != V.KIND_TENSOR or t not in _TO_DL:
        raise InvalidArgument("to_dlpack: only numeric tensors can be exported")
    shape = V.tensor_shape(value)
    mt = DLManagedTensor()
    shp = (ctypes.c_int64 * max(len(shape), 1))(*shape)
    code, bits = _TO_DL[t]
    mt.dl_tensor.data = lib.cort_tensor_data(value)
    mt.dl_tensor.device = DLDevice(KDL_CPU, 0)
    mt.dl_tensor.ndim = len(shape)
    mt.dl_tensor.dtype = DLDataType(code, bits, 1)
    mt.dl_tensor.shape = shp
    mt.dl_tensor.strides = None
    mt.dl_tensor.byte_offset = 0
    mt.deleter = _delete
    _live[ctypes.addressof(mt)] = (lib.cort_value_retain(value), mt, shp)
    # no capsule destructor: a capsule nobody consumes keeps its tensor (a small, bounded leak
    # rather than a destructor running ctypes code during interpreter teardown)
    return _capsule_new(ctypes.addressof(mt), b"dltensor", None)


class _Consumed:
    """Keeps an imported tensor's producer alive; calls its deleter when the OrtValue is gone."""

    def __init__(self, managed):
        self.managed = managed

    def __del__(self):
        m = self.managed
        if m and m.contents.deleter:
            m.contents.deleter(m)


def is_uint8(capsule):
    mt = ctypes.cast(_capsule_ptr(capsule, b"dltensor"), ctypes.POINTER(DLManagedTensor)).contents
    return mt.dl_tensor.dtype.code == KDL_UINT and mt.dl_tensor.dtype.bits == 8


def from_capsule(capsule, is_bool=False):
    """(cort_value*, keeper) for a "dltensor" capsule, consuming it."""
    if not _capsule_is_valid(capsule, b"dltensor"):
        raise InvalidArgument("from_dlpack: expected an unconsumed 'dltensor' capsule")
    ptr = _capsule_ptr(capsule, b"dltensor")
    managed = ctypes.cast(ptr, ctypes.POINTER(DLManagedTensor))
    dl = managed.contents.dl_tensor
    if dl.device.device_type != KDL_CPU:
        raise InvalidArgument("from_dlpack: cort only takes CPU tensors (device type %d)" % dl.device.device_type)
    key = (dl.dtype.code, dl.dtype.bits)
    if dl.dtype.lanes != 1 or key not in _FROM_DL:
        raise InvalidArgument("from_dlpack: unsupported data type code %d bits %d" % key)
    t = _FROM_DL[key]
    if is_bool and t == V.T_UINT8:
        t = V.T_BOOL
    shape = [dl.shape[i] for i in range(dl.ndim)]
    n = 1
    for x in shape:
        n *= x
    if dl.strides and n:
        expect = 1
        for i in reversed(range(dl.ndim)):
            if shape[i] != 1 and dl.strides[i] != expect:
                raise InvalidArgument("from_dlpack: only contiguous (row-major) tensors are supported")
            expect *= shape[i]
    nbytes = n * (dl.dtype.bits // 8)
    data = (dl.data or 0) + dl.byte_offset
    shp = (c_i64 * max(len(shape), 1))(*shape)
    out = c_p()
    check(lib.cort_tensor_wrap(c_p(data) if nbytes else None, nbytes, t, shp, len(shape), ctypes.byref(out)))
    _capsule_set_name(capsule, b"used_dltensor")
    return out.value, _Consumed(managed)
