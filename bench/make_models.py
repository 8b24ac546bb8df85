#!/usr/bin/python3
"""Export the benchmark / ORT-comparison models as backend-test folders.

For every model NAME this writes

  OUT/NAME/model.onnx
  OUT/NAME/test_data_set_0/input_K.pb     seeded random input K (TensorProto)

Expected outputs (output_K.pb) are not written here: bench/ort_reference.js
fills them in from ONNX Runtime, which turns each folder into an ONNX
backend-test case that `cort test OUT/NAME` can check.

Weights are random (fixed seed per model), not pretrained: the goal is to
exercise the runtime's kernels on real architectures, not to classify.
Models with BatchNorm get their running statistics re-estimated on random
inputs first, because the default statistics (mean 0, var 1) make deep
random networks such as MobileNet/EfficientNet collapse to near-constant
outputs, which would hide numerical errors.

Usage: /usr/bin/python3 bench/make_models.py [--only NAME[,NAME]] [--out DIR]
       /usr/bin/python3 bench/make_models.py --list
       /usr/bin/python3 bench/make_models.py --int8 [--only NAME] [--float-dir DIR] [--out DIR]

--int8 writes the int8 models of INT8_MODELS instead, quantized from the float folders in
--float-dir (default: --out) with cort.quantization (python/cort/quantization; static models are
calibrated in cort, so libcort must be built): the CNNs statically in QDQ form with per-channel
weights, BERT and the MLP dynamically. They keep the float model's test_data_set_0.
"""
import argparse
import math
import os
import sys
import time
import zlib

import numpy as np
import onnx
from onnx import numpy_helper
import torch
import torch.nn as nn
import torch.nn.functional as F

TWO_GB = 2 * 1024 ** 3


def model_seed(name):
    """Per-model seed, so `--only X` exports the same bytes as a full run."""
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


# ---------------------------------------------------------------------------
# BatchNorm recalibration
# ---------------------------------------------------------------------------

def recalibrate_batchnorm(model, input_shape, batches=4, batch_size=8):
    """Re-estimate BN running mean/var on random N(0,1) inputs.

    momentum=None makes BN keep a cumulative (equal-weight) average over the
    calibration batches instead of an exponential one, so a few batches
    suffice. Afterwards the model goes to eval mode for export.
    """
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None
    model.train()
    with torch.no_grad():
        for _ in range(batches):
            model(torch.randn(batch_size, *input_shape[1:]))
    model.eval()
    return model


def randomize_affine(model):
    """Give zero-initialised biases and LayerNorm affines random values.

    Default initialisers leave many biases exactly zero and LayerNorm scales
    exactly one. That would let a runtime bug in bias/affine handling go
    unnoticed, and the exporter deduplicates identical initialisers into
    Identity nodes, unlike graphs of trained models.
    """
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.LayerNorm, DecomposedLayerNorm)):
                m.weight.copy_(1.0 + 0.1 * torch.randn_like(m.weight))
                m.bias.copy_(0.1 * torch.randn_like(m.bias))
            elif isinstance(m, (nn.Conv2d, nn.ConvTranspose2d, nn.Linear)):
                if m.bias is not None and not m.bias.any():
                    m.bias.copy_(0.02 * torch.randn_like(m.bias))
    return model


# ---------------------------------------------------------------------------
# torchvision CNNs
# ---------------------------------------------------------------------------

def torchvision_model(arch):
    def build():
        import torchvision
        model = randomize_affine(getattr(torchvision.models, arch)(weights=None))
        return recalibrate_batchnorm(model, (1, 3, 224, 224), batches=4, batch_size=4)
    return build


# ---------------------------------------------------------------------------
# BERT-base-like encoder, written out by hand so the export uses plain
# MatMul / Softmax / decomposed LayerNorm / Erf GELU (no fused ops).
# ---------------------------------------------------------------------------

