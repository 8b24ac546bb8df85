"""Conversions between Python/numpy objects and cort_value references.

Inputs: C-contiguous, aligned, native-endian arrays of the right dtype are wrapped without a copy
(cort_tensor_wrap); the caller keeps the arrays referenced until the run is over.
Outputs: numeric tensors become numpy arrays over cort's buffer; the array's base is a _CortBuffer
that owns exactly one cort_value reference and releases it when the array (and every view of it) is
gone. String tensors are copied into object arrays of str.
"""
import ctypes

import numpy as np

from . import _lib
from ._lib import lib, check, c_p, c_i64

KIND_UNKNOWN, KIND_TENSOR, KIND_SEQUENCE, KIND_OPTIONAL, KIND_MAP = 0, 1, 2, 3, 4

T_FLOAT, T_UINT8, T_INT8, T_UINT16, T_INT16, T_INT32, T_INT64, T_STRING, T_BOOL = 1, 2, 3, 4, 5, 6, 7, 8, 9
T_FLOAT16, T_DOUBLE, T_UINT32, T_UINT64, T_COMPLEX64, T_COMPLEX128, T_BFLOAT16 = 10, 11, 12, 13, 14, 15, 16
T_FLOAT8E4M3FN, T_FLOAT8E4M3FNUZ, T_FLOAT8E5M2, T_FLOAT8E5M2FNUZ = 17, 18, 19, 20
T_UINT4, T_INT4, T_FLOAT4E2M1, T_FLOAT8E8M0, T_UINT2, T_INT2 = 21, 22, 23, 24, 25, 26

# Types numpy has no dtype for, exchanged as one byte per element (cort's in-memory form, also
# ml_dtypes' itemsize): float8/float4e2m1/float8e8m0 as uint8 bit patterns (float4e2m1 in the low 4
# bits), uint4/uint2 as uint8 values, int4/int2 as int8 values. Packed forms exist only in files.
SMALL_FLOATS = (T_FLOAT8E4M3FN, T_FLOAT8E4M3FNUZ, T_FLOAT8E5M2, T_FLOAT8E5M2FNUZ, T_FLOAT4E2M1, T_FLOAT8E8M0)
SMALL_INT_RANGE = {T_UINT4: (0, 15), T_INT4: (-8, 7), T_UINT2: (0, 3), T_INT2: (-2, 1)}

# cort_type -> numpy dtype (bfloat16 has no numpy dtype: its raw bits are exposed as uint16)
CORT_TO_NUMPY = {
    T_FLOAT: np.dtype(np.float32), T_UINT8: np.dtype(np.uint8), T_INT8: np.dtype(np.int8),
    T_UINT16: np.dtype(np.uint16), T_INT16: np.dtype(np.int16), T_INT32: np.dtype(np.int32),
    T_INT64: np.dtype(np.int64), T_STRING: np.dtype(object), T_BOOL: np.dtype(np.bool_),
    T_FLOAT16: np.dtype(np.float16), T_DOUBLE: np.dtype(np.float64), T_UINT32: np.dtype(np.uint32),
    T_UINT64: np.dtype(np.uint64), T_COMPLEX64: np.dtype(np.complex64), T_COMPLEX128: np.dtype(np.complex128),
    T_BFLOAT16: np.dtype(np.uint16),
    T_UINT4: np.dtype(np.uint8), T_INT4: np.dtype(np.int8), T_UINT2: np.dtype(np.uint8), T_INT2: np.dtype(np.int8),
}
CORT_TO_NUMPY.update({t: np.dtype(np.uint8) for t in SMALL_FLOATS})
NUMPY_TO_CORT = {dt: t for t, dt in CORT_TO_NUMPY.items() if t <= T_BFLOAT16 and t not in (T_STRING, T_BFLOAT16)}


def type_name(t):
    return _lib.d(lib.cort_type_name(t))


def type_string(kind, elem):
    """ONNX Runtime's spelling of a value type, e.g. 'tensor(float)', 'seq(tensor(int64))'."""
    tensor = "tensor(%s)" % type_name(elem)
    if kind == KIND_TENSOR:
        return tensor
    if kind == KIND_SEQUENCE:
        return "seq(%s)" % tensor
    if kind == KIND_OPTIONAL:
        return "optional(%s)" % tensor
    if kind == KIND_MAP:
        return "map(%s)" % tensor
    return "unknown"


def _release(v, _release_fn=lib.cort_value_release):
    if v:
        _release_fn(v)


