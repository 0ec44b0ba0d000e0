# kcast -- the one build.
#
#   make            build/libkcast.a, build/libkcast.so, build/kcast, examples
#   make test       every CUnit suite and the CLI tests (one CUnit summary)
#   make reliability  the reliability cases alone (also part of make test)
#   make asan       the same tests under AddressSanitizer + UBSan
#   make valgrind   the fast suites under valgrind memcheck
#   make fuzz       run each fuzzer (PTX, model, CSV, fatbinary, Kernel Tuner) FUZZ_SECONDS (60)
#   make bench      benchmarks (bench/)
#   make deps       install the Debian packages the build needs (no-op if present)
#   make demo       the main job on the embedded default
#   make models     train datasets/models from the measured datasets, and the
#                   operator model build/models/operators-time.kcm
#   make docs       regenerate docs/cli.md from the help texts
#   make featmodel-check  feature models, leave one size out over the suite (build/featmodel)
#
# Every module folder contributes its *.c files; no file lists to keep in sync.
# BUILD=dir puts all outputs in another folder (e.g. for a sanitizer build).

BUILD      ?= build
CC         ?= cc
LLVM_CONFIG ?= llvm-config-22
CLANG      ?= clang-22
NVCC       ?= nvcc

# Debian packages the build and the tests need.  The one list: README and
# .ci/run both go through `make deps`.  The python3-* ones are for the
# Python package (python/: built by make python, tested by make test with
# pytest; numpy, pandas, scikit-learn and matplotlib are what it works with,
# venv and pip for the test that installs Kernel Tuner from PyPI).  Slurm and munge are for the test
# that brings up its own one-node cluster (tests/slurm/one-node.sh: its
# own key, configuration and daemons, stopped when it ends).
DEPS_PKGS := make gcc g++ libcunit1-dev libsqlite3-dev libcjson-dev libcsv-dev \
             zlib1g-dev liblz4-dev clang-22 llvm-22-dev libclang-22-dev libclang-rt-22-dev \
             libomp-22-dev valgrind sqlite3 pkgconf chromium \
             slurmctld slurmd slurm-client munge \
             python3 python3-dev python3-setuptools python3-pip python3-venv python3-numpy \
             python3-pandas python3-pytest python3-sklearn python3-scipy python3-matplotlib

LLVM_INC   := $(shell $(LLVM_CONFIG) --includedir 2>/dev/null)
LLVM_LIB   := $(shell $(LLVM_CONFIG) --libdir 2>/dev/null)

WARN       := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
              -Wmissing-prototypes -Wno-unused-parameter
CSTD       := -std=c11 -D_GNU_SOURCE
OPT        ?= -O2 -g
SANFLAGS   ?=
CFLAGS_ALL := $(CSTD) $(WARN) $(OPT) $(SANFLAGS) -fPIC -fopenmp -pthread \
              -I. -Iinclude -isystem $(LLVM_INC) $(EXTRA_CFLAGS)
LDLIBS_ALL := -lsqlite3 -lcjson -lcsv -lz -llz4 -lstdc++ -lm -ldl -fopenmp -pthread $(SANFLAGS)

