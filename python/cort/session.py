"""InferenceSession and friends, with onnxruntime's Python API."""
import atexit
import ctypes
import enum
import itertools
import os
import sys
import threading
import traceback
import warnings

import numpy as np

from . import _lib
from ._lib import lib, check, c_p, c_i64, c_str, s, d
from ._errors import InvalidArgument
from . import _values as V

_PROVIDER_TO_CORT = {"CPUExecutionProvider": "cpu", "XnnpackExecutionProvider": "xnnpack"}
# onnxruntime's order: highest priority first, the CPU provider last
_ALL_PROVIDERS = ["XnnpackExecutionProvider", "CPUExecutionProvider"]
# onnxruntime's provider option names that cort spells differently
_OPTION_NAMES = {"xnnpack": {"intra_op_num_threads": "threads"}}


class GraphOptimizationLevel(enum.IntEnum):
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class ExecutionOrder(enum.IntEnum):
    DEFAULT = 0
    PRIORITY_BASED = 1
    MEMORY_EFFICIENT = 2


def _cort_level(level):
    level = int(level)
    if level <= 0:
        return 0
    return 1 if level == 1 else 2


_available = None


def get_available_providers():
    """['CPUExecutionProvider'] plus 'XnnpackExecutionProvider' when libcort was built with XNNPACK."""
    global _available
    if _available is None:
        found = ["CPUExecutionProvider"]
        opts = c_p()
        check(lib.cort_session_options_create(ctypes.byref(opts)))
        try:
            st = lib.cort_session_options_append_provider(opts, b"xnnpack", None, None, 0)
            code = lib.cort_status_code(st)
            lib.cort_status_free(st)
            if code != _lib.CODE_NOT_IMPLEMENTED:
                found.insert(0, "XnnpackExecutionProvider")
        finally:
            lib.cort_session_options_free(opts)
        _available = found
    return list(_available)


def get_all_providers():
    return list(_ALL_PROVIDERS)


def get_device():
    return "CPU"


def get_version_string():
    return d(lib.cort_version())


def get_build_info():
    return "Build Info: cort %s (%s)" % (get_version_string(), _lib.LIBRARY_PATH)


_logger = {"callback": None, "severity": 2}


def set_default_logger_severity(level):
    _logger["severity"] = int(level)


def set_default_logger_callback(callback, severity=None):
    """Routes the messages of the Python binding (session creation, provider choice) to
    callback(severity, category, logid, code_location, message); None restores the default (no
    output: libcort itself never logs). severity: the least severe level passed on (0 verbose .. 4
    fatal)."""
    if callback is not None and not callable(callback):
        raise InvalidArgument("set_default_logger_callback: callback must be callable or None")
    if severity is not None:
        if not 0 <= int(severity) <= 4:
            raise InvalidArgument("set_default_logger_callback: severity must be 0..4, got %s" % severity)
        _logger["severity"] = int(severity)
    _logger["callback"] = callback


def _log(severity, logid, message):
    cb = _logger["callback"]
    if cb is None or severity < _logger["severity"]:
        return
    try:
        cb(int(severity), "cort", str(logid or ""), "cort/session.py", str(message))
    except Exception:  # noqa: BLE001 - a failing callback must not break the caller
        pass


def enable_telemetry_events():
    pass   # cort sends no telemetry


def disable_telemetry_events():
    pass


def set_default_logger_verbosity(level):
    pass


def get_cpu_info():
    """cort extension: the ISA level in use and what the CPU has, as cort_cpu_describe's line, e.g.
    "isa: avx2 (detected: avx512; flags: avx2 fma ...; l2: 1024 KB; capped by CORT_ISA=avx2)". Raises (like session
    creation) when CORT_ISA is invalid. docs/isa.md."""
    n = ctypes.c_size_t(0)
    check(lib.cort_cpu_describe(None, 0, ctypes.byref(n)))
    buf = ctypes.create_string_buffer(n.value + 1)
    check(lib.cort_cpu_describe(buf, n.value + 1, None))
    return buf.value.decode()


def get_allocator_stats():
    """cort extension: the process-wide CPU allocator statistics as a dict."""
    st = _lib.AllocatorStats()
    check(lib.cort_allocator_get_stats(ctypes.byref(st)))
    return {"bytes_in_use": st.bytes_in_use, "peak_bytes": st.peak_bytes, "allocations": st.allocations}


