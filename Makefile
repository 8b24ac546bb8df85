# Thin wrapper over CMake. `make` builds Release into build/; see README.md.
PREFIX ?= /usr/local
JOBS   ?= $(shell nproc 2>/dev/null || echo 2)
PY     ?= /usr/bin/python3
CMAKE_FLAGS ?=

.PHONY: all run check deps test conformance asan tsan asan-check tsan-check install fuzz fuzz-build fuzz-long bench clean aarch64 check-aarch64

all: build/Makefile
	@$(MAKE) --no-print-directory -C build -j$(JOBS)

# scripts/install_deps.sh touches DEPS_STAMP when it installed packages: every build folder configured
# before then is configured again (CMake then finds e.g. libxnnpack-dev; CORT_XNNPACK is AUTO), so
# `make run` on a fresh machine followed by `make check` does not keep a configuration without them.
# cmake leaves an unchanged Makefile untouched, hence the touch.
DEPS_STAMP := build-deps.stamp
$(DEPS_STAMP):
	@touch $@

build/Makefile: CMakeLists.txt $(DEPS_STAMP)
	@cmake -S . -B build -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null
	@touch $@

run: all
	./build/bin/cort demo demo/digits_cnn.onnx demo/samples

# Installs what the tests need (Debian packages) if missing, builds, runs every test. The build runs
# in a sub-make so that it sees the stamp install_deps.sh may just have touched.
check: deps
	@$(MAKE) --no-print-directory all
	@scripts/run_tests.sh build

deps:
	@DEPS_STAMP=$(DEPS_STAMP) scripts/install_deps.sh

test: all
	@scripts/run_tests.sh build

conformance: all
	@scripts/conformance.sh build; s=$$?; scripts/conformance.sh build 1.23 && exit $$s

build-asan/Makefile: CMakeLists.txt $(DEPS_STAMP)
	@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DCORT_SANITIZE=address -DCMAKE_C_COMPILER=clang-14 >/dev/null
	@touch $@
build-tsan/Makefile: CMakeLists.txt $(DEPS_STAMP)
	@cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCORT_SANITIZE=thread -DCMAKE_C_COMPILER=clang-14 >/dev/null
	@touch $@

asan: build-asan/Makefile
	@$(MAKE) --no-print-directory -C build-asan -j$(JOBS)
tsan: build-tsan/Makefile
	@$(MAKE) --no-print-directory -C build-tsan -j$(JOBS)

asan-check: deps
	@$(MAKE) --no-print-directory asan
	@CORT_LANE=asan scripts/run_tests.sh build-asan
tsan-check: deps
	@$(MAKE) --no-print-directory tsan
	@CORT_LANE=tsan scripts/run_tests.sh build-tsan

# 64-bit ARM: cross-built with Debian's gcc-aarch64-linux-gnu, tested under qemu-aarch64 (generic level).
AARCH64_EMU ?= qemu-aarch64 -L /usr/aarch64-linux-gnu
build-aarch64/Makefile: CMakeLists.txt cmake/aarch64-linux-gnu.cmake $(DEPS_STAMP)
	@cmake -S . -B build-aarch64 -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake >/dev/null
aarch64: build-aarch64/Makefile
	@$(MAKE) --no-print-directory -C build-aarch64 -j$(JOBS)
check-aarch64: deps
	@$(MAKE) --no-print-directory aarch64
	@CORT_LANE=aarch64 CORT_TEST_EMULATOR="$(AARCH64_EMU)" scripts/run_tests.sh build-aarch64

# An AVX2-only x86-64 CPU (AMD Zen 3: AVX2, FMA, F16C, no AVX-512) emulated by qemu-x86_64, so the
# CPU probe, the level choice and every test that asks which levels exist see such a CPU whatever
# this machine has. Unit tests and conformance at the levels that CPU has (generic, avx2).
X86_AVX2_CPU ?= EPYC-Milan
build-avx2-cpu/Makefile: CMakeLists.txt $(DEPS_STAMP)
	@cmake -S . -B build-avx2-cpu -DCMAKE_BUILD_TYPE=Release -DCORT_XNNPACK=OFF -DCORT_TEST_EMULATOR="qemu-x86_64;-cpu;$(X86_AVX2_CPU)" >/dev/null
	@touch $@
check-avx2-cpu: deps build-avx2-cpu/Makefile
	@$(MAKE) --no-print-directory -C build-avx2-cpu -j$(JOBS)
	@CORT_LANE=avx2-cpu CORT_TEST_EMULATOR="qemu-x86_64 -cpu $(X86_AVX2_CPU)" scripts/run_tests.sh build-avx2-cpu

install: all
	@cmake --install build --prefix $(PREFIX)

# libFuzzer targets (ASan+UBSan; docs/reliability.md): fuzz_model, fuzz_run, fuzz_values.
# make fuzz: replays tests/fuzz/regressions/, then FUZZ_SECONDS (default 15) per target (make check runs it).
# make fuzz-long FUZZ_SECONDS=1800: every target at once with -fork on the cores, niced; findings in
# build-fuzz/fuzz-findings/.
# fuzz_serve (cort-serve's request parser) when its libraries are installed
FUZZ_TARGETS := fuzz_model fuzz_run fuzz_values $(shell pkg-config --exists libmicrohttpd jansson 2>/dev/null && echo fuzz_serve)
fuzz-build:
	@cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCORT_FUZZ=ON -DCMAKE_C_COMPILER=clang-14 >/dev/null
	@$(MAKE) --no-print-directory -C build-fuzz -j$(JOBS) $(FUZZ_TARGETS)
fuzz: fuzz-build
	@scripts/fuzz.sh build-fuzz $(or $(FUZZ_SECONDS),15) $(FUZZ_TARGETS)
fuzz-long: fuzz-build
	@scripts/fuzz.sh build-fuzz $(or $(FUZZ_SECONDS),1800) --long $(FUZZ_TARGETS)

# cort vs ONNX Runtime 1.30: latency, session creation, peak RSS (docs/performance.md). Not part of check.
# make bench BENCH_ARGS=--quick   (or --models resnet50 --threads 1 --rounds 5 ...)
bench: all
	@$(PY) bench/run_bench.py $(BENCH_ARGS)

clean:
	rm -rf build build-asan build-tsan build-fuzz build-broken build-broken-xnnpack build-aarch64 build-avx2-cpu $(DEPS_STAMP)
