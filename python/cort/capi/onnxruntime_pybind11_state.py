"""Same names as onnxruntime.capi.onnxruntime_pybind11_state, so `except ...Fail` code keeps working."""
from .._errors import (Error, Fail, InvalidArgument, NoSuchFile, NoModel, EngineError, RuntimeException,  # noqa: F401
                       InvalidProtobuf, ModelLoaded, NotImplemented, InvalidGraph, EPFail)
from ..session import (InferenceSession, SessionOptions, RunOptions, NodeArg, ModelMetadata, OrtValue,  # noqa: F401
                       GraphOptimizationLevel, ExecutionMode, ExecutionOrder, get_available_providers,
                       get_all_providers, get_device)
from .._devices import (OrtDevice, OrtMemoryInfo, OrtAllocatorType, OrtMemType, OrtDeviceMemoryType,  # noqa: F401
                        OrtArenaCfg, create_and_register_allocator, create_and_register_allocator_v2)
from ..io_binding import SessionIOBinding, OrtValueVector  # noqa: F401
from .._devices import OrtDeviceVendorId, OrtMemoryInfoDeviceType  # noqa: F401
from .._sparse import SparseTensor, OrtSparseFormat  # noqa: F401
from ..session import (set_default_logger_callback, set_default_logger_severity,  # noqa: F401
                       set_default_logger_verbosity, enable_telemetry_events, disable_telemetry_events)


def is_dlpack_uint8_tensor(capsule):
    from .._dlpack import is_uint8
    return is_uint8(capsule)


def get_default_session_options():
    return SessionOptions()