class SessionOptions:
    """Options read when an InferenceSession is created. Only intra_op_num_threads,
    graph_optimization_level, free-dimension overrides and the session config entries
    "cort.max_tensor_bytes" and "cort.fold_budget" (the size policy, include/cort.h) change what
    cort does; the rest is accepted for compatibility."""

    def __init__(self):
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.execution_order = ExecutionOrder.DEFAULT
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.enable_profiling = False
        self.profile_file_prefix = "onnxruntime_profile_"
        self.optimized_model_filepath = ""
        self.enable_cpu_mem_arena = True
        self.enable_mem_pattern = True
        self.enable_mem_reuse = True
        self.use_deterministic_compute = False
        self._config = {}
        self._dims = {}
        self._custom_libraries = []
        self._denotations = {}
        self._initializers = {}        # name -> OrtValue (kept alive: a session may wrap its memory)
        self._external_files = {}      # file name -> bytes
        self.prepacked_weights = None   # a PrepackedWeights shared with other sessions, or None

    def add_session_config_entry(self, key, value):
        self._config[str(key)] = str(value)

    def get_session_config_entry(self, key):
        if key not in self._config:
            raise InvalidArgument("SessionOptions does not have configuration with key: %s" % key)
        return self._config[key]

    def add_free_dimension_override_by_name(self, dim_name, dim_value):
        self._dims[str(dim_name)] = int(dim_value)

    def add_free_dimension_override_by_denotation(self, dim_denotation, dim_value):
        """Applied in Python to inputs whose dimension carries that denotation (read with onnx when
        it is installed); cort's C API sets dimensions by name."""
        self._denotations[str(dim_denotation)] = int(dim_value)

    def register_custom_ops_library(self, path):
        """Loads a custom-operator library (it exports cort_register_custom_ops; include/cort.h).
        Loading and registration errors are raised here, as ONNX Runtime does; sessions made from
        these options get the library's operators."""
        path = os.fspath(path)
        probe = c_p()
        check(lib.cort_session_options_create(ctypes.byref(probe)))
        try:
            check(lib.cort_session_options_load_custom_op_library(probe, s(path)))
        finally:
            lib.cort_session_options_free(probe)
        self._custom_libraries.append(path)

    def add_initializer(self, name, value):
        """Provides initializer `name` (an OrtValue on the CPU): it replaces the model's initializer of
        that name, or makes a graph input of that name a constant. The OrtValue must stay alive while
        sessions use it (these options keep a reference)."""
        if not isinstance(value, OrtValue):
            raise TypeError("add_initializer: value must be an OrtValue, got %s" % type(value).__name__)
        if not value.is_tensor():
            raise InvalidArgument("add_initializer: '%s' is not a tensor" % name)
        self._initializers[str(name)] = value

    def add_external_initializers(self, names, values):
        """add_initializer for each (name, OrtValue) pair."""
        names, values = list(names), list(values)
        if len(names) != len(values):
            raise ValueError("add_external_initializers: %d names but %d values" % (len(names), len(values)))
        for n, v in zip(names, values):
            self.add_initializer(n, v)

    def add_external_initializers_from_files_in_memory(self, file_names, buffers, lengths):
        """External-data files given as bytes-like buffers (name as written in the model's
        external_data location); tensors stored in them are read from these bytes."""
        file_names, buffers, lengths = list(file_names), list(buffers), list(lengths)
        if not (len(file_names) == len(buffers) == len(lengths)):
            raise ValueError("add_external_initializers_from_files_in_memory: lists of different lengths")
        for name, buf, n in zip(file_names, buffers, lengths):
            data = bytes(memoryview(buf).cast("B")[:int(n)]) if not isinstance(buf, bytes) else buf[:int(n)]
            if len(data) != int(n):
                raise ValueError("add_external_initializers_from_files_in_memory: '%s' has %d bytes, not %d"
                                 % (name, len(data), int(n)))
            self._external_files[os.fspath(name)] = data

    def _create(self, providers, extra_dims=None):
        """A cort_session_options* (caller frees) for these options and cort provider (name, opts) pairs."""
        opts = c_p()
        check(lib.cort_session_options_create(ctypes.byref(opts)))
        try:
            check(lib.cort_session_options_set_threads(opts, int(self.intra_op_num_threads)))
            check(lib.cort_session_options_set_optimization_level(opts, _cort_level(self.graph_optimization_level)))
            if self.prepacked_weights is not None:
                if not isinstance(self.prepacked_weights, PrepackedWeights):
                    raise InvalidArgument("SessionOptions: prepacked_weights must be a cort.PrepackedWeights, got %s"
                                          % type(self.prepacked_weights).__name__)
                check(lib.cort_session_options_set_prepacked_weights(opts, self.prepacked_weights._ptr))
            spin = self._config.get("session.intra_op.allow_spinning")
            if spin is not None:
                if spin not in ("0", "1"):
                    raise InvalidArgument("SessionOptions: session.intra_op.allow_spinning must be '0' or '1', got '%s'"
                                          % spin)
                check(lib.cort_session_options_set_spinning(opts, int(spin)))
            for path in self._custom_libraries:
                check(lib.cort_session_options_load_custom_op_library(opts, s(path)))
            if self.enable_profiling:
                check(lib.cort_session_options_set_profile_file(opts, 1, s(self.profile_file_prefix or "")))
            for name, value in self._initializers.items():
                check(lib.cort_session_options_add_initializer(opts, s(name), value._value))
            for name, data in self._external_files.items():
                check(lib.cort_session_options_add_external_data(opts, s(name), data, len(data)))
            if self.optimized_model_filepath:
                check(lib.cort_session_options_set_optimized_model_path(opts, s(os.fspath(self.optimized_model_filepath))))
                ext = self._config.get("session.optimized_model_external_initializers_file_name")
                if ext:
                    try:
                        ext_min = int(self._config.get("session.optimized_model_external_initializers_min_size_in_bytes",
                                                       "1024"))
                    except ValueError:
                        raise InvalidArgument("SessionOptions: session.optimized_model_external_initializers_min_size"
                                              "_in_bytes is not a number")
                    check(lib.cort_session_options_set_optimized_model_external_data(opts, s(ext), max(ext_min, 0)))
            for name, value in list((extra_dims or {}).items()) + list(self._dims.items()):
                check(lib.cort_session_options_set_dim(opts, s(name), value))
            for key, setter in (("cort.max_tensor_bytes", lib.cort_session_options_set_max_tensor_bytes),
                                ("cort.fold_budget", lib.cort_session_options_set_fold_budget)):
                if key in self._config:
                    try:
                        n = int(self._config[key])
                    except ValueError:
                        raise InvalidArgument("SessionOptions: config entry '%s' = '%s' is not a number of bytes"
                                              % (key, self._config[key]))
                    if n < 0:
                        raise InvalidArgument("SessionOptions: config entry '%s' = %d is negative" % (key, n))
                    check(setter(opts, n))
            for name, po in providers:
                rename = _OPTION_NAMES.get(name, {})
                items = [(s(rename.get(str(k), str(k))), s(str(v))) for k, v in po.items()]
                keys = (ctypes.c_char_p * max(len(items), 1))(*[k for k, _ in items])
                vals = (ctypes.c_char_p * max(len(items), 1))(*[v for _, v in items])
                check(lib.cort_session_options_append_provider(opts, s(name), keys, vals, len(items)))
        except BaseException:
            lib.cort_session_options_free(opts)
            raise
        return opts


