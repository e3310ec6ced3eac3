#!/bin/sh
# gna's benchmark, run by `make bench`: gna beside PyTorch (the stack an auditor would otherwise run) on
# random-weight checkpoints of published shapes, at the same thread count, in the same run, the peers
# alternated round by round. Measures and prints; checks nothing.
#   test/bench.sh GNA_BENCH DIR
# DIR holds the checkpoints (made on first use by weights_tools/bench/make_random_checkpoint.py, bf16).
# Knobs (environment):
#   THREADS      thread count (default: all cores)
#   MODELS       "llama-1b mamba-790m mamba2-780m"
#   PREFILL_T    "128 512"
#   N_DECODE     one-token steps timed after the prefill (8)
#   ROUNDS       alternated rounds (3); the table shows the median and the range of each cell
#   BF16         1: also --bf16 against PyTorch in bfloat16, on llama-1b (default 1)
#   SCALING      thread counts for a scaling table of gna's llama-1b prefill at T 512 (default none,
#                e.g. "1 2 4 8 16"; gna alone)
#   ONE_THREAD   1: also every model at 1 thread, both peers, at the first PREFILL_T (default 1): the
#                decode rows at 1 and THREADS threads that show a kernel which stopped scaling
# Decode rows also show the share of the machine's read bandwidth (gna_bench bandwidth, at that thread
# count) that the step uses: a decode step reads every weight once, so tok/s x the bytes of the weights
# as each peer holds them (gna: as stored, bfloat16 here; PyTorch: float32, twice that) / bandwidth.
#   RAW          1: print each measurement as it is taken, before the table
#   BASELINE     another gna to time beside this one (its command prefix, called as PREFIX DIR T N THREADS
#                [--bf16], printing prefill_tps and decode_tps as gna_bench does), e.g. an older build
#   PYTHON       a python3 with torch and numpy (default python3)
set -eu
GNA_BENCH=$1
DIR=$2
THREADS=${THREADS:-$(getconf _NPROCESSORS_ONLN)}
MODELS=${MODELS:-"llama-1b mamba-790m mamba2-780m"}
PREFILL_T=${PREFILL_T:-"128 512"}
N_DECODE=${N_DECODE:-8}
ROUNDS=${ROUNDS:-3}
BF16=${BF16:-1}
ONE_THREAD=${ONE_THREAD:-1}
SCALING=${SCALING:-}
BASELINE=${BASELINE:-}
PYTHON=${PYTHON:-python3}
# Some machines here pin OpenBLAS to older kernels through OPENBLAS_CORETYPE; the peer runs without that.
TORCH="env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $PYTHON weights_tools/bench/bench_torch.py"
RESULTS=$(mktemp)
trap 'rm -f "$RESULTS"' EXIT

field() { printf '%s\n' "$2" | tr ' ' '\n' | sed -n "/^$1\$/{n;p;}"; } # the value after key $1 in line $2

# one measurement of each peer for (model, T, threads, mode), appended to RESULTS as
# "model mode T threads peer prefill_tps decode_tps"
measure() {
    model=$1 T=$2 threads=$3 mode=$4
    flag=$([ "$mode" = bf16 ] && echo --bf16 || true)
    out=$("$GNA_BENCH" "$DIR/$model" "$T" "$N_DECODE" "$threads" $flag)
    record "$model $mode $T $threads gna $(field prefill_tps "$out") $(field decode_tps "$out")"
    [ "${5:-}" = gna-only ] && return
    if [ -n "$BASELINE" ]; then
        out=$($BASELINE "$DIR/$model" "$T" "$N_DECODE" "$threads" $flag)
        record "$model $mode $T $threads baseline $(field prefill_tps "$out") $(field decode_tps "$out")"
    fi
    out=$(OMP_NUM_THREADS=$threads $TORCH "$DIR/$model" "$T" "$N_DECODE" "$threads" $flag)
    record "$model $mode $T $threads torch $(field prefill_tps "$out") $(field decode_tps "$out")"
}
record() { echo "$1" >>"$RESULTS"; [ -z "${RAW:-}" ] || echo "raw: $1"; } # RAW=1: each measurement as it is taken

for model in $MODELS; do
    [ -f "$DIR/$model/config.json" ] || "$PYTHON" weights_tools/bench/make_random_checkpoint.py "$model" "$DIR/$model"
done

