"""onnxruntime.capi._pybind_state re-exports the pybind11 module; so does this."""
from .onnxruntime_pybind11_state import *  # noqa: F401,F403
from .onnxruntime_pybind11_state import NotImplemented  # noqa: F401 - not picked up by *
