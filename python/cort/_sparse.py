"""SparseTensor / OrtSparseFormat with onnxruntime's Python interface (CPU, COO and CSR). The
arrays are kept as given (read-only views are handed out); cort's kernels take dense tensors, so
these objects carry sparse data for the APIs that exchange it."""
import enum

import numpy as np

from ._devices import OrtDevice, device_from_args
from ._errors import InvalidArgument


class OrtSparseFormat(enum.IntEnum):
    ORT_SPARSE_UNDEFINED = 0
    ORT_SPARSE_COO = 1
    ORT_SPARSE_CSRC = 2
    ORT_SPARSE_BLOCK_SPARSE = 4


def _readonly(a):
    v = a.view()
    v.flags.writeable = False
    return v


class _CooView:
    def __init__(self, indices):
        self._indices = indices

    def indices(self):
        return _readonly(self._indices)


class _CsrcView:
    def __init__(self, inner, outer):
        self._inner, self._outer = inner, outer

    def inner(self):
        return _readonly(self._inner)

    def outer(self):
        return _readonly(self._outer)


def _values_array(values):
    v = np.asarray(values)
    if v.dtype.kind in "US":
        v = v.astype(object)
    return np.ascontiguousarray(v)


class SparseTensor:
    def __init__(self, fmt, dense_shape, values, device, indices=None, inner=None, outer=None):
        self._format = fmt
        self._shape = [int(x) for x in dense_shape]
        self._values = values
        self._device = device
        self._indices, self._inner, self._outer = indices, inner, outer

    @staticmethod
    def sparse_coo_from_numpy(dense_shape, values, coo_indices, ort_device):
        device_from_args(ort_device)
        values = _values_array(values)
        idx = np.ascontiguousarray(coo_indices, dtype=np.int64)
        n = values.shape[0] if values.ndim else 1
        if idx.ndim == 1 and idx.shape[0] != n or idx.ndim == 2 and idx.shape != (n, len(dense_shape)):
            raise InvalidArgument("sparse_coo_from_numpy: %d values but indices of shape %s" % (n, idx.shape))
        return SparseTensor(OrtSparseFormat.ORT_SPARSE_COO, dense_shape, values, ort_device, indices=idx)

    @staticmethod
    def sparse_csr_from_numpy(dense_shape, values, inner_indices, outer_indices, ort_device):
        device_from_args(ort_device)
        if len(dense_shape) != 2:
            raise InvalidArgument("sparse_csr_from_numpy: CSR needs a 2-D dense shape")
        values = _values_array(values)
        inner = np.ascontiguousarray(inner_indices, dtype=np.int64)
        outer = np.ascontiguousarray(outer_indices, dtype=np.int64)
        if inner.shape[0] != values.shape[0] or outer.shape[0] != int(dense_shape[0]) + 1:
            raise InvalidArgument("sparse_csr_from_numpy: inner indices must match the values and outer indices "
                                  "have rows + 1 entries")
        return SparseTensor(OrtSparseFormat.ORT_SPARSE_CSRC, dense_shape, values, ort_device, inner=inner,
                            outer=outer)

    def format(self):
        return self._format

    def dense_shape(self):
        return list(self._shape)

    def values(self):
        return _readonly(self._values) if self._values.dtype != object else self._values.copy()

    def as_coo_view(self):
        if self._format != OrtSparseFormat.ORT_SPARSE_COO:
            raise InvalidArgument("as_coo_view: the sparse tensor is not in COO format")
        return _CooView(self._indices)

    def as_csrc_view(self):
        if self._format != OrtSparseFormat.ORT_SPARSE_CSRC:
            raise InvalidArgument("as_csrc_view: the sparse tensor is not in CSR format")
        return _CsrcView(self._inner, self._outer)

    def data_type(self):
        if self._values.dtype == object:
            return "sparse_tensor(string)"
        from . import _values as V
        t = V.NUMPY_TO_CORT.get(self._values.dtype)
        return "sparse_tensor(%s)" % (V.type_name(t) if t else self._values.dtype.name)

    def device_name(self):
        return "cpu"

    def to_cuda(self, ort_device):
        raise InvalidArgument("cort runs on the CPU only: a sparse tensor cannot be copied to %s" % (ort_device,))

    def to_dense(self):
        """The dense numpy array (cort extension)."""
        out = np.zeros(self._shape, dtype=self._values.dtype)
        flat = out.reshape(-1) if self._format == OrtSparseFormat.ORT_SPARSE_COO else None
        if self._format == OrtSparseFormat.ORT_SPARSE_COO:
            if self._indices.ndim == 1:
                flat[self._indices] = self._values
            else:
                out[tuple(self._indices.T)] = self._values
        else:
            for r in range(self._shape[0]):
                for k in range(self._outer[r], self._outer[r + 1]):
                    out[r, self._inner[k]] = self._values[k]
        return out


__all__ = ["SparseTensor", "OrtSparseFormat", "OrtDevice"]