class _CortBuffer:
    """Owns one cort_value reference and exposes its tensor data to numpy (the array's base)."""
    __slots__ = ("_value", "__array_interface__", "__weakref__")

    def __init__(self, value, ptr, shape, dtype):
        self._value = value
        self.__array_interface__ = {"version": 3, "shape": tuple(shape), "typestr": dtype.str,
                                    "data": (ptr, False)}

    @property
    def value(self):
        """The owned cort_value* (an int); None once released."""
        return self._value

    def __del__(self, _release_fn=lib.cort_value_release):
        v, self._value = self._value, None
        if v:
            _release_fn(v)


def tensor_shape(v):
    rank = lib.cort_tensor_rank(v)
    shp = lib.cort_tensor_shape(v)
    return tuple(shp[i] for i in range(rank))


def tensor_to_numpy(v, copy_ranges=()):
    """Consumes the reference v (a tensor) and returns an ndarray."""
    try:
        t = lib.cort_tensor_type(v)
        shape = tensor_shape(v)
        dtype = CORT_TO_NUMPY.get(t)
        if dtype is None:
            raise _not_implemented("cort: output element type %s has no numpy equivalent" % type_name(t))
        n = lib.cort_tensor_element_count(v)
        ptr = lib.cort_tensor_data(v)
        if t == T_STRING:
            out = np.empty(n, dtype=object)
            if n:
                strs = ctypes.cast(ptr, ctypes.POINTER(ctypes.c_char_p))
                for i in range(n):
                    out[i] = (strs[i] or b"").decode("utf-8", "surrogateescape")
            return out.reshape(shape)
        if n == 0 or not ptr:
            return np.zeros(shape, dtype=dtype)
        nbytes = lib.cort_tensor_bytes(v)
        if any(lo <= ptr < hi or lo < ptr + nbytes <= hi for lo, hi in copy_ranges):
            # The output is (a view of) a caller's input buffer: hand back an independent array.
            src = np.ctypeslib.as_array((ctypes.c_char * nbytes).from_address(ptr))
            return src.view(dtype).reshape(shape).copy()
    except BaseException:
        _release(v)
        raise
    owner = _CortBuffer(v, ptr, shape, dtype)
    return np.asarray(owner)


def _not_implemented(msg):
    from ._errors import NotImplemented as NI
    e = NI(msg)
    e.code = "NOT_IMPLEMENTED"
    return e


def value_to_python(v, copy_ranges=()):
    """Consumes the reference v: tensor -> ndarray, sequence -> list, optional -> None or contents,
    map -> dict."""
    kind = lib.cort_value_kind(v)
    if kind == KIND_TENSOR:
        return tensor_to_numpy(v, copy_ranges)
    try:
        if kind == KIND_SEQUENCE:
            items = []
            for i in range(lib.cort_sequence_length(v)):
                items.append(value_to_python(lib.cort_value_retain(lib.cort_sequence_at(v, i)), copy_ranges))
            return items
        if kind == KIND_OPTIONAL:
            c = lib.cort_optional_value(v)
            return None if not c else value_to_python(lib.cort_value_retain(c), copy_ranges)
        if kind == KIND_MAP:
            keys = value_to_python(lib.cort_value_retain(lib.cort_map_keys(v)), copy_ranges)
            vals = value_to_python(lib.cort_value_retain(lib.cort_map_values(v)), copy_ranges)
            keys = keys.tolist() if isinstance(keys, np.ndarray) else list(keys)
            vals = list(vals) if not isinstance(vals, np.ndarray) else vals.tolist()
            return dict(zip(keys, vals))
        raise _not_implemented("cort: output value of unknown kind %d" % kind)
    finally:
        _release(v)


