"""I/O binding (onnxruntime's IOBinding / SessionIOBinding) over cort_io_binding (include/cort.h).

Inputs and outputs are bound by name once; every run_with_iobinding then runs with them. CPU
arrays are bound without a copy: the binding keeps them alive, and a run reads their current
contents. Outputs bound without a buffer are allocated by each run and kept until the next one.
"""
import ctypes

import numpy as np

from . import _values as V
from ._devices import OrtDevice, device_from_args
from ._lib import lib, check, c_p, c_i64, s, d


class OrtValueVector(list):
    """A list of OrtValue (what SessionIOBinding.get_outputs returns in onnxruntime)."""

    def push_back(self, value):
        self.append(value)

    def reserve(self, n):
        pass

    def bool_tensor_indices(self):
        return [i for i, v in enumerate(self) if v.is_tensor() and v.element_type() == 9]

    def to_dlpacks(self, to_tensor=None):
        caps = [v.to_dlpack() for v in self]
        return [to_tensor(c) for c in caps] if to_tensor is not None else caps


def _wrap_pointer(ptr, element_type, shape):
    """A cort tensor over memory the caller owns (ptr: an int address)."""
    from .session import OrtValue
    dt = np.dtype(element_type)
    t = V.NUMPY_TO_CORT.get(dt)
    if t is None:
        raise TypeError("cort: element type %s cannot be bound" % dt)
    shape = [int(x) for x in shape]
    n = 1
    for x in shape:
        n *= x
    shp = (c_i64 * max(len(shape), 1))(*shape)
    out = c_p()
    check(lib.cort_tensor_wrap(c_p(int(ptr)), n * dt.itemsize, t, shp, len(shape), ctypes.byref(out)))
    return OrtValue(out.value)


class SessionIOBinding:
    """The binding object of one session (onnxruntime.capi's SessionIOBinding(sess._sess))."""

    def __init__(self, c_session):
        ptr = c_p()
        check(lib.cort_io_binding_create(c_session, ctypes.byref(ptr)))
        self._ptr = ptr.value
        self._session = c_session      # the C binding holds a session reference; this keeps the wrapper
        self._inputs = {}              # name -> OrtValue (keeps wrapped buffers alive)
        self._outputs = {}

    def __del__(self, _free=lib.cort_io_binding_free):
        p, self._ptr = getattr(self, "_ptr", None), None
        if p:
            _free(p)

    @property
    def _as_parameter_(self):
        return self._ptr

    def bind_ortvalue_input(self, name, ortvalue):
        check(lib.cort_io_binding_bind_input(self._ptr, s(name), ortvalue._value))
        self._inputs[name] = ortvalue

    def bind_ortvalue_output(self, name, ortvalue):
        check(lib.cort_io_binding_bind_output(self._ptr, s(name), ortvalue._value))
        self._outputs[name] = ortvalue

    def bind_input(self, name, device, element_type, shape, buffer_ptr):
        """Binds memory at buffer_ptr (the caller keeps it valid while bound) or, given an array, the array."""
        device_from_args(device)
        if isinstance(buffer_ptr, np.ndarray):
            from .session import OrtValue
            self.bind_ortvalue_input(name, OrtValue.ortvalue_from_numpy(buffer_ptr))
            return
        self.bind_ortvalue_input(name, _wrap_pointer(buffer_ptr, element_type, shape))

    def bind_output(self, name, device=None, element_type=None, shape=None, buffer_ptr=None):
        if device is not None:
            device_from_args(device)
        if buffer_ptr is not None:
            if element_type is None or shape is None:
                raise TypeError("bind_output: a buffer needs element_type and shape")
            self.bind_ortvalue_output(name, _wrap_pointer(buffer_ptr, element_type, shape))
            return
        check(lib.cort_io_binding_bind_output(self._ptr, s(name), None))
        self._outputs[name] = None

    def clear_binding_inputs(self):
        lib.cort_io_binding_clear_inputs(self._ptr)
        self._inputs.clear()

    def clear_binding_outputs(self):
        lib.cort_io_binding_clear_outputs(self._ptr)
        self._outputs.clear()

    def synchronize_inputs(self):
        pass   # CPU only: nothing is in flight on another stream

    def synchronize_outputs(self):
        pass

    def _run(self, run_options):
        ro = run_options._ptr if run_options is not None else None
        check(lib.cort_io_binding_run(self._ptr, ro))

    def get_output_names(self):
        return [d(lib.cort_io_binding_output_name(self._ptr, i))
                for i in range(lib.cort_io_binding_output_count(self._ptr))]

    def get_outputs(self):
        from .session import OrtValue
        out = OrtValueVector()
        for i in range(lib.cort_io_binding_output_count(self._ptr)):
            v = lib.cort_io_binding_output(self._ptr, i)
            if not v:
                from ._errors import Fail
                raise Fail("IOBinding: output '%s' has no value (run_with_iobinding has not run since it was bound)"
                           % d(lib.cort_io_binding_output_name(self._ptr, i)))
            prealloc = self._outputs.get(d(lib.cort_io_binding_output_name(self._ptr, i)))
            out.append(OrtValue(lib.cort_value_retain(v), prealloc._keep if prealloc is not None else None))
        return out

    def copy_outputs_to_cpu(self):
        return [np.array(v.numpy(), copy=True) if v.is_tensor() else v.numpy() for v in self.get_outputs()]


class IOBinding:
    """onnxruntime.IOBinding: what InferenceSession.io_binding() returns."""

    def __init__(self, session):
        self._iobinding = SessionIOBinding(session._sess)
        self._numpy_obj_references = {}

    def bind_cpu_input(self, name, arr_on_cpu):
        from .session import OrtValue
        arr = np.asarray(arr_on_cpu)
        self._iobinding.bind_ortvalue_input(name, OrtValue.ortvalue_from_numpy(arr))
        self._numpy_obj_references[name] = arr

    def bind_input(self, name, device_type, device_id, element_type, shape, buffer_ptr):
        self._iobinding.bind_input(name, device_from_args(device_type, device_id), element_type, shape, buffer_ptr)

    def bind_ortvalue_input(self, name, ortvalue):
        self._iobinding.bind_ortvalue_input(name, ortvalue)

    def synchronize_inputs(self):
        self._iobinding.synchronize_inputs()

    def bind_output(self, name, device_type="cpu", device_id=0, element_type=None, shape=None, buffer_ptr=None):
        self._iobinding.bind_output(name, device_from_args(device_type, device_id), element_type, shape, buffer_ptr)

    def bind_ortvalue_output(self, name, ortvalue):
        self._iobinding.bind_ortvalue_output(name, ortvalue)

    def synchronize_outputs(self):
        self._iobinding.synchronize_outputs()

    def get_outputs(self):
        return list(self._iobinding.get_outputs())

    def get_outputs_as_ortvaluevector(self):
        return self._iobinding.get_outputs()

    def copy_outputs_to_cpu(self):
        return self._iobinding.copy_outputs_to_cpu()

    def clear_binding_inputs(self):
        self._iobinding.clear_binding_inputs()
        self._numpy_obj_references.clear()

    def clear_binding_outputs(self):
        self._iobinding.clear_binding_outputs()


__all__ = ["OrtValueVector", "SessionIOBinding", "IOBinding", "OrtDevice"]
