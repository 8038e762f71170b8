# cape: the entry point. It drives CMake; every target works on a fresh Debian 12 machine
# (missing packages are installed by scripts/install-deps.sh when run as root).
#
#   make                 build everything into $(BUILD)
#   make check           build and run the tests (ctest)        SAN=address|undefined for sanitizers
#                        STRESS_ALL=ON: the contract stress test in all 14 combinations (not 4)
#   make demo            the papers' matrix product on a local 3-node cape cluster vs native OpenMP
#   make bench           benchmarks (Release build in build-bench), ratios measured in one run
#   make bench-e2e       only the end-to-end one: cape run -n 3 jobs beside MPI (BENCH_E2E=full:
#                        the issue's sizes; BENCH_BASELINE=DIR: an earlier build beside it)
#   make repro           the CAPE papers' experiments on an emulated cluster (root), beside the papers'
#                        numbers: paper-repro/REPORT.md and plots (FULL=1: larger sizes; LINK=1gbit|none)
#   make fuzz            libFuzzer on the checkpoint reader, then the translator, FUZZ_SECONDS each (default 60)
#   make install PREFIX=/opt/cape
#   make clean

SAN ?=
BUILD ?= $(if $(SAN),build-san-$(SAN),build)
BUILD_TYPE ?= RelWithDebInfo
PREFIX ?= /usr/local
JOBS ?= $(shell nproc)
FUZZ_SECONDS ?= 60
CTEST_ARGS ?=
STRESS_ALL ?= OFF

FULL ?=
LINK ?= 100mbit

.PHONY: all deps configure build check demo bench bench-e2e repro fuzz install clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DCAPE_SANITIZE=$(SAN) -DCAPE_STRESS_ALL=$(STRESS_ALL) \
	  -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null

build: configure
	cmake --build $(BUILD) -j$(JOBS)

check: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) --timeout 600 $(CTEST_ARGS)

# Only what the demo needs, quietly (scripts/demo.sh builds it with a progress line).
demo: configure
	@JOBS=$(JOBS) scripts/demo.sh $(BUILD)

bench: deps
	@cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DCAPE_BENCH=ON >/dev/null
	cmake --build build-bench -j$(JOBS)
	scripts/bench.sh build-bench

bench-e2e: deps
	@cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DCAPE_BENCH=ON >/dev/null
	cmake --build build-bench -j$(JOBS) --target cape cape-cc
	scripts/bench-e2e.sh build-bench

repro: configure
	cmake --build $(BUILD) -j$(JOBS) --target cape cape-cc cape_cc cape_static
	python3 paper-repro/run.py --build $(BUILD) --link $(LINK) $(if $(FULL),--full)
	python3 paper-repro/report.py

fuzz: deps
	@cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCAPE_FUZZ=ON \
	  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ >/dev/null
	cmake --build build-fuzz -j$(JOBS) --target cape_fuzz_ckpt_reader cape_fuzz_translator
	mkdir -p build-fuzz/corpus build-fuzz/corpus-translator
	build-fuzz/tests/fuzz/cape_fuzz_ckpt_reader -max_total_time=$(FUZZ_SECONDS) \
	  build-fuzz/corpus tests/fuzz/seeds
	build-fuzz/tests/fuzz/cape_fuzz_translator -max_total_time=$(FUZZ_SECONDS) -max_len=65536 \
	  build-fuzz/corpus-translator tests/fuzz/translator_seeds

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf build build-*
