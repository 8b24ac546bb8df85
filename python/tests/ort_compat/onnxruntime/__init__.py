"""A one-file stand-in for the onnxruntime package that runs everything on cort: code written for
onnxruntime (its own Python tests included) switches by putting this folder first on sys.path."""
import sys

from cort import *  # noqa: F401,F403
from cort import __version__  # noqa: F401
import cort
import cort.backend
import cort.capi
import cort.capi._pybind_state
import cort.capi.onnxruntime_pybind11_state
import cort.capi.onnxruntime_inference_collection

capi = cort.capi
backend = cort.backend
for _name, _mod in (("capi", cort.capi), ("capi._pybind_state", cort.capi._pybind_state),
                    ("capi.onnxruntime_pybind11_state", cort.capi.onnxruntime_pybind11_state),
                    ("capi.onnxruntime_inference_collection", cort.capi.onnxruntime_inference_collection),
                    ("backend", cort.backend)):
    sys.modules[__name__ + "." + _name] = _mod
