"""Command line: python3 -m cort.quantization {dynamic,static} IN OUT [options] (also `cort quantize`)."""
import argparse
import sys

import onnx

WEIGHT_TYPES = {"int8": "QInt8", "uint8": "QUInt8"}


def main(argv=None):
    p = argparse.ArgumentParser(prog="cort quantize", description="Quantize an ONNX model to int8.")
    sub = p.add_subparsers(dest="mode", required=True)
    d = sub.add_parser("dynamic", help="int8 weights, activations quantized at run time "
                                       "(MatMul/Gemm -> MatMulInteger, Conv -> ConvInteger)")
    s = sub.add_parser("static", help="int8 weights and activations, ranges from calibration samples")
    for q in (d, s):
        q.add_argument("input", help="float model (.onnx)")
        q.add_argument("output", help="quantized model to write")
        q.add_argument("--per-channel", action="store_true", help="one weight scale per output channel")
        q.add_argument("--weight-type", choices=sorted(WEIGHT_TYPES), default="int8")
        q.add_argument("--reduce-range", action="store_true", help="7-bit weights")
        q.add_argument("--op-types", help="comma-separated op types to quantize (default: all supported)")
        q.add_argument("--exclude", help="comma-separated node names to leave in float")
    s.add_argument("--calibration-dir", required=True,
                   help="folder of samples: sub-folders (e.g. test_data_set_N) with input_K.pb or input_K.npy")
    s.add_argument("--format", choices=["qdq", "qoperator"], default="qdq")
    s.add_argument("--activation-type", choices=sorted(WEIGHT_TYPES), default="uint8")
    s.add_argument("--symmetric-activations", action="store_true")
    a = p.parse_args(argv)

    from . import QuantFormat, QuantType, quantize_dynamic, quantize_static
    from .calibrate import DirectoryDataReader, graph_inputs

    ops = [o for o in a.op_types.split(",") if o] if a.op_types else None
    exclude = [n for n in a.exclude.split(",") if n] if a.exclude else None
    wtype = QuantType[WEIGHT_TYPES[a.weight_type]]
    try:
        if a.mode == "dynamic":
            m = quantize_dynamic(a.input, a.output, op_types_to_quantize=ops, per_channel=a.per_channel,
                                 reduce_range=a.reduce_range, weight_type=wtype, nodes_to_exclude=exclude)
        else:
            model = onnx.load(a.input)
            reader = DirectoryDataReader(a.calibration_dir, [i.name for i in graph_inputs(model)])
            fmt = QuantFormat.QDQ if a.format == "qdq" else QuantFormat.QOperator
            m = quantize_static(model, a.output, reader, quant_format=fmt, op_types_to_quantize=ops,
                                per_channel=a.per_channel, reduce_range=a.reduce_range,
                                activation_type=QuantType[WEIGHT_TYPES[a.activation_type]], weight_type=wtype,
                                nodes_to_exclude=exclude,
                                extra_options={"ActivationSymmetric": a.symmetric_activations})
    except (ValueError, NotImplementedError, OSError) as e:
        print("cort quantize: %s" % e, file=sys.stderr)
        return 1
    hist = {}
    for n in m.graph.node:
        hist[n.op_type] = hist.get(n.op_type, 0) + 1
    print("wrote %s: %s" % (a.output, ", ".join("%s x%d" % kv for kv in sorted(hist.items()))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
