"""cort: an ONNX inference runtime, with onnxruntime's Python API (`import cort as ort`)."""
from ._errors import Error  # noqa: F401
from ._lib import LIBRARY_PATH as _LIBRARY_PATH, lib as _lib_handle
from .session import (InferenceSession, SessionOptions, RunOptions, NodeArg, ModelMetadata, OrtValue,  # noqa: F401
                      GraphOptimizationLevel, ExecutionMode, ExecutionOrder, get_available_providers,
                      get_all_providers, get_device, get_version_string, get_build_info,
                      set_default_logger_severity, set_default_logger_verbosity, get_allocator_stats)
from . import capi  # noqa: F401
from .capi import onnxruntime_pybind11_state  # noqa: F401

__version__ = _lib_handle.cort_version().decode()
