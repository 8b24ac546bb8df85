"""Post-training quantization of ONNX models, with onnxruntime.quantization's interface.

    from cort.quantization import quantize_dynamic, quantize_static, QuantFormat, QuantType
    quantize_dynamic("model.onnx", "model.int8.onnx", per_channel=True)
    quantize_static("model.onnx", "model.qdq.onnx", reader, quant_format=QuantFormat.QDQ, per_channel=True)

Pure Python over numpy and onnx; calibration runs the float model in cort. See docs/quantization.md.
"""
from .calibrate import CalibrationDataReader, CalibrationMethod, DirectoryDataReader, ListDataReader
from .dynamic import quantize_dynamic
from .quant_utils import QuantFormat, QuantType
from .static import quantize_static

__all__ = ["quantize_dynamic", "quantize_static", "CalibrationDataReader", "CalibrationMethod", "QuantFormat",
           "QuantType", "DirectoryDataReader", "ListDataReader"]
