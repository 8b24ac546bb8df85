"""Calibration: the float ranges of activations, measured by running the float model in cort."""
import abc
import os
from enum import Enum

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class CalibrationMethod(Enum):
    MinMax = 0
    Entropy = 1
    Percentile = 2
    Distribution = 3


class CalibrationDataReader(metaclass=abc.ABCMeta):
    """Yields the calibration inputs: get_next() returns {input name: array} or None at the end."""

    @abc.abstractmethod
    def get_next(self) -> dict:
        raise NotImplementedError

    def __iter__(self):
        return self

    def __next__(self):
        item = self.get_next()
        if item is None:
            raise StopIteration
        return item

    def set_range(self, start_index: int, end_index: int):
        raise NotImplementedError


class ListDataReader(CalibrationDataReader):
    """A CalibrationDataReader over a list of input dicts."""

    def __init__(self, samples):
        self._samples = list(samples)
        self._pos = 0

    def get_next(self):
        if self._pos >= len(self._samples):
            return None
        self._pos += 1
        return self._samples[self._pos - 1]

    def rewind(self):
        self._pos = 0


def _read_tensor_file(path):
    if path.endswith(".npy"):
        return None, np.load(path)
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return (t.name or None), numpy_helper.to_array(t)


def _input_files(folder):
    files = []
    for name in os.listdir(folder):
        stem, ext = os.path.splitext(name)
        if ext in (".pb", ".npy") and stem.startswith("input_") and stem[6:].isdigit():
            files.append((int(stem[6:]), os.path.join(folder, name)))
    return [p for _, p in sorted(files)]


class DirectoryDataReader(CalibrationDataReader):
    """Calibration samples from a directory: each sub-folder (e.g. test_data_set_N) holds one sample as
    input_K.pb (TensorProto; named, or the K-th model input) or input_K.npy (the K-th model input). A
    directory holding input_K files itself is a single sample."""

    def __init__(self, directory, input_names):
        if not os.path.isdir(directory):
            raise ValueError("calibration directory %s does not exist" % directory)
        folders = [directory] if _input_files(directory) else sorted(
            os.path.join(directory, d) for d in os.listdir(directory)
            if os.path.isdir(os.path.join(directory, d)) and _input_files(os.path.join(directory, d)))
        if not folders:
            raise ValueError("calibration directory %s has no input_K.pb / input_K.npy files (directly or "
                             "in sub-folders)" % directory)
        self._folders = folders
        self._names = list(input_names)
        self._pos = 0

    def __len__(self):
        return len(self._folders)

    def get_next(self):
        if self._pos >= len(self._folders):
            return None
        folder = self._folders[self._pos]
        self._pos += 1
        feed = {}
        for k, path in enumerate(_input_files(folder)):
            name, arr = _read_tensor_file(path)
            if name is None or name not in self._names:
                if k >= len(self._names):
                    raise ValueError("%s: the model has only %d inputs" % (path, len(self._names)))
                name = self._names[k]
            feed[name] = arr
        return feed


def graph_inputs(model):
    inits = {i.name for i in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def collect_ranges(model, tensor_names, data_reader, method=CalibrationMethod.MinMax, session_factory=None):
    """{tensor: (min, max)} over every sample of data_reader, for the float tensors named.

    The tensors are made graph outputs of a copy of the model, which cort then runs on each sample;
    the range is the smallest and largest value seen in any sample (ONNX Runtime's MinMax)."""
    if method is not CalibrationMethod.MinMax:
        raise NotImplementedError("calibration method %s is not implemented (MinMax is)" % method)
    aug = onnx.ModelProto()
    aug.CopyFrom(model)
    present = {o.name for o in aug.graph.output}
    names = list(dict.fromkeys(tensor_names))
    for n in names:
        if n not in present:
            aug.graph.output.append(helper.make_tensor_value_info(n, TensorProto.FLOAT, None))
    if session_factory is None:
        import cort
        session_factory = cort.InferenceSession
    sess = session_factory(aug.SerializeToString())
    out_names = [o.name for o in aug.graph.output]
    wanted = set(names)
    lo, hi = {}, {}
    samples = 0
    while True:
        feed = data_reader.get_next()
        if feed is None:
            break
        samples += 1
        outs = sess.run(None, feed)
        for name, value in zip(out_names, outs):
            if name not in wanted:
                continue
            v = np.asarray(value)
            if v.size == 0:
                continue
            mn, mx = float(v.min()), float(v.max())
            lo[name] = min(lo.get(name, mn), mn)
            hi[name] = max(hi.get(name, mx), mx)
    if samples == 0:
        raise ValueError("the calibration data reader gave no samples")
    return {n: (lo[n], hi[n]) for n in names if n in lo}