class PrepackedWeights:
    """Packed weights shared by every session created with `SessionOptions.prepacked_weights` set to
    this object (cort_prepacked_weights in include/cort.h): N sessions of one model hold one copy.
    Buffers are matched by content, so sessions of different models sharing a weight share it too.
    Safe to use from many threads; sessions keep the buffers alive after this object is gone."""

    def __init__(self):
        ptr = c_p()
        check(lib.cort_prepacked_weights_create(ctypes.byref(ptr)))
        self._ptr = ptr.value

    @property
    def count(self):
        """Number of packed buffers stored."""
        return int(lib.cort_prepacked_weights_count(self._ptr))

    @property
    def nbytes(self):
        """Byte count of the initializers the stored buffers were packed from."""
        return int(lib.cort_prepacked_weights_bytes(self._ptr))

    def __del__(self, _release=lib.cort_prepacked_weights_release):
        p, self._ptr = getattr(self, "_ptr", None), None
        if p:
            _release(p)


class RunOptions:
    """Per-run options; setting `terminate = True` stops every run using them (they fail with Fail)."""

    def __init__(self):
        ptr = c_p()
        check(lib.cort_run_options_create(ctypes.byref(ptr)))
        self._ptr = ptr.value
        self._terminate = False
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.run_tag = ""
        self.only_execute_path_to_fetches = False
        self._config = {}

    @property
    def terminate(self):
        return self._terminate

    @terminate.setter
    def terminate(self, value):
        self._terminate = bool(value)
        lib.cort_run_options_set_terminate(self._ptr, 1 if value else 0)

    def add_run_config_entry(self, key, value):
        self._config[str(key)] = str(value)

    def get_run_config_entry(self, key):
        return self._config[key]

    def __del__(self, _free=lib.cort_run_options_free):
        p, self._ptr = getattr(self, "_ptr", None), None
        if p:
            _free(p)   # safe while runs using them are in flight


class NodeArg:
    """Name, type string and shape of a model input or output."""

    def __init__(self, name, type, shape):
        self.name = name
        self.type = type
        self.shape = shape

    def __repr__(self):
        return "NodeArg(name=%r, type=%r, shape=%r)" % (self.name, self.type, self.shape)

    __str__ = __repr__


class ModelMetadata:
    def __init__(self, producer_name, graph_name, graph_description, domain, description, version,
                 custom_metadata_map):
        self.producer_name = producer_name
        self.graph_name = graph_name
        self.graph_description = graph_description
        self.domain = domain
        self.description = description
        self.version = version
        self.custom_metadata_map = custom_metadata_map


