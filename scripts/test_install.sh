#!/usr/bin/env bash
# `make install PREFIX=<tmp>` then build the README's C example against the installed copy, both with
# CMake's find_package(cort) and with pkg-config, run it, and import the installed Python package.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$root"
make --no-print-directory install PREFIX="$tmp/prefix" >/dev/null
awk '/^```c$/{f=1;next} /^```$/{if(f){exit}} f' README.md > "$tmp/main.c"
mkdir -p "$tmp/consumer"
cat > "$tmp/consumer/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.16)
project(consumer C)
find_package(cort REQUIRED)
add_executable(consumer $tmp/main.c)
target_link_libraries(consumer PRIVATE cort::cort_shared)
CM
cmake -S "$tmp/consumer" -B "$tmp/consumer/b" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
make --no-print-directory -C "$tmp/consumer/b" >/dev/null
out1=$(LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/consumer/b/consumer")
cc -std=c11 "$tmp/main.c" $(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --cflags --libs cort) -o "$tmp/pc"
out2=$(LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/pc")
py=$(PYTHONPATH="$tmp/prefix/lib/python3/dist-packages" /usr/bin/python3 -c \
    "import cort; s = cort.InferenceSession('demo/digits_cnn.onnx'); print(cort._LIBRARY_PATH)")
echo "find_package: $out1; pkg-config: $out2; python loads $py"
case "$out1$out2" in *digit*digit*) ;; *) echo "installed example did not run"; exit 1 ;; esac
case "$py" in "$tmp/prefix/lib/libcort.so") ;; *) echo "python package does not load the installed library"; exit 1 ;; esac
