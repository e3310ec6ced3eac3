#!/bin/sh
# test/cross_bits.sh: --reference gives the same bits on every target (README, Porting). Builds gna for
# each target whose compiler is installed (s390x, armhf, i686 with SSE2, riscv64, aarch64 under
# qemu-user; wasm32-wasi under node; a bare-metal Cortex-M55 under qemu-system-arm) and this machine's
# reference build (no SIMD, no FMA contraction), then compares, byte for byte, on every fixture: the
# logits, the logits with head 0 of layer 0 removed, and a KV-retrieval log of the demo Llama (prompts,
# log-likelihoods, answers). Prints one line per target and check; exits 1 if any differs.
set -u
B=build/bits
mkdir -p $B/bin
WARN="-Wall -Wextra -Wpedantic"
cc -std=c11 -O2 $WARN -ffp-contract=off -DGNA_NO_SIMD -pthread gna.c -lm -o $B/bin/x86 || exit 1
targets=""
cross() { # name compiler flags runner
    command -v "$2" >/dev/null 2>&1 || { echo "skip $1: no $2"; return; }
    "$2" -std=c11 -O2 $WARN -ffp-contract=off -fexcess-precision=fast $3 -static -pthread gna.c -lm -o $B/bin/$1 || exit 1
    eval "run_$1() { $4 $B/bin/$1 \"\$@\"; }"
    targets="$targets $1"
}
cross s390x s390x-linux-gnu-gcc "" qemu-s390x
cross armhf arm-linux-gnueabihf-gcc "" qemu-arm
cross i686 i686-linux-gnu-gcc "-msse2 -mfpmath=sse" qemu-i386
cross riscv64 riscv64-linux-gnu-gcc "" qemu-riscv64
cross aarch64 aarch64-linux-gnu-gcc "" qemu-aarch64
if command -v clang >/dev/null 2>&1 && make -s build/wasm/gna.wasm >/dev/null 2>&1; then
    run_wasm() { node --no-warnings test/wasi_run.mjs build/wasm/gna.wasm "$@"; }
    targets="$targets wasm"
else echo "skip wasm: no clang for wasm32-wasi"; fi
if command -v arm-none-eabi-gcc >/dev/null 2>&1 && make -s build/m55/gna.elf >/dev/null 2>&1; then
    # semihosting passes the command line as one string of at most 254 characters, split at spaces:
    # the M55 runs in $B, where f and m are the fixtures and the models
    ln -sfn ../../test/fixtures $B/f && ln -sfn ../../test/models $B/m
    run_m55() { a=""; for x in gna "$@"; do
            a="$a,arg=$(printf '%s' "$x" | sed "s|^test/fixtures/|f/|; s|^test/models/|m/|; s|^$B/||; s/,/,,/g")"; done
        (cd $B && qemu-system-arm -M mps3-an547 -nographic -monitor none -serial none -semihosting-config "enable=on,target=native$a" \
            -kernel ../m55/gna.elf 2>&1 | grep -v '^m55: heap'); }
    targets="$targets m55"
else echo "skip m55: no arm-none-eabi-gcc"; fi
run_x86() { $B/bin/x86 "$@"; }

# every check of one program (run_$1) into $B/$1/; short names, for the M55's command line
checks() {
    rm -rf $B/$1 && mkdir -p $B/$1
    for dir in test/fixtures/*/; do
        dir=${dir%/}; n=$(basename "$dir")
        [ -f "$dir/tokens.txt" ] || continue
        tokens=$(tr -d '\n' <"$dir/tokens.txt")
        run_$1 logits -q --reference -m "$dir" --tokens "$tokens" -o $B/$1/$n.npy >/dev/null
        run_$1 logits -q --reference -m "$dir" --tokens "$tokens" --mask L0H0 -o $B/$1/$n.m.npy >/dev/null
    done
    run_$1 kv -q --reference -m test/models/llama_demo --samples 2 --pairs 10 --seed 1 --log $B/$1/kv.jsonl >/dev/null
}
checks x86
failed=0
for t in $targets; do
    started=$(date +%s)
    checks $t
    bad=""
    for f in $B/x86/*.npy; do cmp -s "$f" "$B/$t/$(basename "$f")" || bad="$bad $(basename "$f")"; done
    # the log's first line names the model's path, which the M55 gives in short
    [ "$(tail -n +2 $B/x86/kv.jsonl)" = "$(tail -n +2 $B/$t/kv.jsonl 2>/dev/null)" ] || bad="$bad kv.jsonl"
    n=$(ls $B/x86 | wc -l)
    if [ -z "$bad" ]; then echo "ok   $t: --reference logits, masked logits and a KV log equal x86-64's bit for bit ($n files, $(( $(date +%s) - started )) s)"
    else echo "FAIL $t: differ from x86-64's:$bad"; failed=1; fi
done
exit $failed
