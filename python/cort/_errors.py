"""Exception classes named as in onnxruntime.capi.onnxruntime_pybind11_state.

Every cort error derives from cort.Error (a RuntimeError); the class says the kind and str(e) is
cort's message. `e.code` is cort's code name, e.g. "INVALID_ARGUMENT".
"""


class Error(RuntimeError):
    """Base class of every error reported by libcort."""
    code = "FAIL"


class Fail(Error):
    code = "FAIL"


class InvalidArgument(Error):
    code = "INVALID_ARGUMENT"


class NoSuchFile(Error):
    code = "NO_SUCHFILE"


class NoModel(Error):
    code = "NO_MODEL"


class EngineError(Error):
    code = "ENGINE_ERROR"


class RuntimeException(Error):
    code = "RUNTIME_EXCEPTION"


class InvalidProtobuf(Error):
    code = "INVALID_PROTOBUF"


class ModelLoaded(Error):
    code = "MODEL_LOADED"


class NotImplemented(Error):  # noqa: A001 - the name onnxruntime uses
    code = "NOT_IMPLEMENTED"


class InvalidGraph(Error):
    code = "INVALID_GRAPH"


class EPFail(Error):
    code = "EP_FAIL"


# cort_code -> (class, cort code name)
_BY_CODE = {
    1: (InvalidArgument, "INVALID_ARGUMENT"),
    2: (InvalidGraph, "INVALID_MODEL"),
    3: (NotImplemented, "NOT_IMPLEMENTED"),
    4: (Fail, "OUT_OF_MEMORY"),
    5: (NoSuchFile, "IO"),
    6: (Fail, "CANCELLED"),
    7: (RuntimeException, "RUNTIME"),
}


def raise_for_code(code, message):
    cls, name = _BY_CODE.get(code, (Fail, "UNKNOWN(%d)" % code))
    err = cls(message)
    err.code = name
    raise err
