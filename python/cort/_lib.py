"""Loading libcort and declaring the C prototypes (ctypes).

Lookup order: $CORT_LIBRARY, the build tree (<repo>/build/lib/libcort.so when the package is used
from python/ in the source tree), the path recorded by install.sh (_libpath.py) or a libcort.so next
to the package, then the system loader (ctypes.util.find_library('cort')).
"""
import ctypes
import ctypes.util
import os

from ._errors import raise_for_code

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))


def _candidates():
    env = os.environ.get("CORT_LIBRARY")
    if env:
        # An explicit choice is never silently replaced by another library.
        return [env], True
    paths = [os.path.join(os.path.dirname(os.path.dirname(_PKG_DIR)), "build", "lib", "libcort.so")]
    try:
        from . import _libpath  # written by python/install.sh
        paths.append(_libpath.LIBRARY)
    except ImportError:
        pass
    paths += [os.path.join(_PKG_DIR, "libcort.so"), os.path.join(_PKG_DIR, "libcort.so.0")]
    found = ctypes.util.find_library("cort")
    if found:
        paths.append(found)
    return paths, False


def _load():
    paths, explicit = _candidates()
    errors = []
    for p in paths:
        if not explicit and os.path.sep in p and not os.path.exists(p):
            continue
        try:
            return ctypes.CDLL(p), p
        except OSError as e:
            errors.append("%s: %s" % (p, e))
    raise ImportError("cort: cannot load libcort.so (set CORT_LIBRARY, build with `make`, or install it); tried: "
                      + ("; ".join(errors) if errors else ", ".join(paths)))


lib, LIBRARY_PATH = _load()

c_status_p = ctypes.c_void_p
c_p = ctypes.c_void_p
c_str = ctypes.c_char_p
c_size = ctypes.c_size_t
c_int = ctypes.c_int
c_i64 = ctypes.c_int64


class ValueType(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("elem_type", ctypes.c_int), ("rank", ctypes.c_int)]


class AllocatorStats(ctypes.Structure):
    _fields_ = [("bytes_in_use", ctypes.c_size_t), ("peak_bytes", ctypes.c_size_t), ("allocations", ctypes.c_size_t)]


# void (*)(void *user_data, cort_status *status, cort_value **outputs, size_t n_outputs)
RUN_CALLBACK = ctypes.CFUNCTYPE(None, c_p, c_p, ctypes.POINTER(c_p), c_size)