class DecomposedLayerNorm(nn.Module):
    """LayerNorm as ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add."""

    def __init__(self, dim, eps=1e-12):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        d = x - mean
        var = d.pow(2).mean(-1, keepdim=True)
        return d / torch.sqrt(var + self.eps) * self.weight + self.bias


def erf_gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


class SelfAttention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.head_dim = hidden // heads
        self.q = nn.Linear(hidden, hidden)
        self.k = nn.Linear(hidden, hidden)
        self.v = nn.Linear(hidden, hidden)
        self.o = nn.Linear(hidden, hidden)

    def split(self, x):
        b, s, _ = x.shape
        return x.reshape(b, s, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = torch.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, h)
        return self.o(ctx)


class EncoderLayer(nn.Module):
    """Post-LN transformer layer as in BERT."""

    def __init__(self, hidden, heads, ffn, ln_eps):
        super().__init__()
        self.attn = SelfAttention(hidden, heads)
        self.ln1 = DecomposedLayerNorm(hidden, ln_eps)
        self.fc1 = nn.Linear(hidden, ffn)
        self.fc2 = nn.Linear(ffn, hidden)
        self.ln2 = DecomposedLayerNorm(hidden, ln_eps)

    def forward(self, x):
        x = self.ln1(x + self.attn(x))
        return self.ln2(x + self.fc2(erf_gelu(self.fc1(x))))


class BertEncoder(nn.Module):
    def __init__(self, layers=12, hidden=768, heads=12, ffn=3072):
        super().__init__()
        self.layers = nn.ModuleList(
            EncoderLayer(hidden, heads, ffn, 1e-12) for _ in range(layers))
        # BERT's initialisation: N(0, 0.02) weights, zero biases.
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, std=0.02)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def build_bert():
    return randomize_affine(BertEncoder()).eval()


# ---------------------------------------------------------------------------
# MLP 784-512-512-10
# ---------------------------------------------------------------------------

def build_mlp():
    return nn.Sequential(
        nn.Linear(784, 512), nn.ReLU(),
        nn.Linear(512, 512), nn.ReLU(),
        nn.Linear(512, 10),
    ).eval()


# ---------------------------------------------------------------------------
# FC head: a batch-1 fully connected head of the wake-word / keyword kind,
# whose time is one wide Gemm on a [1, K] input (a GEMV: weight-bandwidth bound).
# ---------------------------------------------------------------------------

def build_fc_head():
    return nn.Sequential(
        nn.Linear(3264, 512), nn.ReLU(),
        nn.Linear(512, 128), nn.ReLU(),
        nn.Linear(128, 12),
    ).eval()


# ---------------------------------------------------------------------------
# Batched CNN: 36 spectrogram windows at once, separable 1x3 / 3x1 convs with
# LeakyRelu and MaxPool (a keyword-spotting style network at batch > 1).
# ---------------------------------------------------------------------------