def _describe(sess, index, is_input, overrides=None):
    fn_type = lib.cort_session_input_type if is_input else lib.cort_session_output_type
    fn_dim = lib.cort_session_input_dim_name if is_input else lib.cort_session_output_dim_name
    fn_name = lib.cort_session_input_name if is_input else lib.cort_session_output_name
    vt = _lib.ValueType()
    dims = (c_i64 * 64)()
    check(fn_type(sess, index, ctypes.byref(vt), dims, 64))
    shape = []
    if vt.kind == V.KIND_TENSOR and vt.rank > 0:
        for i in range(vt.rank):
            if i < 64 and dims[i] >= 0:
                shape.append(int(dims[i]))
            else:
                name = d(fn_dim(sess, index, i))
                shape.append(overrides[name] if overrides and name in overrides else name)
    return d(fn_name(sess, index)), vt.kind, vt.elem_type, shape


class OrtValue:
    """A cort value (tensor, sequence, ...) as onnxruntime.OrtValue. CPU only."""

    def __init__(self, value, keep=None):
        self._value = value     # owned reference
        self._keep = keep       # numpy buffer a wrapped tensor points into

    def __del__(self, _release=lib.cort_value_release):
        v, self._value = getattr(self, "_value", None), None
        if v:
            _release(v)

    @staticmethod
    def ortvalue_from_numpy(numpy_obj, device_type="cpu", device_id=0):
        """Wraps the array without copying (as onnxruntime does for CPU); the OrtValue keeps it alive."""
        _check_device(device_type)
        ins = V.Inputs()
        v = ins.tensor(numpy_obj)
        ins.values = []  # ownership moves to the OrtValue
        return OrtValue(v, ins.keep)

    @staticmethod
    def ortvalue_from_shape_and_type(shape, element_type, device_type="cpu", device_id=0):
        _check_device(device_type)
        t = V.NUMPY_TO_CORT.get(np.dtype(element_type))
        if np.dtype(element_type) == np.dtype(object):
            t = V.T_STRING
        if t is None:
            raise InvalidArgument("cort: numpy type %s is not supported" % element_type)
        shp = (c_i64 * max(len(shape), 1))(*shape)
        out = c_p()
        check(lib.cort_tensor_create(t, shp, len(shape), ctypes.byref(out)))
        return OrtValue(out.value)

    @staticmethod
    def ortvalue_from_sequence(values, device_type="cpu", device_id=0):
        ins = V.Inputs()
        try:
            v = lib.cort_value_retain(ins.value(list(values), V.KIND_SEQUENCE))
            return OrtValue(v, ins.keep)
        finally:
            ins.release()

    def numpy(self):
        """Tensor -> ndarray sharing the value's memory; sequences -> list of ndarrays."""
        kind = lib.cort_value_kind(self._value)
        if kind == V.KIND_TENSOR and self._keep is not None and len(self._keep) == 1 \
                and isinstance(self._keep[0], np.ndarray) \
                and self._keep[0].dtype == V.CORT_TO_NUMPY.get(lib.cort_tensor_type(self._value)):
            return self._keep[0]
        return V.value_to_python(lib.cort_value_retain(self._value))

    def is_tensor(self):
        return lib.cort_value_kind(self._value) == V.KIND_TENSOR

    def is_tensor_sequence(self):
        return lib.cort_value_kind(self._value) == V.KIND_SEQUENCE

    def has_value(self):
        if lib.cort_value_kind(self._value) == V.KIND_OPTIONAL:
            return bool(lib.cort_optional_value(self._value))
        return True

    def shape(self):
        return list(V.tensor_shape(self._value)) if self.is_tensor() else []

    def element_type(self):
        """The ONNX element type (TensorProto.DataType integer), as onnxruntime returns it."""
        kind = lib.cort_value_kind(self._value)
        if kind == V.KIND_SEQUENCE:
            return int(lib.cort_sequence_elem_type(self._value))
        return int(lib.cort_tensor_type(self._value))

    def tensor_size_in_bytes(self):
        return int(lib.cort_tensor_bytes(self._value))

    @staticmethod
    def ortvalue_from_numpy_with_onnx_type(data, onnx_element_type):
        """Wraps an array's bytes as a tensor of the given ONNX element type (same element size)."""
        arr = np.ascontiguousarray(data)
        t = int(onnx_element_type)
        size = lib.cort_type_size(t)
        if not size or t == V.T_STRING or size != arr.dtype.itemsize:
            raise InvalidArgument("ortvalue_from_numpy_with_onnx_type: element type %d does not fit numpy %s"
                                  % (t, arr.dtype))
        shp = (c_i64 * max(arr.ndim, 1))(*arr.shape)
        out = c_p()
        check(lib.cort_tensor_wrap(arr.ctypes.data if arr.nbytes else None, arr.nbytes, t, shp, arr.ndim,
                                   ctypes.byref(out)))
        return OrtValue(out.value, [arr])

    def __array__(self, dtype=None, copy=None):
        arr = self.numpy()
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            return arr.astype(dtype)
        return np.array(arr, copy=True) if copy else arr

    # onnxruntime keeps a C-level value in ._ortvalue / _get_c_value(); cort's OrtValue is both
    @property
    def _ortvalue(self):
        return self

    def _get_c_value(self):
        return self

    def to_dlpack(self):
        from . import _dlpack
        return _dlpack.to_capsule(self._value)

    def __dlpack__(self, stream=None, **kwargs):
        return self.to_dlpack()

    def __dlpack_device__(self):
        return (1, 0)   # kDLCPU, device 0

    @staticmethod
    def from_dlpack(data, is_bool_tensor=False):
        """An OrtValue sharing the memory of a DLPack capsule or of an object with __dlpack__."""
        from . import _dlpack
        if hasattr(data, "__dlpack__"):
            is_bool_tensor = is_bool_tensor or (isinstance(data, OrtValue) and data.is_tensor()
                                                and lib.cort_tensor_type(data._value) == V.T_BOOL)
            data = data.__dlpack__()
        v, keeper = _dlpack.from_capsule(data, is_bool_tensor)
        return OrtValue(v, [keeper])

    @staticmethod
    def ort_value_from_sparse_tensor(sparse_tensor):
        ov = OrtValue(None)
        ov._sparse = sparse_tensor
        return ov

    def as_sparse_tensor(self):
        st = getattr(self, "_sparse", None)
        if st is None:
            raise InvalidArgument("this OrtValue does not hold a sparse tensor")
        return st

    def is_sparse_tensor(self):
        return getattr(self, "_sparse", None) is not None

    def data_type(self):
        kind = lib.cort_value_kind(self._value)
        elem = lib.cort_tensor_type(self._value) if kind == V.KIND_TENSOR else lib.cort_sequence_elem_type(self._value) \
            if kind == V.KIND_SEQUENCE else 0
        return V.type_string(kind, elem)

    def data_ptr(self):
        return lib.cort_tensor_data(self._value) or 0

    def device_name(self):
        return "cpu"


