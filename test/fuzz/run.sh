#!/bin/sh
# run.sh - build and run gna's libFuzzer harnesses (test/fuzz/fuzz_*.c, one binary: fuzz.c), from any folder.
#   run.sh build            build build/fuzz/fuzz (clang, ASan + UBSan + libFuzzer)
#   run.sh fuzz [SECONDS]   fuzz each target for SECONDS (default $FUZZ_SECONDS or 20) on a scratch copy
#                           of its corpus (build/fuzz/corpus/<target>); crashes go to build/fuzz/crashes/
#   run.sh replay           run each harness once over its committed corpus and findings; non-zero on failure
#   run.sh merge            minimise the scratch corpora's new inputs into the committed corpus (-merge=1)
# Environment: FUZZ_TARGETS (names without fuzz_, default all), FUZZ_JOBS (parallel jobs, default 1),
# FUZZ_FLAGS (more libFuzzer flags, e.g. -fork=1 -ignore_crashes=1), CC (default clang-14 or clang).
set -u
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$root/build/fuzz
CC=${CC:-$(command -v clang-14 || echo clang)}
targets=${FUZZ_TARGETS:-$(cd "$here" && ls fuzz_*.c | sed 's/^fuzz_//; s/\.c$//')}
fuzzer=$out/fuzz
jobs=${FUZZ_JOBS:-1}
mkdir -p "$out"
scratch=/tmp; [ -d /dev/shm ] && [ -w /dev/shm ] && scratch=/dev/shm # in memory where there is a tmpfs: harnesses write files
GNA_FUZZ_TMP=$(mktemp -d $scratch/gna-fuzz-run.XXXXXX) || exit 1 # the harnesses' scratch folders go in here
export GNA_FUZZ_TMP
trap 'rm -rf "$GNA_FUZZ_TMP"' EXIT
trap 'exit 130' INT TERM

build() {
    $CC -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all "$here/fuzz.c" -lm -pthread -o "$fuzzer"
}

# one line from a libFuzzer log: executions, coverage, and the crash if any
summary() { # target log
    stats=$(grep -a -E '^#[0-9]+' "$2" | tail -1)
    runs=$(echo "$stats" | sed -n 's/^#\([0-9]*\).*/\1/p')
    cov=$(echo "$stats" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
    crash=$(grep -a -m1 -E 'runtime error|ERROR: [A-Za-z]*Sanitizer|ERROR: libFuzzer' "$2" | cut -c1-160)
    files=$(grep -a -c -E 'Test unit written to|^CRASH: ' "$2")
    printf '%-16s execs %-8s cov %-5s %s\n' "$1" "${runs:-?}" "${cov:-?}" "${crash:+CRASH ($files inputs): $crash}"
}

fuzz() {
    seconds=${1:-${FUZZ_SECONDS:-20}}
    status=0
    for t in $targets; do
        corpus=$out/corpus/$t crashes=$out/crashes/$t log=$out/logs/$t.log
        mkdir -p "$corpus" "$crashes" "$out/logs"
        cp "$here/corpus/$t/"* "$corpus/" 2>/dev/null
        dict=; [ -f "$here/$t.dict" ] && dict=-dict=$here/$t.dict
        parallel=; [ "$jobs" -gt 1 ] && parallel="-jobs=$jobs -workers=$jobs"
        (cd "$out/logs" && FUZZ_TARGET=$t "$fuzzer" "$corpus" -max_total_time="$seconds" -timeout=25 -close_fd_mask=3 \
            -artifact_prefix="$crashes/" $dict $parallel ${FUZZ_FLAGS:-} >"$log" 2>&1)
        [ "$jobs" -gt 1 ] && cat "$out/logs"/fuzz-*.log >>"$log" 2>/dev/null && rm -f "$out/logs"/fuzz-*.log
        summary "$t" "$log"
        grep -a -q -E 'runtime error|ERROR: [A-Za-z]*Sanitizer|ERROR: libFuzzer' "$log" && status=1
    done
    return $status
}

replay() {
    status=0
    for t in $targets; do
        set -- "$here/corpus/$t"/* "$here/findings/$t"/*
        n=0; for f do [ -f "$f" ] && n=$((n + 1)); done
        [ "$n" -gt 0 ] || continue
        log=$out/logs/replay_$t.log
        mkdir -p "$out/logs"
        for f do [ -f "$f" ] && echo "$f"; done | while read -r f; do
            FUZZ_TARGET=$t "$fuzzer" -timeout=25 "$f" >>"$log.one" 2>&1 || { echo "FAILED: $f"; cat "$log.one"; }
            rm -f "$log.one"
        done >"$log"
        if grep -q '^FAILED: ' "$log"; then
            status=1
            grep '^FAILED: ' "$log" | sed "s/^/$t: /"
            grep -a -m3 -E '^SUMMARY: |ERROR: ' "$log" | sed "s/^/    /"
        else
            echo "$t: $n inputs ok"
        fi
    done
    return $status
}

merge() {
    for t in $targets; do
        mkdir -p "$here/corpus/$t"
        [ -d "$out/corpus/$t" ] || continue
        FUZZ_TARGET=$t "$fuzzer" -merge=1 -timeout=25 -close_fd_mask=3 "$here/corpus/$t" "$out/corpus/$t" >"$out/logs/merge_$t.log" 2>&1
        echo "$t: $(ls "$here/corpus/$t" | wc -l) files, $(du -sk "$here/corpus/$t" | cut -f1) KB"
    done
}

case ${1:-} in
build) build ;;
fuzz) shift; fuzz "$@" ;;
replay) replay ;;
merge) merge ;;
*) sed -n '2,11p' "$0"; exit 2 ;;
esac
