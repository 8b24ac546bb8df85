#!/usr/bin/python3
"""Export a Hugging Face-style BERT with an attention mask as a backend-test folder.

The model is written here with torch (no transformers package needed) the way Hugging Face's
BertModel computes: word + position + token-type embeddings and LayerNorm, an additive mask
(1 - attention_mask) * -10000 broadcast over heads and queries, encoder layers of
multi-head self-attention (Q, K, V Linear, scaled dot product, softmax, context, output dense,
residual LayerNorm) and the GELU (erf) feed-forward block, and a tanh pooler over the first
token. ONNX Runtime's optimizer recognizes this graph (EmbedLayerNormalization, Attention with
a mask index, SkipLayerNormalization, BiasGelu / FastGelu...), which is what
bench/ort_save_optimized.js checks cort against.

  OUT/NAME/model.onnx
  OUT/NAME/test_data_set_0/input_{0,1,2}.pb   input_ids, attention_mask, token_type_ids (int64)

The second sequence of the batch is right-padded (its last positions masked).

Usage: /usr/bin/python3 bench/make_hf_bert.py [--out DIR] [--name NAME] [--layers L] [--hidden H]
           [--heads N] [--seq S] [--batch B] [--opset O] [--static]
"""
import argparse
import math
import os

import numpy as np
import onnx
from onnx import numpy_helper
import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads, self.head = heads, hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.dense = nn.Linear(hidden, hidden)
        self.norm = nn.LayerNorm(hidden, eps=1e-12)

    def split(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.head).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head) + mask
        ctx = torch.matmul(scores.softmax(dim=-1), v).permute(0, 2, 1, 3).contiguous()
        ctx = ctx.view(ctx.shape[0], ctx.shape[1], -1)
        return self.norm(self.dense(ctx) + x)


class Layer(nn.Module):
    def __init__(self, hidden, heads, inter):
        super().__init__()
        self.attn = SelfAttention(hidden, heads)
        self.up = nn.Linear(hidden, inter)
        self.down = nn.Linear(inter, hidden)
        self.norm = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x, mask):
        a = self.attn(x, mask)
        return self.norm(self.down(nn.functional.gelu(self.up(a))) + a)


class HfBert(nn.Module):
    def __init__(self, vocab, hidden, heads, layers, max_pos=512, types=2):
        super().__init__()
        self.word = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(max_pos, hidden)
        self.token_type = nn.Embedding(types, hidden)
        self.norm = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList([Layer(hidden, heads, 4 * hidden) for _ in range(layers)])
        self.pool = nn.Linear(hidden, hidden)

    def forward(self, input_ids, attention_mask, token_type_ids):
        s = input_ids.shape[1]
        pos = torch.arange(s, dtype=torch.long, device=input_ids.device).unsqueeze(0)
        x = self.norm(self.word(input_ids) + self.pos(pos) + self.token_type(token_type_ids))
        mask = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, mask)
        return x, torch.tanh(self.pool(x[:, 0]))


def write_input(path, name, array):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build", "models"))
    ap.add_argument("--name", default="hf_bert")
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--seq", type=int, default=32)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--vocab", type=int, default=1000)
    ap.add_argument("--opset", type=int, default=14)
    ap.add_argument("--static", action="store_true", help="fixed batch and sequence (no dynamic axes)")
    args = ap.parse_args()
    torch.manual_seed(1234)
    torch.set_num_threads(1)
    model = HfBert(args.vocab, args.hidden, args.heads, args.layers).eval()
    rng = np.random.default_rng(1234)
    b, s = args.batch, args.seq
    ids = rng.integers(0, args.vocab, size=(b, s)).astype(np.int64)
    mask = np.ones((b, s), dtype=np.int64)
    if b > 1:
        mask[1, s - s // 3:] = 0   # right padding
    types = np.zeros((b, s), dtype=np.int64)
    types[:, s // 2:] = 1
    mdir = os.path.join(args.out, args.name)
    ddir = os.path.join(mdir, "test_data_set_0")
    os.makedirs(ddir, exist_ok=True)
    path = os.path.join(mdir, "model.onnx")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    feeds = tuple(torch.from_numpy(a) for a in (ids, mask, types))
    with torch.no_grad():
        torch.onnx.export(model, feeds, path, opset_version=args.opset, input_names=names,
                          output_names=["last_hidden_state", "pooler_output"],
                          dynamic_axes=None if args.static else {n: {0: "batch", 1: "sequence"} for n in names},
                          do_constant_folding=True)
    onnx.checker.check_model(onnx.load(path))
    for k, (n, a) in enumerate(zip(names, (ids, mask, types))):
        write_input(os.path.join(ddir, f"input_{k}.pb"), n, a)
    print(f"{args.name}: {args.layers} layers, hidden {args.hidden}, {args.heads} heads, batch {b}, seq {s}, "
          f"opset {args.opset} -> {path}")


if __name__ == "__main__":
    main()