def _check_device(device_type, device_id=0):
    from ._devices import device_from_args
    device_from_args(device_type, device_id)


# ---- run_async bookkeeping: one C trampoline for the life of the process ----
_pending = {}
_pending_lock = threading.Lock()
_pending_idle = threading.Condition(_pending_lock)
_tokens = itertools.count(1)


def _on_run_done(user_data, status, outputs, n_outputs):
    with _pending_lock:
        job = _pending.get(user_data)
    results, err = [], ""
    try:
        exc = _lib.status_to_exception(status)
        if exc is not None:
            err = str(exc)
        owned = [outputs[i] for i in range(n_outputs)]
        for i, v in enumerate(owned):
            try:
                results.append(V.value_to_python(v, job["ranges"] if job else ()))
            except Exception as e:  # noqa: BLE001 - reported through err like onnxruntime
                for rest in owned[i + 1:]:
                    lib.cort_value_release(rest)
                results, err = [], str(e)
                break
        if job is not None:
            job["callback"](results, job["user_data"], err)
    except BaseException:  # an exception cannot cross into C: print it like an unraisable error
        traceback.print_exc()
    finally:
        # Dropped only now, after the user's callback: the job keeps the input arrays alive and
        # tells the atexit hook that Python code may still run on a cort thread.
        job = results = None
        with _pending_lock:
            _pending.pop(user_data, None)
            if not _pending:
                _pending_idle.notify_all()


_TRAMPOLINE = _lib.RUN_CALLBACK(_on_run_done)


@atexit.register
def _wait_for_async_runs():
    """Callbacks must not enter a dying interpreter: wait (bounded) for runs in flight."""
    with _pending_lock:
        _pending_idle.wait_for(lambda: not _pending, timeout=30)


def _normalize_providers(providers, provider_options):
    """[(onnxruntime name, options dict)] from onnxruntime's accepted spellings."""
    if providers is None:
        return []
    if provider_options is not None and len(provider_options) != len(providers):
        raise ValueError("'providers' and 'provider_options' should be the same length if both are given.")
    out = []
    for i, p in enumerate(providers):
        if isinstance(p, (tuple, list)):
            if len(p) != 2 or not isinstance(p[1], dict):
                raise ValueError("Provider %r: expected a (name, options dict) pair" % (p,))
            name, opts = p
        else:
            name, opts = p, (provider_options[i] if provider_options is not None else {})
        out.append((str(name), dict(opts or {})))
    return out


_KNOWN_ORT_PROVIDERS = {"CUDAExecutionProvider", "TensorrtExecutionProvider", "DmlExecutionProvider",
                        "OpenVINOExecutionProvider", "ROCMExecutionProvider", "CoreMLExecutionProvider",
                        "QNNExecutionProvider", "DnnlExecutionProvider", "NnapiExecutionProvider",
                        "CANNExecutionProvider", "AzureExecutionProvider", "WebGpuExecutionProvider",
                        "VitisAIExecutionProvider", "MIGraphXExecutionProvider", "ACLExecutionProvider",
                        "ArmNNExecutionProvider", "TvmExecutionProvider", "JsExecutionProvider"}
