#!/usr/bin/env bash
# Installs what the build and the tests need (Debian packages), only if something is missing.
set -euo pipefail
pkgs=(cmake make gcc clang-14 libclang-rt-14-dev libonnx-testdata python3-onnx python3-numpy python3-pytest
      libxnnpack-dev libpthreadpool-dev libpcre2-dev libjpeg-dev libpng-dev libwebp-dev libopenjp2-7-dev pkg-config
      libmicrohttpd-dev libjansson-dev python3-requests curl gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
echo "installing: ${missing[*]}"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
# New packages can change what CMake finds (e.g. libxnnpack-dev): the Makefile's build folders depend
# on this stamp and are configured again.
touch "$(cd "$(dirname "$0")/.." && pwd)/${DEPS_STAMP:-build-deps.stamp}"