_PROTOS = {
    "cort_version": (c_str, []),
    "cort_cpu_describe": (c_status_p, [ctypes.c_char_p, c_size, ctypes.POINTER(c_size)]),
    "cort_status_code": (c_int, [c_p]),
    "cort_status_message": (c_str, [c_p]),
    "cort_status_free": (None, [c_p]),
    "cort_code_name": (c_str, [c_int]),
    "cort_type_size": (c_size, [c_int]),
    "cort_type_name": (c_str, [c_int]),
    "cort_session_options_create": (c_status_p, [ctypes.POINTER(c_p)]),
    "cort_session_options_free": (None, [c_p]),
    "cort_session_options_set_threads": (c_status_p, [c_p, c_int]),
    "cort_session_options_set_optimization_level": (c_status_p, [c_p, c_int]),
    "cort_session_options_append_provider": (c_status_p, [c_p, c_str, ctypes.POINTER(c_str), ctypes.POINTER(c_str), c_size]),
    "cort_session_options_set_dim": (c_status_p, [c_p, c_str, c_i64]),
    "cort_session_options_set_max_tensor_bytes": (c_status_p, [c_p, ctypes.c_uint64]),
    "cort_session_options_set_fold_budget": (c_status_p, [c_p, ctypes.c_uint64]),
    "cort_session_options_load_custom_op_library": (c_status_p, [c_p, c_str]),
    "cort_session_options_set_spinning": (c_status_p, [c_p, c_int]),
    "cort_prepacked_weights_create": (c_status_p, [ctypes.POINTER(c_p)]),
    "cort_prepacked_weights_release": (None, [c_p]),
    "cort_prepacked_weights_count": (c_size, [c_p]),
    "cort_prepacked_weights_bytes": (ctypes.c_uint64, [c_p]),
    "cort_session_options_set_prepacked_weights": (c_status_p, [c_p, c_p]),
    "cort_session_create": (c_status_p, [c_str, c_p, ctypes.POINTER(c_p)]),
    "cort_session_create_from_memory": (c_status_p, [c_p, c_size, c_p, ctypes.POINTER(c_p)]),
    "cort_session_retain": (c_p, [c_p]),
    "cort_session_release": (None, [c_p]),
    "cort_session_input_count": (c_size, [c_p]),
    "cort_session_output_count": (c_size, [c_p]),
    "cort_session_input_name": (c_str, [c_p, c_size]),
    "cort_session_output_name": (c_str, [c_p, c_size]),
    "cort_session_input_type": (c_status_p, [c_p, c_size, ctypes.POINTER(ValueType), ctypes.POINTER(c_i64), c_size]),
    "cort_session_output_type": (c_status_p, [c_p, c_size, ctypes.POINTER(ValueType), ctypes.POINTER(c_i64), c_size]),
    "cort_session_input_dim_name": (c_str, [c_p, c_size, c_size]),
    "cort_session_output_dim_name": (c_str, [c_p, c_size, c_size]),
    "cort_session_metadata": (c_str, [c_p, c_str]),
    "cort_session_ir_version": (c_i64, [c_p]),
    "cort_session_opset": (c_i64, [c_p, c_str]),
    "cort_tensor_create": (c_status_p, [c_int, ctypes.POINTER(c_i64), c_size, ctypes.POINTER(c_p)]),
    "cort_tensor_wrap": (c_status_p, [c_p, c_size, c_int, ctypes.POINTER(c_i64), c_size, ctypes.POINTER(c_p)]),
    "cort_tensor_data": (c_p, [c_p]),
    "cort_tensor_type": (c_int, [c_p]),
    "cort_tensor_rank": (c_size, [c_p]),
    "cort_tensor_shape": (ctypes.POINTER(c_i64), [c_p]),
    "cort_tensor_element_count": (c_size, [c_p]),
    "cort_tensor_bytes": (c_size, [c_p]),
    "cort_tensor_set_string": (c_status_p, [c_p, c_size, c_str]),
    "cort_value_retain": (c_p, [c_p]),
    "cort_value_release": (None, [c_p]),
    "cort_value_kind": (c_int, [c_p]),
    "cort_sequence_create": (c_status_p, [c_int, ctypes.POINTER(c_p), c_size, ctypes.POINTER(c_p)]),
    "cort_sequence_length": (c_size, [c_p]),
    "cort_sequence_at": (c_p, [c_p, c_size]),
    "cort_sequence_elem_type": (c_int, [c_p]),
    "cort_optional_create": (c_status_p, [c_p, c_int, c_int, ctypes.POINTER(c_p)]),
    "cort_optional_value": (c_p, [c_p]),
    "cort_map_create": (c_status_p, [c_p, c_p, ctypes.POINTER(c_p)]),
    "cort_map_keys": (c_p, [c_p]),
    "cort_map_values": (c_p, [c_p]),
    "cort_run_options_create": (c_status_p, [ctypes.POINTER(c_p)]),
    "cort_run_options_free": (None, [c_p]),
    "cort_run_options_set_terminate": (None, [c_p, c_int]),
    "cort_session_run": (c_status_p, [c_p, c_p, ctypes.POINTER(c_str), ctypes.POINTER(c_p), c_size,
                                      ctypes.POINTER(c_str), c_size, ctypes.POINTER(c_p)]),
    "cort_session_run_async": (c_status_p, [c_p, c_p, ctypes.POINTER(c_str), ctypes.POINTER(c_p), c_size,
                                            ctypes.POINTER(c_str), c_size, ctypes.POINTER(c_p), RUN_CALLBACK, c_p]),
    "cort_allocator_get_stats": (c_status_p, [ctypes.POINTER(AllocatorStats)]),
    "cort_session_allocator": (c_p, [c_p, c_str]),
    "cort_session_options_set_profile_file": (c_status_p, [c_p, c_int, c_str]),
    "cort_session_options_add_initializer": (c_status_p, [c_p, c_str, c_p]),
    "cort_session_options_add_external_data": (c_status_p, [c_p, c_str, c_p, c_size]),
    "cort_session_options_set_optimized_model_path": (c_status_p, [c_p, c_str]),
    "cort_session_options_set_optimized_model_external_data": (c_status_p, [c_p, c_str, ctypes.c_uint64]),
    "cort_session_end_profiling": (c_status_p, [c_p, ctypes.POINTER(c_str)]),
    "cort_session_profiling_start_ns": (c_i64, [c_p]),
    "cort_session_node_count": (c_size, [c_p]),
    "cort_session_node_info": (c_status_p, [c_p, c_size, ctypes.POINTER(c_str), ctypes.POINTER(c_str),
                                            ctypes.POINTER(c_str)]),
    "cort_io_binding_create": (c_status_p, [c_p, ctypes.POINTER(c_p)]),
    "cort_io_binding_free": (None, [c_p]),
    "cort_io_binding_bind_input": (c_status_p, [c_p, c_str, c_p]),
    "cort_io_binding_bind_output": (c_status_p, [c_p, c_str, c_p]),
    "cort_io_binding_clear_inputs": (None, [c_p]),
    "cort_io_binding_clear_outputs": (None, [c_p]),
    "cort_io_binding_run": (c_status_p, [c_p, c_p]),
    "cort_io_binding_output_count": (c_size, [c_p]),
    "cort_io_binding_output_name": (c_str, [c_p, c_size]),
    "cort_io_binding_output": (c_p, [c_p, c_size]),
}

for _name, (_res, _args) in _PROTOS.items():
    _f = getattr(lib, _name)
    _f.restype = _res
    _f.argtypes = _args

# Optional entry points that newer libraries may export (see docs/python.md).
HAS_METADATA_KEYS = hasattr(lib, "cort_session_metadata_count") and hasattr(lib, "cort_session_metadata_key")
HAS_MODEL_VERSION = hasattr(lib, "cort_session_model_version")
if HAS_MODEL_VERSION:
    lib.cort_session_model_version.restype = ctypes.c_int64
    lib.cort_session_model_version.argtypes = [c_p]
if HAS_METADATA_KEYS:
    lib.cort_session_metadata_count.restype = c_size
    lib.cort_session_metadata_count.argtypes = [c_p]
    lib.cort_session_metadata_key.restype = c_str
    lib.cort_session_metadata_key.argtypes = [c_p, c_size]

CODE_NOT_IMPLEMENTED = 3


def check(status):
    """Raises the exception matching a non-NULL cort_status (and frees it)."""
    if status:
        code = lib.cort_status_code(status)
        msg = (lib.cort_status_message(status) or b"").decode("utf-8", "replace")
        lib.cort_status_free(status)
        raise_for_code(code, msg)


def status_to_exception(status):
    """Exception object for a status (freed); None for NULL."""
    try:
        check(status)
    except Exception as e:  # noqa: BLE001 - converting, not swallowing
        return e
    return None


def s(text):
    return text.encode("utf-8") if isinstance(text, str) else text


def d(raw):
    return None if raw is None else raw.decode("utf-8", "replace")
