"""Quantization types and the arithmetic of scales and zero points.

The conventions are those of ONNX Runtime's quantization tool, so that models quantized here and
there agree: the float range always contains 0, symmetric int8 uses [-127, 127] (so the zero point
is exactly 0), and rounding is numpy's round-half-to-even, the same as QuantizeLinear's.
"""
from enum import Enum

import numpy as np
from onnx import TensorProto


class QuantType(Enum):
    QInt8 = 0
    QUInt8 = 1

    def __str__(self):
        return self.name

    @staticmethod
    def from_string(t):
        try:
            return QuantType[t]
        except KeyError:
            raise ValueError("unknown QuantType %r (QInt8 or QUInt8)" % (t,)) from None

    @property
    def tensor_type(self):
        return TensorProto.INT8 if self is QuantType.QInt8 else TensorProto.UINT8

    @property
    def np_dtype(self):
        return np.dtype(np.int8) if self is QuantType.QInt8 else np.dtype(np.uint8)


class QuantFormat(Enum):
    QOperator = 0
    QDQ = 1

    def __str__(self):
        return self.name

    @staticmethod
    def from_string(f):
        try:
            return QuantFormat[f]
        except KeyError:
            raise ValueError("unknown QuantFormat %r (QOperator or QDQ)" % (f,)) from None


def qrange(qtype, reduce_range=False, symmetric=False):
    """(qmin, qmax) of a quantized type. reduce_range keeps 7 bits, for kernels whose u8 x s8
    products are summed in pairs into 16 bits (AVX2 without VNNI)."""
    if qtype is QuantType.QUInt8:
        return (0, 127) if reduce_range else (0, 255)
    if reduce_range:
        return (-64, 64)
    return (-127, 127) if symmetric else (-128, 127)


def scale_zero_point(rmin, rmax, qmin, qmax, symmetric=False):
    """Scale and zero point mapping [rmin, rmax] (widened to contain 0) onto [qmin, qmax].

    rmin/rmax may be arrays (one pair per channel); returns float32 scales and int64 zero points
    of the same shape."""
    rmin = np.minimum(np.asarray(rmin, dtype=np.float64), 0.0)
    rmax = np.maximum(np.asarray(rmax, dtype=np.float64), 0.0)
    if symmetric:
        absmax = np.maximum(np.abs(rmin), np.abs(rmax))
        rmin, rmax = -absmax, absmax
    scale = (rmax - rmin) / float(qmax - qmin)
    # A range of zero (an all-zero tensor) keeps scale 1: any scale represents it exactly and 1
    # cannot make a later division blow up.
    degenerate = scale < np.finfo(np.float32).tiny
    safe = np.where(degenerate, 1.0, scale)
    zp = np.where(degenerate, 0.0, np.round(qmin - rmin / safe))
    if symmetric and qmin < 0:
        zp = np.zeros_like(zp)
    zp = np.clip(zp, qmin, qmax)
    return safe.astype(np.float32), zp.astype(np.int64)


def quantize_array(data, scale, zero_point, qtype, axis=None, qmin=None, qmax=None):
    """QuantizeLinear in numpy: round-half-even(data / scale) + zero_point, saturated."""
    data = np.asarray(data, dtype=np.float32)
    scale = np.asarray(scale, dtype=np.float32)
    zero_point = np.asarray(zero_point)
    if axis is not None and scale.ndim == 1:
        shape = [1] * data.ndim
        shape[axis] = -1
        scale = scale.reshape(shape)
        zero_point = zero_point.reshape(shape)
    lo, hi = qrange(qtype)
    lo = lo if qmin is None else max(lo, qmin)
    hi = hi if qmax is None else min(hi, qmax)
    q = np.round(data / scale) + zero_point
    return np.clip(q, lo, hi).astype(qtype.np_dtype)


def quantize_weight(data, qtype, symmetric, reduce_range=False, axis=None):
    """Quantizes a constant: returns (quantized, scale, zero_point) where scale/zero_point are
    scalars, or 1-D along `axis` for per-channel quantization."""
    data = np.asarray(data, dtype=np.float32)
    qmin, qmax = qrange(qtype, reduce_range, symmetric)
    if axis is None:
        rmin = data.min() if data.size else 0.0
        rmax = data.max() if data.size else 0.0
    else:
        moved = np.moveaxis(data, axis, 0).reshape(data.shape[axis], -1)
        rmin = moved.min(axis=1) if moved.shape[1] else np.zeros(moved.shape[0])
        rmax = moved.max(axis=1) if moved.shape[1] else np.zeros(moved.shape[0])
    scale, zp = scale_zero_point(rmin, rmax, qmin, qmax, symmetric)
    q = quantize_array(data, scale, zp, qtype, axis=axis, qmin=qmin, qmax=qmax)
    return q, scale, zp.astype(qtype.np_dtype)


def quantize_bias(bias, input_scale, weight_scale):
    """int32 bias with scale input_scale * weight_scale (per output channel when weight_scale is
    1-D): the accumulator's own scale, so the bias adds to the int32 sums directly."""
    bias = np.asarray(bias, dtype=np.float64)
    scale = (np.float64(input_scale) * np.asarray(weight_scale, dtype=np.float64))
    scale = np.where(scale == 0, 1.0, scale)
    q = np.round(bias / scale)
    q = np.clip(q, np.iinfo(np.int32).min, np.iinfo(np.int32).max).astype(np.int32)
    return q, scale.astype(np.float32)
