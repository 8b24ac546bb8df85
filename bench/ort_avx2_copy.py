#!/usr/bin/env python3
"""Makes a copy of onnxruntime-node 1.30 that takes its AVX2 kernels on an AVX-512 CPU, so that
cort's avx2 level (CORT_ISA=avx2) can be compared with ORT's avx2 code on the same core:

    /usr/bin/python3 bench/ort_avx2_copy.py                 # -> build/ort-avx2
    ORT_NODE_DIR=build/ort-avx2 /usr/bin/python3 bench/run_bench.py --isa avx2 --markdown

ORT has no switch for this: MLAS picks its kernels from CPUID and XCR0 once, when the library is
loaded. The copy's libonnxruntime.so.1 differs from the original in two conditional jumps, both
found by their instruction bytes a short way after an `xgetbv` (the OS-support read every x86
feature probe starts with), and the script stops unless each is found exactly once:

  * MLAS's platform set-up: `test $0x10000, <cpuid 7 ebx>` (AVX512F) followed by `je` past the
    AVX-512 block; the `je` becomes `jmp`, so the AVX2/FMA3 kernels stay selected;
  * onnxruntime::CPUIDInfo: `cmp $0xe6, <xcr0 & 0xe6>` followed by `je` into the block that sets
    its AVX-512 flags; the `je` becomes a 2-byte NOP, so those flags stay false.

Everything else in ORT (graph optimizations, threading, allocators) is unchanged. The copy is a
local measurement tool: nothing of ORT is committed, and its directory is under build/."""
import argparse, os, re, shutil, subprocess, sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = os.path.join("onnxruntime-node", "bin", "napi-v6", "linux", "x64", "libonnxruntime.so.1")
XGETBV = re.compile(rb"\x0f\x01\xd0")
WINDOW = 4096   # bytes after an xgetbv in which a site must lie
# (name, pattern with the jump's opcode as group "j", bytes written over the jump)
SITES = [
    # the AVX512F test, then (after the je) the XCR0 test `test $0xe0, %al` MLAS makes next
    ("MLAS AVX512F test",
     re.compile(rb"\x41?\xf7[\xc0-\xc7]\x00\x00\x01\x00(?P<j>\x74).[^\xa8]{0,8}\xa8\xe0", re.S), b"\xeb"),
    ("CPUIDInfo XCR0 AVX-512 state test",
     re.compile(rb"\x41?\x81[\xf8-\xff]\xe6\x00\x00\x00(?P<j>\x74)", re.S), b"\x66\x90"),
]


def find_package():
    for d in (os.environ.get("ORT_SOURCE_DIR"), REPO, os.path.join(REPO, "build", "ort")):
        if d and os.path.isfile(os.path.join(d, "node_modules", LIB)):
            return os.path.join(d, "node_modules")
    return None


def patch(data):
    data = bytearray(data)
    starts = [m.start() for m in XGETBV.finditer(data)]
    for name, pat, repl in SITES:
        hits = sorted({m.start() for x in starts for m in pat.finditer(data, x, x + WINDOW)})
        if len(hits) != 1:
            sys.exit(f"ort_avx2_copy: {name}: {len(hits)} matches (want 1); not the ORT 1.30 build this "
                     "script knows, nothing written")
        jump = pat.match(data, hits[0]).start("j")
        data[jump:jump + len(repl)] = repl
        print(f"  {name}: patched at file offset {jump:#x}")
    return bytes(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(REPO, "build", "ort-avx2"),
                    help="directory to create (ORT_NODE_DIR for the benchmarks); default build/ort-avx2")
    a = ap.parse_args()
    src = find_package()
    if not src:
        print("onnxruntime-node not found; installing it (bench/ort_reference.js)", file=sys.stderr)
        subprocess.run(["node", "-e", f"require({os.path.join(REPO, 'bench', 'ort_reference.js')!r}).loadOrt()"],
                       check=True)
        src = find_package()
        if not src:
            sys.exit("ort_avx2_copy: onnxruntime-node still not found")
    with open(os.path.join(src, LIB), "rb") as f:
        patched = patch(f.read())   # exits before anything is written if a site is not found
    dst = os.path.join(a.out, "node_modules")
    if os.path.exists(a.out):
        shutil.rmtree(a.out)
    print(f"copying {src} -> {dst}")
    shutil.copytree(src, dst, symlinks=True)
    lib = os.path.join(dst, LIB)
    with open(lib + ".tmp", "wb") as f:
        f.write(patched)
    os.replace(lib + ".tmp", lib)
    print(f"done: ORT_NODE_DIR={a.out}")


if __name__ == "__main__":
    main()
