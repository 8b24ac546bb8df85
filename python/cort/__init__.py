"""cort: an ONNX inference runtime, with onnxruntime's Python API (`import cort as ort`)."""
from ._errors import Error
from ._lib import LIBRARY_PATH as _LIBRARY_PATH, lib as _lib_handle
from .session import PrepackedWeights
from .session import (InferenceSession, SessionOptions, RunOptions, NodeArg, ModelMetadata, OrtValue,
                      GraphOptimizationLevel, ExecutionMode, ExecutionOrder, get_available_providers,
                      get_all_providers, get_device, get_version_string, get_build_info,
                      set_default_logger_severity, set_default_logger_verbosity, get_allocator_stats, get_cpu_info)
from ._devices import (OrtDevice, OrtMemoryInfo, OrtAllocatorType, OrtMemType, OrtDeviceMemoryType, OrtArenaCfg,
                       create_and_register_allocator, create_and_register_allocator_v2)
from ._devices import OrtDeviceVendorId, OrtMemoryInfoDeviceType
from .io_binding import IOBinding, SessionIOBinding, OrtValueVector
from ._sparse import SparseTensor, OrtSparseFormat
from .session import (set_default_logger_callback, enable_telemetry_events, disable_telemetry_events)
from . import capi
from .capi import onnxruntime_pybind11_state

__version__ = _lib_handle.cort_version().decode()

__all__ = ["Error", "InferenceSession", "SessionOptions", "RunOptions", "PrepackedWeights", "NodeArg", "ModelMetadata", "OrtValue",
           "GraphOptimizationLevel", "ExecutionMode", "ExecutionOrder", "get_available_providers",
           "get_all_providers", "get_device", "get_version_string", "get_build_info", "set_default_logger_severity",
           "set_default_logger_verbosity", "get_allocator_stats", "get_cpu_info", "capi", "onnxruntime_pybind11_state",
           "__version__", "_LIBRARY_PATH", "OrtDevice", "OrtMemoryInfo", "OrtAllocatorType", "OrtMemType",
           "OrtDeviceMemoryType", "OrtArenaCfg", "create_and_register_allocator", "create_and_register_allocator_v2",
           "IOBinding", "SessionIOBinding", "OrtValueVector", "OrtDeviceVendorId", "OrtMemoryInfoDeviceType",
           "SparseTensor", "OrtSparseFormat", "set_default_logger_callback", "enable_telemetry_events",
           "disable_telemetry_events"]