class BatchCNN(nn.Module):
    def __init__(self, classes=12):
        super().__init__()
        def conv(cin, cout, k, p):
            return [nn.Conv2d(cin, cout, k, padding=p), nn.BatchNorm2d(cout), nn.LeakyReLU(0.1)]
        self.features = nn.Sequential(
            *conv(1, 32, 3, 1), nn.MaxPool2d(2),
            *conv(32, 64, (1, 3), (0, 1)), *conv(64, 64, (3, 1), (1, 0)), nn.MaxPool2d(2),
            *conv(64, 128, (1, 3), (0, 1)), *conv(128, 128, (3, 1), (1, 0)), nn.MaxPool2d(2),
        )
        self.classifier = nn.Linear(128, classes)

    def forward(self, x):
        x = self.features(x)
        return self.classifier(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def build_cnn_batch():
    return recalibrate_batchnorm(BatchCNN(), (36, 1, 64, 96))


# ---------------------------------------------------------------------------
# OCR detector: DB-net-like (MobileNetV3-ish backbone + FPN + DB head),
# modelled on PaddleOCR's mobile det model.
# ---------------------------------------------------------------------------

class ConvBNAct(nn.Sequential):
    def __init__(self, cin, cout, k=3, stride=1, groups=1, act="relu"):
        layers = [nn.Conv2d(cin, cout, k, stride, k // 2 if isinstance(k, int) else
                            tuple(x // 2 for x in k), groups=groups, bias=False),
                  nn.BatchNorm2d(cout)]
        if act == "relu":
            layers.append(nn.ReLU())
        elif act == "hswish":
            layers.append(nn.Hardswish())
        super().__init__(*layers)


class SqueezeExcite(nn.Module):
    """GlobalAveragePool -> 1x1 -> ReLU -> 1x1 -> HardSigmoid gate -> Mul."""

    def __init__(self, c, reduction=4):
        super().__init__()
        self.reduce = nn.Conv2d(c, c // reduction, 1)
        self.expand = nn.Conv2d(c // reduction, c, 1)

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        s = F.hardsigmoid(self.expand(F.relu(self.reduce(s))))
        return x * s


class InvertedResidual(nn.Module):
    """MobileNetV3 block: expand 1x1, depthwise kxk, optional SE, project 1x1."""

    def __init__(self, cin, hidden, cout, k, stride, se, act="relu"):
        super().__init__()
        self.expand = ConvBNAct(cin, hidden, 1, act=act)
        self.dw = ConvBNAct(hidden, hidden, k, stride, groups=hidden, act=act)
        self.se = SqueezeExcite(hidden) if se else nn.Identity()
        self.project = ConvBNAct(hidden, cout, 1, act=None)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.project(self.se(self.dw(self.expand(x))))
        return x + y if self.residual else y


class DetBackbone(nn.Module):
    """Returns feature maps at strides 4, 8, 16, 32."""

    def __init__(self):
        super().__init__()
        self.stem = ConvBNAct(3, 16, 3, 2, act="hswish")                # /2
        self.stage1 = nn.Sequential(
            InvertedResidual(16, 16, 16, 3, 1, False),
            InvertedResidual(16, 64, 24, 3, 2, False),                  # /4
            InvertedResidual(24, 72, 24, 3, 1, False))
        self.stage2 = nn.Sequential(
            InvertedResidual(24, 72, 40, 5, 2, True),                   # /8
            InvertedResidual(40, 120, 40, 5, 1, True))
        self.stage3 = nn.Sequential(
            InvertedResidual(40, 240, 80, 3, 2, False, "hswish"),       # /16
            InvertedResidual(80, 200, 80, 3, 1, False, "hswish"),
            InvertedResidual(80, 480, 112, 3, 1, True, "hswish"))
        self.stage4 = nn.Sequential(
            InvertedResidual(112, 672, 160, 5, 2, True, "hswish"),      # /32
            InvertedResidual(160, 960, 160, 5, 1, True, "hswish"))

    def forward(self, x):
        c2 = self.stage1(self.stem(x))
        c3 = self.stage2(c2)
        c4 = self.stage3(c3)
        c5 = self.stage4(c4)
        return c2, c3, c4, c5


class DBFPN(nn.Module):
    def __init__(self, in_channels=(24, 40, 112, 160), out=96):
        super().__init__()
        self.lateral = nn.ModuleList(nn.Conv2d(c, out, 1, bias=False) for c in in_channels)
        self.smooth = nn.ModuleList(nn.Conv2d(out, out // 4, 3, padding=1, bias=False)
                                    for _ in in_channels)

    def forward(self, feats):
        c2, c3, c4, c5 = (l(f) for l, f in zip(self.lateral, feats))
        p5 = c5
        p4 = c4 + F.interpolate(p5, scale_factor=2.0, mode="nearest")
        p3 = c3 + F.interpolate(p4, scale_factor=2.0, mode="nearest")
        p2 = c2 + F.interpolate(p3, scale_factor=2.0, mode="nearest")
        s2, s3, s4, s5 = (s(p) for s, p in zip(self.smooth, (p2, p3, p4, p5)))
        s5 = F.interpolate(s5, scale_factor=8.0, mode="nearest")
        s4 = F.interpolate(s4, scale_factor=4.0, mode="nearest")
        s3 = F.interpolate(s3, scale_factor=2.0, mode="nearest")
        return torch.cat([s5, s4, s3, s2], dim=1)


class DBHead(nn.Module):
    """Conv-BN-ReLU, 2x (ConvTranspose 2x2 stride 2), Sigmoid probability map."""

    def __init__(self, cin=96):
        super().__init__()
        mid = cin // 4
        self.conv = ConvBNAct(cin, mid, 3)
        self.up1 = nn.ConvTranspose2d(mid, mid, 2, 2)
        self.bn1 = nn.BatchNorm2d(mid)
        self.up2 = nn.ConvTranspose2d(mid, 1, 2, 2)

    def forward(self, x):
        x = self.conv(x)
        x = F.relu(self.bn1(self.up1(x)))
        return torch.sigmoid(self.up2(x))


class OcrDetector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = DetBackbone()
        self.neck = DBFPN()
        self.head = DBHead()

    def forward(self, x):
        return self.head(self.neck(self.backbone(x)))


def build_ocr_det():
    return recalibrate_batchnorm(randomize_affine(OcrDetector()), (1, 3, 640, 640),
                                 batches=2, batch_size=2)


# ---------------------------------------------------------------------------
# OCR recogniser: CRNN/SVTR-like. CNN squeezes height to 1, the width axis
# becomes the sequence, a small transformer encoder mixes it, and a
# MatMul + Softmax gives per-timestep character probabilities.
# ---------------------------------------------------------------------------

class TransformerBlock(nn.Module):
    """Pre-LN block (as in SVTR) with nn.LayerNorm; at opset 11 the exporter
    decomposes it into ReduceMean/Sub/Pow/Sqrt/Div."""

    def __init__(self, dim, heads, mlp_ratio=2):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim, eps=1e-5)
        self.attn = SelfAttention(dim, heads)
        self.ln2 = nn.LayerNorm(dim, eps=1e-5)
        self.fc1 = nn.Linear(dim, dim * mlp_ratio)
        self.fc2 = nn.Linear(dim * mlp_ratio, dim)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.fc2(F.hardswish(self.fc1(self.ln2(x))))


class OcrRecognizer(nn.Module):
    def __init__(self, dim=120, heads=8, blocks=2, classes=6625):
        super().__init__()
        # 48x320 -> 24x160 -> 12x80 -> 6x40 -> 3x40 -> 1x40
        self.cnn = nn.Sequential(
            ConvBNAct(3, 32, 3, 2, act="hswish"),
            InvertedResidual(32, 64, 48, 3, 2, False, "hswish"),
            InvertedResidual(48, 96, 64, 3, 2, True, "hswish"),
            InvertedResidual(64, 128, 96, 3, (2, 1), True, "hswish"),
            InvertedResidual(96, 192, 96, 3, 1, True, "hswish"),
            nn.MaxPool2d((3, 1), (3, 1)),
            ConvBNAct(96, dim, 1, act="hswish"),
        )
        self.blocks = nn.ModuleList(TransformerBlock(dim, heads) for _ in range(blocks))
        self.norm = nn.LayerNorm(dim, eps=1e-5)
        self.fc = nn.Linear(dim, classes)
        # Logit std ~4 gives a peaked softmax like a trained recogniser's;
        # the default init gives a near-uniform 1/6625 everywhere, which any
        # absolute tolerance would accept regardless of errors.
        nn.init.normal_(self.fc.weight, std=4.0 / math.sqrt(dim))

    def forward(self, x):
        f = self.cnn(x)                                   # [B, C, 1, W]
        b, c, _, w = f.shape
        seq = f.reshape(b, c, w).transpose(1, 2)          # [B, W, C]
        for blk in self.blocks:
            seq = blk(seq)
        return torch.softmax(self.fc(self.norm(seq)), dim=-1)  # [B, W, classes]


def build_ocr_rec():
    return recalibrate_batchnorm(randomize_affine(OcrRecognizer()), (1, 3, 48, 320))


# ---------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------

# name: (builder, input name, input shape, opset, output name)
MODELS = {
    "resnet50":        (torchvision_model("resnet50"), "input", (1, 3, 224, 224), 14, "output"),
    "mobilenet_v2":    (torchvision_model("mobilenet_v2"), "input", (1, 3, 224, 224), 14, "output"),
    "squeezenet1_1":   (torchvision_model("squeezenet1_1"), "input", (1, 3, 224, 224), 14, "output"),
    "efficientnet_b0": (torchvision_model("efficientnet_b0"), "input", (1, 3, 224, 224), 14, "output"),
    "bert_encoder":    (build_bert, "x", (1, 128, 768), 14, "y"),
    "mlp":             (build_mlp, "input", (1, 784), 14, "output"),
    "ocr_det":         (build_ocr_det, "image", (1, 3, 640, 640), 11, "prob_map"),
    "ocr_rec":         (build_ocr_rec, "image", (1, 3, 48, 320), 11, "char_probs"),
    "fc_head":         (build_fc_head, "features", (1, 3264), 14, "logits"),
    "cnn_batch":       (build_cnn_batch, "spectrogram", (36, 1, 64, 96), 14, "logits"),
}


# int8 name: (float model, how): "dynamic", "static" (QDQ form) or "static_qop" (QOperator form),
# per-channel weights throughout, the forms issue 21 names. Static models are calibrated on
# INT8_CALIBRATION_SAMPLES seeded N(0, 1) inputs, the distribution of the float model's own test input.
INT8_MODELS = {
    "resnet50_int8_qdq":      ("resnet50", "static"),
    "mobilenet_v2_int8_qdq":  ("mobilenet_v2", "static"),
    "squeezenet1_1_int8_qdq": ("squeezenet1_1", "static"),
    "bert_encoder_int8_dyn":  ("bert_encoder", "dynamic"),
    "mlp_int8_dyn":           ("mlp", "dynamic"),
    "resnet50_int8_qop":      ("resnet50", "static_qop"),
    "mobilenet_v2_int8_qop":  ("mobilenet_v2", "static_qop"),
    "squeezenet1_1_int8_qop": ("squeezenet1_1", "static_qop"),
    "bert_encoder_int8_qdq":  ("bert_encoder", "static"),
    "mlp_int8_qdq":           ("mlp", "static"),
}
INT8_CALIBRATION_SAMPLES = 4


def export_int8(name, float_dir, out_dir):
    import shutil
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
    from cort.quantization import ListDataReader, QuantFormat, quantize_dynamic, quantize_static

    src_name, how = INT8_MODELS[name]
    src = os.path.join(float_dir, src_name)
    if not os.path.isfile(os.path.join(src, "model.onnx")):
        sys.exit(f"make_models: {src}/model.onnx is missing; export {src_name} first")
    t0 = time.time()
    mdir = os.path.join(out_dir, name)
    ddir = os.path.join(mdir, "test_data_set_0")
    os.makedirs(ddir, exist_ok=True)
    path = os.path.join(mdir, "model.onnx")
    if how == "dynamic":
        m = quantize_dynamic(os.path.join(src, "model.onnx"), path, per_channel=True)
    else:
        _, in_name, in_shape, _, _ = MODELS[src_name]
        rng = np.random.default_rng(model_seed(name))
        samples = [{in_name: rng.standard_normal(in_shape).astype(np.float32)}
                   for _ in range(INT8_CALIBRATION_SAMPLES)]
        m = quantize_static(os.path.join(src, "model.onnx"), path, ListDataReader(samples),
                            quant_format=QuantFormat.QOperator if how == "static_qop" else QuantFormat.QDQ,
                            per_channel=True)
    shutil.copy(os.path.join(src, "test_data_set_0", "input_0.pb"), os.path.join(ddir, "input_0.pb"))
    ops = {}
    for n in m.graph.node:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    print(f"{name:24s} from {src_name} ({how})  {os.path.getsize(path) / 1e6:8.2f} MB  "
          f"{len(m.graph.node):4d} nodes  ({time.time() - t0:.1f}s)")
    print(f"{'':24s} ops: " + ", ".join(f"{k}x{v}" for k, v in sorted(ops.items())))
    sys.stdout.flush()


def write_input(path, name, array):
    t = numpy_helper.from_array(array, name)
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


def export_one(name, out_dir):
    builder, in_name, in_shape, opset, out_name = MODELS[name]
    seed = model_seed(name)
    torch.manual_seed(seed)
    t0 = time.time()
    model = builder()
    model.eval()

    rng = np.random.default_rng(seed)
    x = rng.standard_normal(in_shape).astype(np.float32)

    mdir = os.path.join(out_dir, name)
    ddir = os.path.join(mdir, "test_data_set_0")
    os.makedirs(ddir, exist_ok=True)
    path = os.path.join(mdir, "model.onnx")
    tmp = path + ".tmp"

    with torch.no_grad():
        y = model(torch.from_numpy(x)).numpy()
        torch.onnx.export(model, torch.from_numpy(x), tmp,
                          opset_version=opset,
                          input_names=[in_name], output_names=[out_name],
                          do_constant_folding=True)

    m = onnx.load(tmp)
    size = m.ByteSize()
    os.remove(tmp)
    # Keep weights inline (simpler for the runtime's loader) unless the
    # protobuf 2 GB limit forces external data.
    if size > TWO_GB:
        onnx.save_model(m, path, save_as_external_data=True,
                        all_tensors_to_one_file=True, location="model.onnx.data")
        onnx.checker.check_model(path)
    else:
        onnx.checker.check_model(m)
        onnx.save_model(m, path)
    write_input(os.path.join(ddir, "input_0.pb"), in_name, x)
    # Torch's own output, for a sanity check of ORT's reference (not used
    # by `cort test`, which only reads input_K.pb / output_K.pb).
    np.save(os.path.join(mdir, "torch_output_0.npy"), y)

    ops = {}
    for n in m.graph.node:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    params = sum(int(np.prod(i.dims)) for i in m.graph.initializer)
    print(f"{name:16s} opset {opset}  {os.path.getsize(path) / 1e6:8.2f} MB  "
          f"{params / 1e6:7.2f} M params  {len(m.graph.node):4d} nodes  "
          f"in {list(in_shape)} out {list(y.shape)}  "
          f"out mean {y.mean():+.4g} std {y.std():.4g}  ({time.time() - t0:.1f}s)")
    print(f"{'':16s} ops: " + ", ".join(f"{k}x{v}" for k, v in sorted(ops.items())))
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--out", default=os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build", "models"),
        help="output directory (default: REPO/build/models)")
    ap.add_argument("--list", action="store_true", help="print model names and exit")
    ap.add_argument("--int8", action="store_true",
                    help="write the int8 models (INT8_MODELS) quantized from the float ones in --float-dir")
    ap.add_argument("--float-dir", help="with --int8: folder of the float models (default: --out)")
    ap.add_argument("--threads", type=int, default=1,
                    help="torch intra-op threads (default 1: multi-threaded reductions "
                         "could change the last bits of the BatchNorm statistics "
                         "with the core count)")
    args = ap.parse_args()

    registry = INT8_MODELS if args.int8 else MODELS
    if args.list:
        print("\n".join(registry))
        return
    names = [n for n in args.only.split(",") if n] or list(registry)
    unknown = [n for n in names if n not in registry]
    if unknown:
        ap.error(f"unknown model(s) {', '.join(unknown)}; choose from {', '.join(registry)}")
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    os.makedirs(args.out, exist_ok=True)
    for name in names:
        if args.int8:
            export_int8(name, args.float_dir or args.out, args.out)
        else:
            export_one(name, args.out)


if __name__ == "__main__":
    main()