# libclang and libLLVM are not linked: the front ends dlopen them
# (extractor/frontend_dl.c) by the SONAMEs of the LLVM compiled against.
soname      = $(shell readelf -d $(1) 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
LIBCLANG_SO := $(call soname,$(LLVM_LIB)/libclang-22.so)
LIBLLVM_SO  := $(call soname,$(LLVM_LIB)/libLLVM-22.so)
$(BUILD)/obj/extractor/frontend_dl.o: CFLAGS_ALL += -DFE_LLVM_LIBDIR='"$(LLVM_LIB)"' \
  $(if $(LIBCLANG_SO),-DFE_LIBCLANG='"$(LIBCLANG_SO)"') $(if $(LIBLLVM_SO),-DFE_LIBLLVM='"$(LIBLLVM_SO)"')

MODULES    := extractor emulator datasets model profiler runtime api
LIB_SRC    := $(foreach m,$(MODULES),$(wildcard $(m)/*.c))
LIB_SRC    := $(filter-out %_fuzz.c,$(LIB_SRC))
LIB_OBJ    := $(LIB_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/gpus_csv.o
CLI_SRC    := $(wildcard cli/*.c)
CLI_OBJ    := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
TEST_SRC   := $(wildcard tests/*.c)
TEST_OBJ   := $(TEST_SRC:%.c=$(BUILD)/obj/%.o)
BENCH_SRC  := $(wildcard bench/*.c)

.SECONDEXPANSION:
.PHONY: all test asan tsan valgrind fuzz bench deps demo docs clean accuracy
all: $(BUILD)/libkcast.a $(BUILD)/libkcast.so $(BUILD)/kcast

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_OBJ:.o=.d)

# The GPU table is data (model/gpus.csv, docs/gpus.md), compiled in as one
# C string that model/gpus.c parses on first use.
$(BUILD)/gen/gpus_csv.c: model/gpus.csv
	@mkdir -p $(dir $@)
	{ echo '/* generated from model/gpus.csv by the Makefile; do not edit */'; \
	  echo 'extern const char an__gpus_csv[];'; echo 'const char an__gpus_csv[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/  "/' -e 's/$$/\\n"/' $<; echo '  ;'; } > $@.tmp && mv $@.tmp $@
$(BUILD)/obj/gen/gpus_csv.o: $(BUILD)/gen/gpus_csv.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/libkcast.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# The shared library's SONAME is libkcast.so.<major> (include/kcast.h's
# KCAST_VERSION_MAJOR; docs/api.md, "Versions", says when it changes), its
# symbols versioned by api/libkcast.map; libkcast.so.<major> beside it is
# the name programs linked against it load.
KCAST_VER   := $(shell sed -n 's/^\#define KCAST_VERSION_STRING "\(.*\)"/\1/p' include/kcast.h)
KCAST_MAJOR := $(firstword $(subst ., ,$(KCAST_VER)))
KCAST_SONAME := libkcast.so.$(KCAST_MAJOR)
$(BUILD)/libkcast.so: $(LIB_OBJ) api/libkcast.map include/kcast.h
	$(CC) -shared -Wl,-soname,$(KCAST_SONAME) -Wl,--version-script=api/libkcast.map \
	  -o $@.tmp $(LIB_OBJ) $(LDLIBS_ALL) && mv $@.tmp $@
	ln -sf libkcast.so $(BUILD)/$(KCAST_SONAME)

$(BUILD)/kcast: $(CLI_OBJ) $(BUILD)/libkcast.a
	$(CC) -o $@ $(CLI_OBJ) $(BUILD)/libkcast.a $(LDLIBS_ALL)

# One test runner: every tests/*.c contributes suites (see tests/test_main.c).
$(BUILD)/kcast-tests: $(TEST_OBJ) $(BUILD)/libkcast.a
	$(CC) -o $@ $(TEST_OBJ) $(BUILD)/libkcast.a -lcunit $(LDLIBS_ALL)

# Kernel corpus: every tests/kernels/*.cu compiled by nvcc and by clang to
# PTX, and by clang to LLVM IR, in $(BUILD)/corpus (tests read it through
# KCAST_BUILD).  A compiler that is not installed is skipped with a note; one
# that fails fails the build.  Outputs are written to a temporary name and
# renamed, so an interrupted or failed compile leaves no stale target.
CORPUS_ARCH  ?= sm_90
KERNELS      := $(wildcard tests/kernels/*.cu)
NVCC_FOUND   := $(shell command -v $(NVCC) 2>/dev/null)
CLANG_FOUND  := $(shell command -v $(CLANG) 2>/dev/null)
CUDA_ROOT    ?= $(or $(CUDA_PATH),$(CUDA_HOME),$(patsubst %/bin/,%,$(dir $(NVCC_FOUND))),/usr/local/cuda)
CLANG_CUDA   := -x cuda --cuda-device-only -O3 --cuda-gpu-arch=$(CORPUS_ARCH) \
                --cuda-path=$(CUDA_ROOT) -Wno-unknown-cuda-version
CORPUS       := $(if $(NVCC_FOUND),$(KERNELS:tests/kernels/%.cu=$(BUILD)/corpus/%.nvcc.ptx)) \
                $(if $(CLANG_FOUND),$(KERNELS:tests/kernels/%.cu=$(BUILD)/corpus/%.clang.ptx) \
                                    $(KERNELS:tests/kernels/%.cu=$(BUILD)/corpus/%.clang.ll))

.PHONY: corpus
corpus: $(CORPUS)
	$(if $(NVCC_FOUND),,@echo "corpus: $(NVCC) not found on PATH, nvcc PTX skipped")
	$(if $(CLANG_FOUND),,@echo "corpus: $(CLANG) not found on PATH, clang PTX and IR skipped")

$(BUILD)/corpus/%.nvcc.ptx: tests/kernels/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) -ptx -arch=$(CORPUS_ARCH) $< -o $@.tmp && mv $@.tmp $@

$(BUILD)/corpus/%.clang.ptx: tests/kernels/%.cu
	@mkdir -p $(dir $@)
	$(CLANG) $(CLANG_CUDA) -S $< -o $@.tmp && mv $@.tmp $@

$(BUILD)/corpus/%.clang.ll: tests/kernels/%.cu
	@mkdir -p $(dir $@)
	$(CLANG) $(CLANG_CUDA) -S -emit-llvm $< -o $@.tmp && mv $@.tmp $@

# Injection library of `kcast profile` (profiler/inject/): CUDA/CUPTI
# headers at compile time only; libcupti, libcuda and libnvidia-ml are
# dlopen'ed at run time, so it builds and links on machines without a GPU
# driver.  Never sanitized: it is loaded into other programs.  Skipped with
# a note when the toolkit headers are missing.
CUDA_INC     ?= $(CUDA_ROOT)/include
INJECT_LIB   := $(if $(wildcard $(CUDA_INC)/cupti.h),$(BUILD)/libkcast_inject.so)
all: $(INJECT_LIB)
ifeq ($(INJECT_LIB),)
$(info make: $(CUDA_INC)/cupti.h not found, libkcast_inject.so skipped)
endif

$(BUILD)/libkcast_inject.so: profiler/inject/prof_inject.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(OPT) -fPIC -fvisibility=hidden -pthread -isystem $(CUDA_INC) \
	  -shared -o $@.tmp $< -ldl && mv $@.tmp $@

# The cudart replacement (runtime/cudart/): $(BUILD)/cudart/libcudart.so.13,
# loaded by nvcc programs (-cudart shared) that `kcast run` starts.  Its own
# objects, never sanitized (it is loaded into other programs), built against
# the toolkit's cuda_runtime_api.h; exports the CUDA API only, under the
# version node libcudart.so.13.  Skipped without the toolkit's headers.
CUDART_LIB   := $(if $(wildcard $(CUDA_INC)/cuda_runtime_api.h),$(BUILD)/cudart/libcudart.so.13)
CUDART_SRC   := $(filter-out extractor/frontend%.c %_fuzz.c,$(wildcard extractor/*.c emulator/*.c)) \
                runtime/rt_fatbin.c runtime/rt_records.c $(wildcard runtime/cudart/*.c)
CUDART_OBJ   := $(CUDART_SRC:%.c=$(BUILD)/cudart/obj/%.o)
all: $(CUDART_LIB)
-include $(CUDART_OBJ:.o=.d)
$(BUILD)/cudart/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(OPT) -fPIC -fopenmp -pthread -I. -isystem $(CUDA_INC) -MMD -MP -c $< -o $@
$(BUILD)/cudart/libcudart.so.13: $(CUDART_OBJ) runtime/cudart/libcudart.map \
                                 runtime/cudart/rt_ptds.ld
	$(CC) -shared -Wl,-soname,libcudart.so.13 -Wl,--version-script=runtime/cudart/libcudart.map \
	  -Wl,--no-undefined -o $@.tmp $(CUDART_OBJ) runtime/cudart/rt_ptds.ld -llz4 -lm -ldl \
	  -fopenmp -pthread && mv $@.tmp $@

# GPU architectures of the programs built for GPUs (the suite, the test
# programs; `kcast nvcc` makes the same, extractor/frontend.h
# FE_GPU_ARCHS): machine code for each generation from sm_70 (V100) to
# sm_90 (H100/H200) that this nvcc makes -- CUDA 13 starts at sm_75 -- and
# PTX of the newest for later GPUs and for the emulator, so an array job
# spread over T4, A100, A10, L4 and H100 nodes runs the same binaries.
# SUITE_ARCHS="90" builds for one (faster); docs/gpu-check.md.
NVCC_CODES   := $(if $(NVCC_FOUND),$(shell $(NVCC) --list-gpu-code 2>/dev/null))
SUITE_ARCHS  ?= $(patsubst sm_%,%,$(filter $(patsubst %,sm_%,70 75 80 86 89 90),$(NVCC_CODES)))
SUITE_LAST   := $(lastword $(SUITE_ARCHS))
SUITE_GENCODE := $(foreach a,$(filter-out $(SUITE_LAST),$(SUITE_ARCHS)),-gencode arch=compute_$(a),code=sm_$(a)) \
                 -gencode arch=compute_$(or $(SUITE_LAST),90),code=[sm_$(or $(SUITE_LAST),90),compute_$(or $(SUITE_LAST),90)]

# CUDA test programs (tests/programs/*.cu), for GPU machines: SUITE_ARCHS'
# machine code and PTX.  `make gpu-check` builds and runs them
# (docs/gpu-check.md).
GPU_GENCODE  ?= $(SUITE_GENCODE)
# rt_rdc is relocatable device code in two files: rt_rdc_dev.cu is its
# partner, not a program.
PROGRAMS     := $(patsubst tests/programs/%.cu,$(BUILD)/programs/%,\
                  $(filter-out tests/programs/rt_rdc_dev.cu,$(wildcard tests/programs/*.cu)))
.PHONY: programs gpu-check
programs: $(PROGRAMS)
$(BUILD)/programs/%: tests/programs/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) -O2 $(GPU_GENCODE) -o $@.tmp $< && mv $@.tmp $@
$(BUILD)/programs/rt_rdc: tests/programs/rt_rdc.cu tests/programs/rt_rdc_dev.cu
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -rdc=true $(GPU_GENCODE) -o $@.tmp $^ && mv $@.tmp $@
gpu-check:
	BUILD=$(BUILD) profiler/gpu_check.sh

# The kernel suite (datasets/suite): self-checking CUDA programs, each with
# PTX for the emulator and machine code for SUITE_ARCHS (the flags `kcast
# nvcc` uses).  `make datasets` runs datasets/suite/suite.txt under `kcast
# run` into datasets/data/suite-features.db (+ a provenance note).
# SUITE_NVCCFLAGS replaces the whole set (docs/gpu-check.md).
SUITE_NVCCFLAGS ?= -O2 -cudart shared --no-compress $(SUITE_GENCODE)
SUITE_PROGS := $(patsubst datasets/suite/%.cu,$(BUILD)/suite/%,$(wildcard datasets/suite/*.cu))
# The fast subset `make test` runs under kcast run (tests/test_suite.c).
SUITE_FAST  := gemm_tiled reduce_shuffle histogram_shared scan stencil2d bfs gemm_mma lu nw
.PHONY: suite datasets
suite: $(SUITE_PROGS)
# The flags are a prerequisite too: a changed SUITE_NVCCFLAGS rebuilds.
SUITE_FLAGS_NOW := $(shell mkdir -p $(BUILD)/suite && f=$(BUILD)/suite/.nvccflags && \
  printf '%s\n' '$(SUITE_NVCCFLAGS)' | cmp -s - $$f || printf '%s\n' '$(SUITE_NVCCFLAGS)' > $$f)
$(BUILD)/suite/%: datasets/suite/%.cu $(wildcard datasets/suite/*.h) $(BUILD)/suite/.nvccflags
	@mkdir -p $(dir $@)
	$(NVCC) $(SUITE_NVCCFLAGS) -o $@.tmp $< && mv $@.tmp $@
datasets: all suite
	SUITE_NVCCFLAGS="$(SUITE_NVCCFLAGS)" datasets/suite/run-suite.sh $(BUILD)/kcast \
	  $(BUILD)/suite datasets/suite/suite.txt datasets/data/suite-features.db

# make gpu-check's programs, prebuilt for a GPU machine without the build's
# packages: $(BUILD)/gpu-bundle (profiler/gpu_bundle.sh; docs/gpu-check.md).
# After SUITE_PROGS: prerequisites are expanded where the rule is read.
.PHONY: gpu-bundle
gpu-bundle: $(BUILD)/gpu-bundle/MANIFEST
$(BUILD)/gpu-bundle/MANIFEST: $(BUILD)/kcast $(INJECT_LIB) $(PROGRAMS) $(SUITE_PROGS) \
                              profiler/gpu_bundle.sh
	profiler/gpu_bundle.sh $(BUILD) $(BUILD)/gpu-bundle

# Trained models (datasets/models): a time model, and a power model where
# power was recorded, per GPU measured in datasets/data, each chosen by
# cross-validation (tools/train-models.sh; provenance in PROVENANCE.md).
# The operator model (tools/train-op-model.sh): the NeuSight training set
# beside the project imported into $(BUILD)/models/operators.db and one
# cross-GPU time forest trained on it, $(BUILD)/models/operators-time.kcm,
# which `kcast predict --op` uses by default.  A build product: remade
# from the data, byte for byte, never committed.
OP_DATA ?= ../shared/data/neusight-train
.PHONY: models
models: $(BUILD)/kcast
	KCAST=$(BUILD)/kcast tools/train-models.sh
	tools/train-op-model.sh $(BUILD)/kcast $(OP_DATA) $(BUILD)/models

# Examples (examples/): programs that use only the public header and link
# against libkcast.so (found next to them through $ORIGIN), as a user's
# program would.  tests/test_sched.c runs the scheduler.
EXAMPLES := $(BUILD)/examples/sched
.PHONY: examples
examples: $(EXAMPLES)
all: $(EXAMPLES)
$(BUILD)/examples/sched: examples/scheduler/sched.c include/kcast.h $(BUILD)/libkcast.so
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(OPT) $(SANFLAGS) -Iinclude -o $@ $< -L$(BUILD) -lkcast \
	  -Wl,-rpath,'$$ORIGIN/..' -lsqlite3 -lm

# Fuzzers (libFuzzer, clang-22, with ASan and UBSan), one per reader of
# outside bytes: ptx (the PTX parser), model (the .kcm loader), csv (the
# CSV loader), fatbin (the fatbinary reader), kt (the Kernel Tuner
# cachefile reader), nsys and ncu (the Nsight Systems CSV/SQLite and Nsight
# Compute CSV readers).  Each is built from the
# sources of its module alone, with the project's warnings and -Werror, and
# make test builds them all (the reliability suite runs each on its seeds
# for a moment).  make fuzz runs each for FUZZ_SECONDS (60) from the seeds
# in $(BUILD)/fuzz/corpus-NAME; CI runs it after make test.
FUZZ_SECONDS ?= 60
FUZZERS      := ptx model csv fatbin kt nsys ncu
FUZZ_BINS    := $(if $(CLANG_FOUND),$(FUZZERS:%=$(BUILD)/fuzz/%_fuzz))
# (-Wno-pass-failed: UBSan's checks keep the forest's `omp simd` loops from
# vectorizing, which clang reports as a warning; a missed optimization of
# the instrumented build, not a defect.)
FUZZ_FLAGS   := $(CSTD) $(WARN) -Wno-pass-failed -O1 -g -I. -Iinclude \
                -fsanitize=fuzzer,address,undefined
FUZZ_SRC_ptx    := $(filter-out extractor/frontend%.c,$(wildcard extractor/*.c))
FUZZ_SRC_model  := $(wildcard model/*.c) $(BUILD)/gen/gpus_csv.c
FUZZ_SRC_csv    := $(FUZZ_SRC_model)
FUZZ_SRC_fatbin := runtime/rt_fatbin.c
FUZZ_SRC_kt     := datasets/ds_kerneltuner.c
FUZZ_SRC_nsys   := profiler/prof_nsight.c profiler/prof_ingest.c datasets/ds.c \
                   datasets/ds_foreign.c $(FUZZ_SRC_ptx)
FUZZ_SRC_ncu    := $(FUZZ_SRC_nsys)
FUZZ_LIBS_ptx    := -lm
FUZZ_LIBS_model  := -fopenmp -lcsv -lz -lm
FUZZ_LIBS_csv    := $(FUZZ_LIBS_model)
FUZZ_LIBS_fatbin := -llz4 -ldl
FUZZ_LIBS_kt     := -lcjson -lz -pthread
FUZZ_LIBS_nsys   := -lsqlite3 -lcsv -lm
FUZZ_LIBS_ncu    := $(FUZZ_LIBS_nsys)
.PHONY: fuzz-build
fuzz-build: $(FUZZ_BINS)
$(BUILD)/fuzz/%_fuzz: tests/fuzz/%_fuzz.c tests/fuzz/fuzz_util.h tests/fuzz/nsight_fuzz.h \
                      $$(FUZZ_SRC_$$*) \
                      $(wildcard extractor/*.h model/*.h runtime/*.h profiler/*.h datasets/*.h)
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_FLAGS) $(if $(findstring -fopenmp,$(FUZZ_LIBS_$*)),-fopenmp) -o $@.tmp \
	  $< $(FUZZ_SRC_$*) $(FUZZ_LIBS_$*) && mv $@.tmp $@

# Seeds: the PTX samples, a small model and CSV (trained by kcast), the
# fatbinaries of the suite programs make test builds, an nsys
# cuda_gpu_trace CSV and SQLite export and an ncu raw page
# (tests/fuzz/seeds).
fuzz: $(FUZZ_BINS) $(BUILD)/kcast $(SUITE_FAST:%=$(BUILD)/suite/%)
	$(if $(CLANG_FOUND),,$(error make fuzz needs $(CLANG) (make deps)))
	@mkdir -p $(FUZZERS:%=$(BUILD)/fuzz/corpus-%)
	cp -n tests/ptx/*.ptx $(BUILD)/fuzz/corpus-ptx/ 2>/dev/null || true
	printf 'a,b,y\n1,2,3\n2,0.5,4\n3,1e3,5\n4,-2,6\n' > $(BUILD)/fuzz/corpus-csv/seed.csv
	$(BUILD)/kcast train --csv $(BUILD)/fuzz/corpus-csv/seed.csv --target y --trees 3 \
	  --min-leaf 1 -o $(BUILD)/fuzz/corpus-model/seed.kcm > /dev/null
	$(BUILD)/kcast featmodel fit datasets/data/suite-features.db --kernel triad \
	  -o $(BUILD)/fuzz/corpus-model/seed.kcf 2> /dev/null
	$(BUILD)/kcast featmodel fit datasets/data/suite-features.db \
	  --kernel 'gemm_tiled_kernel<T>' -o $(BUILD)/fuzz/corpus-model/template.kcf 2> /dev/null
	$(BUILD)/kcast featmodel fit datasets/data/suite-features.db --kernel lu_update_kernel \
	  -o $(BUILD)/fuzz/corpus-model/difference.kcf 2> /dev/null
	printf '%s' '{"device_name": "NVIDIA A100-PCIE-40GB", "kernel_name": "k", "problem_size": [4096],' \
	  ' "tune_params_keys": ["block_size_x", "tile"], "tune_params": {}, "cache": {' \
	  '"32,1": {"block_size_x": 32, "tile": 1, "time": 1.5, "times": [1.4, 1.6]},' \
	  '"64,2": {"block_size_x": 64, "tile": 2, "time": "CompileFailedConfig"},' \
	  > $(BUILD)/fuzz/corpus-kt/unterminated.json
	{ cat $(BUILD)/fuzz/corpus-kt/unterminated.json; echo '}}'; } | gzip > $(BUILD)/fuzz/corpus-kt/seed.json.gz
	for p in $(SUITE_FAST); do objcopy -O binary --only-section=.nv_fatbin \
	  $(BUILD)/suite/$$p $(BUILD)/fuzz/corpus-fatbin/$$p.fatbin || exit 1; done
	cp tests/fuzz/seeds/nsys-* $(BUILD)/fuzz/corpus-nsys/
	cp tests/fuzz/seeds/ncu-* $(BUILD)/fuzz/corpus-ncu/
	rm -f $(BUILD)/fuzz/corpus-nsys/export.sqlite && \
	  sqlite3 $(BUILD)/fuzz/corpus-nsys/export.sqlite < tests/fuzz/seeds/nsys-export.sql
	for f in $(FUZZERS); do \
	  echo "== $$f fuzzer, $(FUZZ_SECONDS) s"; \
	  $(BUILD)/fuzz/$${f}_fuzz -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    -max_len=65536 -rss_limit_mb=2048 $(BUILD)/fuzz/corpus-$$f || exit 1; \
	done

# The Python package (python/): the extension kcast._kcast over libkcast.a
# and the package's modules, built into $(BUILD)/python (PYTHONPATH for the
# tests and benchmarks); `pip install ./python` installs it.  Debian's
# python3 (make deps' packages), or PYTHON=...  Not in sanitizer builds
# (the extension would need their runtime preloaded into python).
PYTHON      ?= $(firstword $(wildcard /usr/bin/python3) python3)
PY_FOUND    := $(shell $(PYTHON) -c 'import sysconfig, numpy' 2>/dev/null && echo yes)
PY_EXT      := $(if $(and $(PY_FOUND),$(if $(SANFLAGS),,yes)),$(BUILD)/python/kcast/.built)
.PHONY: python
python: $(BUILD)/libkcast.a
	@$(if $(PY_FOUND),,echo "make python: $(PYTHON) with numpy not found (make deps)"; exit 1)
	$(MAKE) --no-print-directory $(BUILD)/python/kcast/.built
$(BUILD)/python/kcast/.built: $(BUILD)/libkcast.a include/kcast.h $(wildcard python/kcast/*.py) \
                              python/kcast/_kcast.c python/setup.py
	cd python && KCAST_BUILD=$(abspath $(BUILD)) $(PYTHON) setup.py -q build \
	  --build-base $(abspath $(BUILD))/python-build --build-lib $(abspath $(BUILD))/python \
	  > /dev/null
	touch $@

# Tests find the CLI and scratch space through the environment.
TEST_DEPS := $(BUILD)/kcast $(BUILD)/kcast-tests $(BUILD)/libkcast.so corpus $(INJECT_LIB) \
             $(CUDART_LIB) $(SUITE_FAST:%=$(BUILD)/suite/%) $(EXAMPLES) $(FUZZ_BINS) \
             $(if $(INJECT_LIB),$(BUILD)/gpu-bundle/MANIFEST) $(PY_EXT)
TEST_ENV  := KCAST_BIN=$(abspath $(BUILD)/kcast) KCAST_BUILD=$(abspath $(BUILD)) \
             KCAST_PYTHON=$(PYTHON)
test: $(TEST_DEPS)
	$(TEST_ENV) $(BUILD)/kcast-tests

# The reliability cases alone (tests/test_reliability.c,
# tests/test_reliability_answers.c and tests/test_reliability_journeys.c;
# make test runs them too): hostile names, full disks, kills, concurrent
# writers, bad models, CSV and PTX; answers that must not be silently
# wrong, and a new user's journeys.
.PHONY: reliability
reliability: $(TEST_DEPS)
	$(TEST_ENV) $(BUILD)/kcast-tests reliability reliability_answers reliability_journeys

# Sanitizers: a separate build folder, same tests.  OpenMP's runtime is not
# instrumented; leak checking stays on.
asan:
	$(MAKE) BUILD=build/asan OPT="-O1 -g -fno-omit-frame-pointer" \
	  SANFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined" test

# ThreadSanitizer on the public API suite (tests/test_api.c: one model, many
# threads).  Its own build folder; OpenMP's runtime is not instrumented, so
# the emulator runs on one thread there.
tsan:
	$(MAKE) BUILD=build/tsan SANFLAGS="-fsanitize=thread" \
	  build/tsan/kcast-tests build/tsan/libkcast.so
	KCAST_BUILD=$(abspath build/tsan) OMP_NUM_THREADS=1 TSAN_OPTIONS=halt_on_error=1 \
	  build/tsan/kcast-tests api featmodel

# The fast suites under valgrind (memcheck): every error and every definite
# leak fails.  The emulator-kernel and CLI suites run under `make asan`.
VALGRIND_SUITES ?= ptx_parse cfg features datasets emu emu_alu rf mangrove profiler
valgrind: $(BUILD)/kcast $(BUILD)/kcast-tests corpus
	KCAST_BIN=$(abspath $(BUILD)/kcast) KCAST_BUILD=$(abspath $(BUILD)) OMP_NUM_THREADS=2 \
	  valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite \
	  $(BUILD)/kcast-tests $(VALGRIND_SUITES)

# BENCHES picks some of ptx emu rf api run import (default: all of them).
BENCHES ?= all
bench: $(BUILD)/kcast
	@$(MAKE) --no-print-directory -C bench BUILD=$(abspath $(BUILD)) CC="$(CC)" \
	  CSTD="$(CSTD)" WARN="$(WARN)" OPT="$(OPT)" SANFLAGS="$(SANFLAGS)" LDLIBS_ALL="$(LDLIBS_ALL)" \
	  $(BENCHES)

# Feature models, leave one size out (tools/featmodel-check.sh) over the
# shipped suite dataset, time by the analytic estimate and by a T4 forest
# trained on the GPU Mangrove tutorial data, into build/featmodel.
.PHONY: featmodel-check
featmodel-check: all
	tools/featmodel-check.sh $(BUILD)/kcast $(BUILD)/featmodel ../shared/data/mangrove-tutorial

# make install PREFIX=DIR (default /usr/local; DESTDIR for staging): the CLI,
# the library (shared and static), the header, a pkg-config file, the
# cudart replacement and the injection library (where they were built;
# kcast finds them in lib/kcast beside its bin), and manual pages made from
# the help texts (tools/gen-man.sh).  `cc app.c $(pkg-config --cflags
# --libs kcast)` links the shared library; `pkg-config --static` adds
# Libs.private for libkcast.a.  tests/test_install.c installs into a
# temporary prefix and builds a program against it.
PREFIX      ?= /usr/local
INSTALL_DIR  = $(DESTDIR)$(PREFIX)
.PHONY: install
install: $(BUILD)/kcast $(BUILD)/libkcast.so $(BUILD)/libkcast.a $(CUDART_LIB) $(INJECT_LIB)
	install -d $(INSTALL_DIR)/bin $(INSTALL_DIR)/lib/pkgconfig $(INSTALL_DIR)/include \
	  $(INSTALL_DIR)/share/man/man1
	install -m 755 $(BUILD)/kcast $(INSTALL_DIR)/bin/kcast
	install -m 755 $(BUILD)/libkcast.so $(INSTALL_DIR)/lib/libkcast.so.$(KCAST_VER)
	ln -sf libkcast.so.$(KCAST_VER) $(INSTALL_DIR)/lib/$(KCAST_SONAME)
	ln -sf $(KCAST_SONAME) $(INSTALL_DIR)/lib/libkcast.so
	install -m 644 $(BUILD)/libkcast.a $(INSTALL_DIR)/lib/libkcast.a
	install -m 644 include/kcast.h $(INSTALL_DIR)/include/kcast.h
	$(if $(CUDART_LIB),install -d $(INSTALL_DIR)/lib/kcast/cudart && \
	  install -m 755 $(CUDART_LIB) $(INSTALL_DIR)/lib/kcast/cudart/libcudart.so.13)
	$(if $(INJECT_LIB),install -d $(INSTALL_DIR)/lib/kcast && \
	  install -m 755 $(INJECT_LIB) $(INSTALL_DIR)/lib/kcast/libkcast_inject.so)
	$(if $(wildcard $(BUILD)/models/operators-time.kcm),install -d $(INSTALL_DIR)/lib/kcast/models && \
	  install -m 644 $(BUILD)/models/operators-time.kcm $(INSTALL_DIR)/lib/kcast/models/)
	printf '%s\n' 'prefix=$(PREFIX)' 'exec_prefix=$${prefix}' 'libdir=$${exec_prefix}/lib' \
	  'includedir=$${prefix}/include' '' 'Name: kcast' \
	  'Description: predict execution time and power of CUDA kernel launches' \
	  'Version: $(KCAST_VER)' 'Libs: -L$${libdir} -lkcast' \
	  'Libs.private: -lsqlite3 -lcjson -lcsv -lz -llz4 -lstdc++ -lm -ldl -lgomp -lpthread' \
	  'Cflags: -I$${includedir}' > $(INSTALL_DIR)/lib/pkgconfig/kcast.pc
	tools/gen-man.sh $(BUILD)/kcast $(INSTALL_DIR)/share/man/man1

# docs/cli.md from the help texts (a test checks it is current).
docs: $(BUILD)/kcast
	tools/gen-cli-doc.sh $(BUILD)/kcast > docs/cli.md.tmp && mv docs/cli.md.tmp docs/cli.md

# The main job on the embedded default: static features of a suite kernel,
# a suite kernel's time and power predicted on every known GPU (sampled
# emulation, analytic estimate until trained models ship), one suite program
# run unmodified on the CPU emulator into a dataset, the shipped suite
# dataset's summary, an operator launch on every GPU, and -- where the GPU
# Mangrove tutorial data is beside
# the project -- a forest cross-validated on real GPU times.
MANGROVE ?= ../shared/data/mangrove-tutorial
demo: all $(BUILD)/suite/gemm_tiled
	$(BUILD)/kcast extract datasets/suite/gemm_tiled.cu
	$(BUILD)/kcast predict datasets/suite/triad.cu --kernel triad --grid 4096 --block 256 \
	  --arg buf:4M --arg buf:4M:randf --arg buf:4M:randf:2 --arg 3.0 --arg 1048576 --gpu all
	rm -f $(BUILD)/demo.db
	$(BUILD)/kcast run -o $(BUILD)/demo.db -- $(BUILD)/suite/gemm_tiled 128 16
	$(BUILD)/kcast dataset stats datasets/data/suite-features.db
	@echo "== an operator launch on every GPU of the table (the operator model of make models"
	@echo "   where it was made, else the analytic estimate):"
	$(BUILD)/kcast predict --op 'bmm B=8 M=512 N=512 K=64' --gpu all
	@if [ -f $(MANGROVE)/cuda_flux_metrics.db ]; then \
	  rm -f $(BUILD)/demo-mangrove.db; \
	  $(BUILD)/kcast dataset import-mangrove --features $(MANGROVE)/cuda_flux_metrics.db \
	    --time $(MANGROVE)/kernel_time_T4.db --gpu T4 -o $(BUILD)/demo-mangrove.db && \
	  echo "== kcast cv with no options (kcast's defaults, docs/accuracy.md):"; \
	  $(BUILD)/kcast cv $(BUILD)/demo-mangrove.db --gpu T4 --target time && \
	  echo "== GPU Mangrove's method (its twelve features, extra trees, log target):"; \
	  $(BUILD)/kcast cv $(BUILD)/demo-mangrove.db --gpu T4 --target time --log-target \
	    --extra-trees --min-leaf 1 --features mangrove --base none --calibrate --folds 5; \
	  echo "(one 5-fold split of 43 launches: its median APE moves with --seed;"; \
	  echo " 'make accuracy' compares the methods over several seeds on all the real data)"; \
	else echo "demo: $(MANGROVE) not found, forest cross-validation skipped"; fi

# Accuracy on the real GPU timings beside the project (docs/accuracy.md):
# kcast's defaults, its best documented configuration, GPU Mangrove's method
# and a parameters-only forest, side by side (SEEDS=5 seeds each).
SHARED_DATA ?= ../shared/data
accuracy: all
	OUT=$(BUILD)/accuracy tools/accuracy.sh $(BUILD)/kcast $(SHARED_DATA)

# Install what the build needs; does nothing when everything is present.
deps:
	@missing=""; for p in $(DEPS_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make deps: installing$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	else echo "make deps: all packages present"; fi

clean:
	rm -rf $(BUILD)