round=1
while [ "$round" -le "$ROUNDS" ]; do
    for model in $MODELS; do
        for T in $PREFILL_T; do
            measure "$model" "$T" "$THREADS" float32
            if [ "$BF16" = 1 ] && [ "$model" = llama-1b ]; then measure "$model" "$T" "$THREADS" bf16; fi
        done
    done
    if [ "$ONE_THREAD" = 1 ] && [ "$THREADS" != 1 ]; then
        for model in $MODELS; do measure "$model" "${PREFILL_T%% *}" 1 float32; done
    fi
    for threads in $SCALING; do measure llama-1b 512 "$threads" float32 gna-only; done
    round=$((round + 1))
done
# the read bandwidth at each thread count of a decode row, and the bytes of each model's weights
BANDWIDTH=
for threads in $(cut -d' ' -f4 "$RESULTS" | sort -un); do
    BANDWIDTH="$BANDWIDTH $threads=$(field read_gbps "$("$GNA_BENCH" bandwidth "$threads")")"
done
BYTES=
for model in $MODELS; do BYTES="$BYTES $model=$(cat "$DIR/$model"/*.safetensors | wc -c)"; done

echo "gna beside PyTorch $("$PYTHON" -c 'import torch; print(torch.__version__)'), $(uname -m), $(getconf _NPROCESSORS_ONLN) cores," \
    "$ROUNDS alternated rounds: the median (and the range) of each cell, tokens per second;" \
    "read bandwidth (GB/s at a thread count):$BANDWIDTH; decode's read bw: the share of it each peer's step uses, gna / torch"
# median and range of column $2 over the rows of one (model, mode, T, threads, peer)
awk -v baseline="$BASELINE" -v bandwidth="$BANDWIDTH" -v bytes="$BYTES" '
function median(key, n,   i, j, v, tmp) {
    n = count[key]
    for (i = 1; i <= n; i++) tmp[i] = values[key, i]
    for (i = 2; i <= n; i++) for (j = i; j > 1 && tmp[j - 1] > tmp[j]; j--) { v = tmp[j]; tmp[j] = tmp[j - 1]; tmp[j - 1] = v }
    low[key] = tmp[1]; high[key] = tmp[n]
    return n % 2 ? tmp[(n + 1) / 2] : (tmp[n / 2] + tmp[n / 2 + 1]) / 2
}
{
    for (c = 0; c < 2; c++) {
        key = $1 " " (c ? "decode" : $2 == "bf16" ? "bf16" : "prefill") " " $3 " " $4 " " $5
        if ($2 == "bf16" && c) continue
        if (!(key in count)) order[n_keys++] = key
        values[key, ++count[key]] = $(6 + c)
        cells[$1 " " (c ? "decode" : $2 == "bf16" ? "bf16" : "prefill") " " $3 " " $4] = 1
    }
}
END {
    n = split(bandwidth, pairs, " ")
    for (i = 1; i <= n; i++) { split(pairs[i], kv, "="); gbps[kv[1]] = kv[2] }
    n = split(bytes, pairs, " ")
    for (i = 1; i <= n; i++) { split(pairs[i], kv, "="); size[kv[1]] = kv[2] }
    printf "%-12s %-8s %5s %7s  %-22s %-22s %7s  %-13s", "model", "mode", "T", "threads", "gna", "torch", "ratio", "read bw"
    if (baseline != "") printf "  %-22s %7s", "baseline", "gna/base"
    printf "\n"
    for (i = 0; i < n_keys; i++) {
        split(order[i], k, " ")
        if (k[5] != "gna") continue
        cell = k[1] " " k[2] " " k[3] " " k[4]
        g = median(cell " gna")
        t = (cell " torch") in count ? median(cell " torch") : 0
        printf "%-12s %-8s %5s %7s  %-22s %-22s %7s", k[1], k[2], k[3], k[4],
            sprintf("%.2f (%.2f-%.2f)", g, low[cell " gna"], high[cell " gna"]),
            t ? sprintf("%.2f (%.2f-%.2f)", t, low[cell " torch"], high[cell " torch"]) : "-", t ? sprintf("%.2f", g / t) : "-"
        share = "-" # decode: the share of the read bandwidth each peer uses, gna / torch
        if (k[2] == "decode" && gbps[k[4]] > 0 && size[k[1]] > 0)
            share = sprintf("%.0f%% / %s", 100 * g * size[k[1]] / (gbps[k[4]] * 1e9), t ? sprintf("%.0f%%", 100 * t * 2 * size[k[1]] / (gbps[k[4]] * 1e9)) : "-")
        printf "  %-13s", share
        if (baseline != "") {
            b = (cell " baseline") in count ? median(cell " baseline") : 0
            printf "  %-22s %7s", b ? sprintf("%.2f (%.2f-%.2f)", b, low[cell " baseline"], high[cell " baseline"]) : "-",
                b ? sprintf("%.2f", g / b) : "-"
        }
        printf "\n"
    }
}' "$RESULTS"
