#!/usr/bin/python3
"""Train the demo digit classifier and export it for `make run`.

Trains a small CNN on the 8x8 handwritten digits bundled with scikit-learn
(1797 images, 10 classes), reports held-out test accuracy, and writes:

  demo/digits_cnn.onnx         opset 13, input "image" float32 [N,1,8,8],
                               output "logits" float32 [N,10]
  demo/samples/sample_K.npy    16 held-out test images, float32 [1,1,8,8]
  demo/samples/labels.txt      their true labels, one integer per line

Everything is seeded and runs single-threaded so the output is
byte-for-byte reproducible on the same torch build.

Usage: /usr/bin/python3 demo/make_demo.py [--out DIR] [--epochs N]
"""
import argparse
import os
import random
import time

import numpy as np
import torch
import torch.nn as nn
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

SEED = 1234
NUM_SAMPLES = 16


class DigitsCNN(nn.Module):
    """Two 3x3 conv layers, one 2x2 max-pool, two dense layers (38k params).

    Uses only Conv, Relu, MaxPool, Flatten and Gemm so the exported graph
    exercises the core CPU kernels without exotic ops.
    """

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.Conv2d(16, 32, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Linear(32 * 4 * 4, 64),
            nn.ReLU(),
            nn.Linear(64, 10),
        )

    def forward(self, x):
        x = self.features(x)
        x = torch.flatten(x, 1)
        return self.classifier(x)


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)


def load_data():
    digits = load_digits()
    x = (digits.images.astype(np.float32) / 16.0).reshape(-1, 1, 8, 8)
    y = digits.target.astype(np.int64)
    return train_test_split(x, y, test_size=0.25, random_state=SEED,
                            stratify=y)


def accuracy(model, x, y):
    model.eval()
    with torch.no_grad():
        pred = model(torch.from_numpy(x)).argmax(dim=1).numpy()
    return float((pred == y).mean())


def train(model, x_train, y_train, epochs, batch_size=32):
    gen = torch.Generator().manual_seed(SEED)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    loss_fn = nn.CrossEntropyLoss()
    xt = torch.from_numpy(x_train)
    yt = torch.from_numpy(y_train)
    for epoch in range(epochs):
        model.train()
        perm = torch.randperm(len(xt), generator=gen)
        total = 0.0
        for i in range(0, len(xt), batch_size):
            idx = perm[i:i + batch_size]
            opt.zero_grad()
            loss = loss_fn(model(xt[idx]), yt[idx])
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        sched.step()
        if epoch % 5 == 4 or epoch == epochs - 1:
            print(f"epoch {epoch + 1:3d}  train loss {total / len(xt):.4f}")


def export(model, path):
    model.eval()
    dummy = torch.zeros(1, 1, 8, 8)
    torch.onnx.export(
        model, dummy, path,
        opset_version=13,
        input_names=["image"],
        output_names=["logits"],
        dynamic_axes={"image": {0: "N"}, "logits": {0: "N"}},
        do_constant_folding=True,
    )
    import onnx
    m = onnx.load(path)
    onnx.checker.check_model(m)
    ops = sorted({n.op_type for n in m.graph.node})
    print(f"exported {path} ({os.path.getsize(path)} bytes), ops: {', '.join(ops)}")


def write_samples(model, x_test, y_test, out_dir):
    sample_dir = os.path.join(out_dir, "samples")
    os.makedirs(sample_dir, exist_ok=True)
    # Take, for k = 0..15, the (k // 10)-th test image of class k % 10, so
    # every digit appears at least once; no filtering on whether the model
    # gets them right.
    idx = [int(np.flatnonzero(y_test == k % 10)[k // 10])
           for k in range(NUM_SAMPLES)]
    x = x_test[idx]
    y = y_test[idx]
    for k in range(NUM_SAMPLES):
        np.save(os.path.join(sample_dir, f"sample_{k}.npy"),
                np.ascontiguousarray(x[k:k + 1], dtype=np.float32))
    with open(os.path.join(sample_dir, "labels.txt"), "w") as f:
        f.write("".join(f"{int(v)}\n" for v in y))
    model.eval()
    with torch.no_grad():
        pred = model(torch.from_numpy(x)).argmax(dim=1).numpy()
    print(f"samples: labels {y.tolist()}")
    print(f"samples: torch  {pred.tolist()} "
          f"({int((pred == y).sum())}/{NUM_SAMPLES} correct)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--epochs", type=int, default=30)
    args = ap.parse_args()

    seed_everything(SEED)
    x_train, x_test, y_train, y_test = load_data()
    print(f"train {len(x_train)} / test {len(x_test)} images")

    model = DigitsCNN()
    n_params = sum(p.numel() for p in model.parameters())
    t0 = time.time()
    train(model, x_train, y_train, args.epochs)
    print(f"trained {n_params} params in {time.time() - t0:.1f}s")

    acc_train = accuracy(model, x_train, y_train)
    acc_test = accuracy(model, x_test, y_test)
    print(f"train accuracy {acc_train * 100:.2f}%")
    print(f"test accuracy  {acc_test * 100:.2f}% "
          f"({int(round(acc_test * len(y_test)))}/{len(y_test)})")
    if acc_test < 0.95:
        raise SystemExit(f"test accuracy {acc_test:.4f} below 0.95")

    os.makedirs(args.out, exist_ok=True)
    export(model, os.path.join(args.out, "digits_cnn.onnx"))
    write_samples(model, x_test, y_test, args.out)


if __name__ == "__main__":
    main()