_CORT_TO_PROVIDER = {"cpu": "CPUExecutionProvider", "xnnpack": "XnnpackExecutionProvider",
                     "custom": "CPUExecutionProvider"}


class _EpAssignedNode:
    def __init__(self, name, op_type, domain):
        self.name, self.op_type, self.domain = name, op_type, domain


class _EpAssignedSubgraph:
    def __init__(self, ep_name, nodes):
        self.ep_name = ep_name
        self._nodes = nodes

    def get_nodes(self):
        return list(self._nodes)


class _CSession:
    """Owns one cort_session reference; passed to ctypes as the pointer (onnxruntime's sess._sess)."""

    def __init__(self, ptr):
        self._as_parameter_ = ptr

    def __bool__(self):
        return bool(self._as_parameter_)

    def __del__(self, _release=lib.cort_session_release):
        p, self._as_parameter_ = getattr(self, "_as_parameter_", None), None
        if p:
            _release(p)

    def run_with_iobinding(self, iobinding, run_options=None):
        iobinding._run(run_options)

    def run_with_ort_values(self, feed, output_names, run_options=None):
        """onnxruntime's C-level form: {name: OrtValue} -> OrtValueVector."""
        from .io_binding import OrtValueVector
        names = list(feed.keys())
        in_names = (ctypes.c_char_p * max(len(names), 1))(*[s(n) for n in names])
        in_values = (c_p * max(len(names), 1))(*[feed[n]._value for n in names])
        outs = list(output_names)
        out_names = (ctypes.c_char_p * max(len(outs), 1))(*[s(n) for n in outs])
        results = (c_p * max(len(outs), 1))()
        ro = run_options._ptr if run_options is not None else None
        check(lib.cort_session_run(self, ro, in_names, in_values, len(names), out_names, len(outs), results))
        return OrtValueVector(OrtValue(results[i]) for i in range(len(outs)))