class Inputs:
    """Holds the cort_value references and the Python buffers behind a run's inputs."""

    def __init__(self):
        self.values = []      # cort_value* we own, released by release()
        self.keep = []        # arrays / ctypes buffers that wrapped values point into
        self.ranges = []      # (start, end) of wrapped caller buffers

    def release(self):
        vals, self.values = self.values, []
        for v in vals:
            _release(v)

    def _own(self, v):
        self.values.append(v)
        return v

    def tensor(self, obj, want_type=0):
        """New cort tensor reference for obj (owned by self)."""
        if isinstance(obj, np.ndarray):
            arr = obj
        else:
            from .session import OrtValue
            if isinstance(obj, OrtValue):
                return self._own(lib.cort_value_retain(obj._value))
            if want_type in SMALL_FLOATS:
                raise _invalid("cort: a %s input must be a numpy uint8 array of bit patterns (see docs/python.md)"
                               % type_name(want_type))
            dtype = CORT_TO_NUMPY.get(want_type) if want_type not in (T_STRING, T_BFLOAT16) else None
            if want_type == T_STRING:
                dtype = object
            arr = np.asarray(obj, dtype=dtype)
        if arr.dtype.kind in "OUS":
            return self._strings(arr)
        t = NUMPY_TO_CORT.get(arr.dtype if arr.dtype.isnative else arr.dtype.newbyteorder("="))
        if t is None:
            raise _invalid("cort: numpy dtype %s is not supported" % arr.dtype)
        if t == T_UINT16 and want_type == T_BFLOAT16:
            t = T_BFLOAT16   # bfloat16 travels as its raw uint16 bits
        elif want_type in SMALL_FLOATS and t == T_UINT8:
            if want_type == T_FLOAT4E2M1 and arr.size and int(arr.max()) > 15:
                raise _invalid("cort: float4e2m1 bit patterns must be 0..15, got %d" % int(arr.max()))
            t = want_type
        elif want_type in SMALL_INT_RANGE and t in (T_UINT8, T_INT8):
            lo, hi = SMALL_INT_RANGE[want_type]
            if arr.size and (int(arr.min()) < lo or int(arr.max()) > hi):
                raise _invalid("cort: %s values must be in [%d, %d], got [%d, %d]"
                               % (type_name(want_type), lo, hi, int(arr.min()), int(arr.max())))
            if arr.dtype != CORT_TO_NUMPY[want_type]:
                arr = arr.astype(CORT_TO_NUMPY[want_type])
            t = want_type
        if not (arr.flags.c_contiguous and arr.flags.aligned and arr.dtype.isnative):
            arr = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("="))
        shape = (c_i64 * max(arr.ndim, 1))(*arr.shape)
        out = c_p()
        ptr = arr.ctypes.data if arr.nbytes else None
        check(lib.cort_tensor_wrap(ptr, arr.nbytes, t, shape, arr.ndim, ctypes.byref(out)))
        self.keep.append(arr)
        if arr.nbytes:
            self.ranges.append((ptr, ptr + arr.nbytes))
        return self._own(out.value)

    def _strings(self, arr):
        flat = arr.reshape(-1)
        enc = [x.encode("utf-8", "surrogateescape") if isinstance(x, str) else bytes(x) for x in flat.tolist()]
        n = len(enc)
        ptrs = (ctypes.c_char_p * max(n, 1))(*enc)
        shape = (c_i64 * max(arr.ndim, 1))(*arr.shape)
        out = c_p()
        check(lib.cort_tensor_wrap(ptrs, ctypes.sizeof(ctypes.c_char_p) * n, T_STRING, shape, arr.ndim,
                                   ctypes.byref(out)))
        self.keep += [enc, ptrs]
        return self._own(out.value)

    def value(self, obj, kind=KIND_UNKNOWN, elem=0):
        """New cort value reference for obj given the declared kind/element type (0 = unknown)."""
        if kind == KIND_OPTIONAL:
            return self._optional(obj, elem)
        if kind == KIND_SEQUENCE or (kind == KIND_UNKNOWN and isinstance(obj, (list, tuple))
                                     and (not obj or isinstance(obj[0], np.ndarray))):
            return self._sequence(obj, elem)
        if kind == KIND_MAP or isinstance(obj, dict):
            return self._map(obj, elem)
        return self.tensor(obj, elem)

    def _sequence(self, obj, elem):
        from .session import OrtValue
        if isinstance(obj, OrtValue):
            return self._own(lib.cort_value_retain(obj._value))
        items = [self.tensor(x, elem) for x in obj]
        if not elem and items:
            elem = lib.cort_tensor_type(items[0])
        arr = (c_p * max(len(items), 1))(*items)
        out = c_p()
        check(lib.cort_sequence_create(elem or T_FLOAT, arr, len(items), ctypes.byref(out)))
        return self._own(out.value)

    def _optional(self, obj, elem):
        out = c_p()
        if obj is None:
            # The C API does not say whether the optional holds a tensor or a sequence; a tensor is
            # the common case (see docs/python.md).
            check(lib.cort_optional_create(None, KIND_TENSOR, elem or T_FLOAT, ctypes.byref(out)))
            return self._own(out.value)
        is_seq = isinstance(obj, (list, tuple))
        c = self._sequence(obj, elem) if is_seq else self.tensor(obj, elem)
        check(lib.cort_optional_create(c, KIND_SEQUENCE if is_seq else KIND_TENSOR, elem or lib.cort_tensor_type(c),
                                       ctypes.byref(out)))
        return self._own(out.value)

    def _map(self, obj, elem):
        keys = list(obj.keys())
        karr = np.array(keys, dtype=object if keys and isinstance(keys[0], str) else np.int64)
        k = self.tensor(karr)
        v = self.tensor(np.asarray(list(obj.values()), dtype=CORT_TO_NUMPY.get(elem)), elem)
        out = c_p()
        check(lib.cort_map_create(k, v, ctypes.byref(out)))
        return self._own(out.value)


def _invalid(msg):
    from ._errors import InvalidArgument
    e = InvalidArgument(msg)
    e.code = "INVALID_ARGUMENT"
    return e