class InferenceSession:
    """An ONNX model ready to run, with onnxruntime.InferenceSession's interface."""

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, **kwargs):
        self._sess = None
        self._sess_options = sess_options if sess_options is not None else SessionOptions()
        self._model_path = None
        self._model_bytes = None
        if hasattr(path_or_bytes, "SerializeToString"):
            path_or_bytes = path_or_bytes.SerializeToString()
        if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            self._model_bytes = bytes(path_or_bytes)
        elif isinstance(path_or_bytes, (str, os.PathLike)):
            self._model_path = os.fspath(path_or_bytes)
        else:
            raise TypeError("Unable to load from type '%s'" % type(path_or_bytes))
        self._create(providers, provider_options)
        if self._load_config_from_model():
            self._create(providers, provider_options)

    def _create(self, providers, provider_options):
        available = get_available_providers()
        chosen = []
        for name, opts in _normalize_providers(providers, provider_options):
            if name not in available:
                warnings.warn("Specified provider '%s' is not in available provider names."
                              "Available providers: '%s'" % (name, ", ".join(available)))
                continue
            if name != "CPUExecutionProvider" and all(n != name for n, _ in chosen):
                chosen.append((name, opts))
        cpu_opts = {}
        for name, opts in _normalize_providers(providers, provider_options):
            if name == "CPUExecutionProvider":
                cpu_opts = opts
        self._denotation_dims = self._dims_from_denotations()
        opts = self._sess_options._create([(_PROVIDER_TO_CORT[n], o) for n, o in chosen], self._denotation_dims)
        out = c_p()
        try:
            if self._model_bytes is not None:
                buf = ctypes.create_string_buffer(self._model_bytes, len(self._model_bytes))
                check(lib.cort_session_create_from_memory(buf, len(self._model_bytes), opts, ctypes.byref(out)))
            else:
                check(lib.cort_session_create(self._model_path.encode(sys.getfilesystemencoding(), "surrogateescape"),
                                              opts, ctypes.byref(out)))
        finally:
            lib.cort_session_options_free(opts)
        self._sess = _CSession(out.value)   # the previous one (set_providers) is released with its wrapper
        self._providers = [n for n, _ in chosen] + ["CPUExecutionProvider"]
        self._provider_options = {n: {k: str(v) for k, v in o.items()} for n, o in chosen}
        self._provider_options["CPUExecutionProvider"] = {k: str(v) for k, v in cpu_opts.items()}
        dims = dict(self._denotation_dims)
        dims.update(self._sess_options._dims)
        self._inputs = [_describe(self._sess, i, True, dims) for i in range(lib.cort_session_input_count(self._sess))]
        self._outputs = [_describe(self._sess, i, False, dims) for i in range(lib.cort_session_output_count(self._sess))]
        _log(1, self._sess_options.logid, "session created: %d inputs, %d outputs, providers %s"
             % (len(self._inputs), len(self._outputs), self._providers))
        self._input_decl = {name: (kind, elem) for name, kind, elem, _ in self._inputs}
        self._output_names = [o[0] for o in self._outputs]

    def __del__(self):
        self._sess = None   # runs in flight keep the C session alive until their callbacks return

    def _dims_from_denotations(self):
        """{dim_param: value} for add_free_dimension_override_by_denotation (needs the onnx package
        to read denotations, which cort's C API does not report)."""
        den = self._sess_options._denotations
        if not den:
            return {}
        try:
            import onnx
        except ImportError:
            warnings.warn("cort: free dimension overrides by denotation need the onnx package; ignored")
            return {}
        if self._model_bytes is not None:
            model = onnx.load_model_from_string(self._model_bytes)
        else:
            model = onnx.load(self._model_path, load_external_data=False)
        out = {}
        for vi in model.graph.input:
            for dim in vi.type.tensor_type.shape.dim:
                if dim.denotation in den and dim.dim_param:
                    out[dim.dim_param] = den[dim.denotation]
        return out

    def _load_config_from_model(self):
        """ORT_LOAD_CONFIG_FROM_MODEL=1: session options from the model's "ort_config" metadata
        (JSON {"session_options": {...}}), applied to a copy of the given options."""
        if os.environ.get("ORT_LOAD_CONFIG_FROM_MODEL") != "1" or not self._sess:
            return False
        raw = d(lib.cort_session_metadata(self._sess, b"metadata:ort_config"))
        if not raw:
            return False
        import copy
        import json
        cfg = json.loads(raw).get("session_options", {})
        so = copy.copy(self._sess_options)
        for key, value in cfg.items():
            if key == "graph_optimization_level":
                so.graph_optimization_level = GraphOptimizationLevel(int(value))
            elif key == "execution_mode":
                so.execution_mode = ExecutionMode(int(value))
            elif key in ("intra_op_num_threads", "inter_op_num_threads", "log_severity_level",
                         "log_verbosity_level"):
                setattr(so, key, int(value))
            elif key in ("enable_profiling", "enable_mem_pattern", "enable_cpu_mem_arena", "use_deterministic_compute"):
                setattr(so, key, bool(value))
            elif key in ("profile_file_prefix", "logid", "optimized_model_filepath"):
                setattr(so, key, str(value))
            else:
                raise InvalidArgument("ORT_LOAD_CONFIG_FROM_MODEL: unknown session option '%s'" % key)
        self._sess_options = so
        return True

    # ---- description ----
    def get_inputs(self):
        return [NodeArg(n, V.type_string(k, e), shp) for n, k, e, shp in self._inputs]

    def get_outputs(self):
        return [NodeArg(n, V.type_string(k, e), shp) for n, k, e, shp in self._outputs]

    def get_overridable_initializers(self):
        return []

    def get_modelmeta(self):
        def meta(key):
            return d(lib.cort_session_metadata(self._sess, s(key)))
        custom = {}
        if _lib.HAS_METADATA_KEYS:
            for i in range(lib.cort_session_metadata_count(self._sess)):
                key = d(lib.cort_session_metadata_key(self._sess, i))
                if key is not None:
                    custom[key] = meta("metadata:" + key) or ""
        version = int(lib.cort_session_model_version(self._sess)) if _lib.HAS_MODEL_VERSION else 0
        return ModelMetadata(meta("producer_name") or "", meta("graph_name") or "", meta("graph_doc_string") or "",
                             meta("domain") or "", meta("doc_string") or "", version, custom)

    def get_providers(self):
        return list(self._providers)

    def get_provider_options(self):
        return {k: dict(v) for k, v in self._provider_options.items()}

    def get_session_options(self):
        return self._sess_options

    def set_providers(self, providers=None, provider_options=None):
        """Re-creates the session with other providers (as onnxruntime does)."""
        from ._errors import Fail
        for name, _ in _normalize_providers(providers, provider_options):
            if name not in _ALL_PROVIDERS and name not in _KNOWN_ORT_PROVIDERS:
                raise Fail("Unknown Provider Type: %s" % name)
        self._create(providers, provider_options)

    def get_input_memory_infos(self):
        from ._devices import cpu_memory_info
        return [cpu_memory_info() for _ in self._inputs]

    def get_output_memory_infos(self):
        from ._devices import cpu_memory_info
        return [cpu_memory_info() for _ in self._outputs]

    def get_input_epdevices(self):
        return [None for _ in self._inputs]

    def get_provider_graph_assignment_info(self):
        """The nodes of the execution plan by provider: one entry per node (cort does not group
        nodes into compiled subgraphs), each with ep_name and get_nodes(). Needs the session config
        entry session.record_ep_graph_assignment_info = 1, as in onnxruntime."""
        from ._errors import Fail
        if self._sess_options._config.get("session.record_ep_graph_assignment_info") != "1":
            raise Fail("Session configuration entry 'session.record_ep_graph_assignment_info' must be set to \"1\" "
                       "to retrieve EP graph assignment information.")
        out = []
        for i in range(lib.cort_session_node_count(self._sess)):
            name, op_type, provider = c_str(), c_str(), c_str()
            check(lib.cort_session_node_info(self._sess, i, ctypes.byref(name), ctypes.byref(op_type),
                                             ctypes.byref(provider)))
            prov = d(provider.value)
            if prov == "folded":
                continue
            out.append(_EpAssignedSubgraph(_CORT_TO_PROVIDER.get(prov, prov),
                                           [_EpAssignedNode(d(name.value) or "", d(op_type.value) or "", "")]))
        return out

    def disable_fallback(self):
        pass

    def enable_fallback(self):
        pass

    def end_profiling(self):
        """Writes the profile (ONNX Runtime's chrome-trace JSON) and returns its file name ('' if
        profiling is off)."""
        name = c_str()
        check(lib.cort_session_end_profiling(self._sess, ctypes.byref(name)))
        return d(name.value) or ""

    def get_profiling_start_time_ns(self):
        return int(lib.cort_session_profiling_start_ns(self._sess))

    def io_binding(self):
        from .io_binding import IOBinding
        return IOBinding(self)

    def run_with_iobinding(self, iobinding, run_options=None):
        """Runs with the inputs and outputs bound in iobinding (an IOBinding from io_binding())."""
        self._sess.run_with_iobinding(iobinding._iobinding, run_options)

    # ---- running ----
    def _prepare(self, output_names, input_feed, run_options):
        if not hasattr(input_feed, "items"):
            raise TypeError("input_feed must be a dict of input name -> value")
        if run_options is not None and not isinstance(run_options, RunOptions):
            raise TypeError("run_options must be a cort.RunOptions")
        names = list(output_names) if output_names else list(self._output_names)
        missing = [n for n, _, _, _ in self._inputs if n not in input_feed]
        if missing:
            raise ValueError("Required inputs (%s) are missing from input feed (%s)." % (missing, list(input_feed)))
        ins = V.Inputs()
        try:
            in_names, in_values = [], []
            for name, obj in input_feed.items():
                kind, elem = self._input_decl.get(name, (V.KIND_UNKNOWN, 0))
                in_values.append(ins.value(obj, kind, elem))
                in_names.append(s(name))
        except BaseException:
            ins.release()
            raise
        c_in_names = (ctypes.c_char_p * max(len(in_names), 1))(*in_names)
        c_in_values = (c_p * max(len(in_values), 1))(*in_values)
        c_out_names = (ctypes.c_char_p * max(len(names), 1))(*[s(n) for n in names])
        return ins, c_in_names, c_in_values, len(in_names), c_out_names, len(names)

    def run(self, output_names, input_feed, run_options=None):
        """Runs the model; returns a list with one entry per requested output (all if output_names
        is None or empty). The GIL is released while cort computes."""
        ins, in_names, in_values, n_in, out_names, n_out = self._prepare(output_names, input_feed, run_options)
        outputs = (c_p * max(n_out, 1))()
        ro = run_options._ptr if run_options is not None else None
        try:
            check(lib.cort_session_run(self._sess, ro, in_names, in_values, n_in, out_names, n_out, outputs))
        finally:
            ins.release()
        owned = [outputs[i] for i in range(n_out)]
        results = []
        try:
            for i, v in enumerate(owned):
                owned[i] = None
                results.append(V.value_to_python(v, ins.ranges))
        finally:
            for v in owned:
                if v:
                    lib.cort_value_release(v)
        return results

    def run_with_ort_values(self, output_names, input_dict_ort_values, run_options=None):
        ins, in_names, in_values, n_in, out_names, n_out = self._prepare(output_names, input_dict_ort_values,
                                                                         run_options)
        outputs = (c_p * max(n_out, 1))()
        ro = run_options._ptr if run_options is not None else None
        try:
            check(lib.cort_session_run(self._sess, ro, in_names, in_values, n_in, out_names, n_out, outputs))
        finally:
            ins.release()
        return [OrtValue(outputs[i]) for i in range(n_out)]

    def run_async(self, output_names, input_feed, callback, user_data=None, run_options=None):
        """Starts a run and returns at once; callback(results, user_data, err) is called on a cort
        thread, with err == '' on success (results: list as run() returns) or cort's message."""
        if not callable(callback):
            raise TypeError("callback must be callable")
        ins, in_names, in_values, n_in, out_names, n_out = self._prepare(output_names, input_feed, run_options)
        token = next(_tokens)
        # The job keeps the caller's arrays (wrapped without copy) alive until the callback has run.
        job = {"callback": callback, "user_data": user_data, "keep": ins.keep, "ranges": ins.ranges}
        with _pending_lock:
            _pending[token] = job
        ro = run_options._ptr if run_options is not None else None
        try:
            st = lib.cort_session_run_async(self._sess, ro, in_names, in_values, n_in, out_names, n_out, None,
                                            _TRAMPOLINE, token)
        finally:
            ins.release()   # the run holds its own references
        if st:
            with _pending_lock:
                _pending.pop(token, None)
            check(st)
