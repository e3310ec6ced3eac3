#!/bin/sh
# gna's benchmarks, run by `make bench`: gna beside PyTorch on the same random-weight checkpoints,
# the same thread count, in the same run; then the machine probes. Measures and prints; checks nothing.
#   test/bench.sh GNA_BENCH DIR
# DIR holds the checkpoints (made on first use by weights_tools/make_random_checkpoint.py, bf16).
# Knobs (environment): THREADS (default: all cores), MODELS, PREFILL_T ("128 512"), N_DECODE (16),
# TORCH_N_DECODE (4), BF16_T ("128 512" where the CPU has AVX512-BF16, else 128: PyTorch's bfloat16
# matmul is slow without it), PYTHON (/usr/bin/python3, Debian's, which has python3-torch),
# PROBE_ROUNDS (3: alternated rounds of the matmul probes).
set -eu
GNA_BENCH=$1
DIR=$2
THREADS=${THREADS:-$(getconf _NPROCESSORS_ONLN)}
MODELS=${MODELS:-"llama-1b mamba-790m mamba2-780m"}
PREFILL_T=${PREFILL_T:-"128 512"}
N_DECODE=${N_DECODE:-16}
TORCH_N_DECODE=${TORCH_N_DECODE:-4}
BF16_T=${BF16_T:-$(grep -q avx512_bf16 /proc/cpuinfo 2>/dev/null && echo "128 512" || echo 128)}
PYTHON=${PYTHON:-/usr/bin/python3}
PROBE_ROUNDS=${PROBE_ROUNDS:-3}
# This machine's environment holds OpenBLAS to AVX2 (OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE); the peer
# runs without them, so that OpenBLAS picks its best kernels, and with the same thread count as gna.
TORCH="env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=$THREADS OMP_NUM_THREADS=$THREADS $PYTHON weights_tools/bench_torch.py"

field() { # the value after key $1 in line $2
    printf '%s\n' "$2" | tr ' ' '\n' | sed -n "/^$1\$/{n;p;}"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 > 0) printf "%.2f", a / b; else printf "-" }'; }

for model in $MODELS; do
    [ -f "$DIR/$model/config.json" ] || "$PYTHON" weights_tools/make_random_checkpoint.py "$model" "$DIR/$model"
done

echo "gna vs PyTorch, $THREADS threads, random-weight checkpoints stored in bf16 ($(uname -m), $("$GNA_BENCH" peak 1 | sed 's/.*simd //'))"
echo
printf '%-12s %-7s %5s %12s %12s %7s\n' model mode T "gna tok/s" "torch tok/s" ratio
for model in $MODELS; do
    for T in $PREFILL_T; do
        g=$("$GNA_BENCH" model "$DIR/$model" "$T" "$N_DECODE" "$THREADS")
        t=$($TORCH "$DIR/$model" "$T" "$TORCH_N_DECODE" "$THREADS")
        printf '%-12s %-7s %5s %12s %12s %7s\n' "$model" prefill "$T" "$(field prefill_tps "$g")" "$(field prefill_tps "$t")" \
            "$(ratio "$(field prefill_tps "$g")" "$(field prefill_tps "$t")")"
    done
    printf '%-12s %-7s %5s %12s %12s %7s   (gna: %s GB/s)\n' "$model" decode "$T" "$(field decode_tps "$g")" "$(field decode_tps "$t")" \
        "$(ratio "$(field decode_tps "$g")" "$(field decode_tps "$t")")" "$(field decode_gbps "$g")"
    if [ "$model" = llama-1b ]; then
        for T in $BF16_T; do
            g=$("$GNA_BENCH" model "$DIR/$model" "$T" "$N_DECODE" "$THREADS" --bf16)
            t=$($TORCH "$DIR/$model" "$T" 1 "$THREADS" --bf16)
            printf '%-12s %-7s %5s %12s %12s %7s\n' "$model" "bf16" "$T" "$(field prefill_tps "$g")" "$(field prefill_tps "$t")" \
                "$(ratio "$(field prefill_tps "$g")" "$(field prefill_tps "$t")")"
        done
    fi
done

echo
# The FMA peak, the matmul's tile kernel alone on cache-resident data, and the peer's BLAS (PyTorch's
# F.linear in float32: OpenBLAS's sgemm) on the same shape are measured again beside each matmul, in
# PROBE_ROUNDS alternated rounds: on a shared VM the machine's speed drifts within seconds, and a
# fraction is only meaningful against a ceiling taken in the same moments. Each figure is the best
# over the rounds, as each run is itself the best of several; the fraction each round made of its
# own peak is printed too, so that the spread shows. The float32 matmul is timed twice: as gna runs
# it (on AMX where the CPU has it, the input in three exact bfloat16 parts) and on the vector tiles
# alone, the FMA kernel that every other CPU runs.
bandwidth=$("$GNA_BENCH" bandwidth "$THREADS")
echo "machine: read bandwidth $(field read_gbps "$bandwidth") GB/s ($THREADS threads)"
quartiles() { echo "$(field "$1_median" "$paired") ($(field "$1_q1" "$paired")-$(field "$1_q3" "$paired"))"; } # of gna_bench paired
larger() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-") print b; else if (b == "-" || a + 0 > b + 0) print a; else print b }'; }
for shape in "512 2048 2048" "512 8192 2048" "512 2048 8192" "512 32000 2048"; do
    peak=- tile=- run=- gflops=- blas=- fractions=
    round=0
    while [ "$round" -lt "$PROBE_ROUNDS" ]; do
        round_peak=$(field peak_gflops "$("$GNA_BENCH" peak "$THREADS")")
        round_tile=$(field tile_gflops "$("$GNA_BENCH" tile "$THREADS" 2>/dev/null || echo "tile_gflops -")")
        round_run=$(field matmul_gflops "$("$GNA_BENCH" matmul $shape "$THREADS" bf16)")
        round_gflops=$(field matmul_gflops "$("$GNA_BENCH" matmul $shape "$THREADS" bf16-vector)")
        round_blas=$(field matmul_gflops "$($TORCH matmul $shape "$THREADS")")
        fractions="$fractions $(ratio "$round_gflops" "$round_peak")"
        peak=$(larger "$round_peak" "$peak") tile=$(larger "$round_tile" "$tile") run=$(larger "$round_run" "$run")
        gflops=$(larger "$round_gflops" "$gflops") blas=$(larger "$round_blas" "$blas")
        round=$((round + 1))
    done
    spread=$(printf '%s\n' $fractions | sort -n | sed -n '1p;$p' | paste -sd- -)
    echo "matmul T, rows, cols = $shape, bf16 weights, float32 (best of $PROBE_ROUNDS alternated rounds; FMA peak $peak GFLOP/s, PyTorch's float32 F.linear $blas):"
    echo "    as gna runs it (AMX where the CPU has it): $run GFLOP/s = $(ratio "$run" "$peak") of the FMA peak, $(ratio "$run" "$blas")x PyTorch"
    echo "    on the vector tiles: $gflops GFLOP/s = $(ratio "$gflops" "$peak") of the FMA peak (single rounds $spread), $(ratio "$gflops" "$tile") of the tile kernel alone ($tile), $(ratio "$gflops" "$blas")x PyTorch"
    # the same, nearly free of the drift: 30 rounds in one process, each matmul against the peak and
    # the tile kernel timed a moment before it (medians and quartiles of the rounds' ratios)
    if paired=$("$GNA_BENCH" paired $shape "$THREADS" 30 2>/dev/null); then
        echo "    in 30 back-to-back rounds, each beside the peak and the tile kernel timed just before it: as gna runs it $(quartiles run_of_peak) of the FMA peak; the vector tiles $(quartiles vector_of_peak) of it, $(quartiles vector_of_tile) of their kernel alone"
    fi
done
m=$("$GNA_BENCH" matmul 512 8192 2048 "$THREADS" --bf16)
echo "matmul T, rows, cols = 512 8192 2048 in --bf16 mode: $(field matmul_gflops "$m") GFLOP/s (AMX or AVX512-BF16 where the CPU has them)"
# 1 GiB of bf16 weights, as much as the read probe reads: a smaller matrix would stay in a large L3
# (8192 x 2048, 32 MB, did here, and read "1.5x the bandwidth")
rows=262144
cols=2048
m=$("$GNA_BENCH" matmul 1 $rows $cols "$THREADS" bf16)
gbps=$(awk -v s="$(field seconds "$m")" -v bytes=$((rows * cols * 2)) 'BEGIN { printf "%.1f", bytes / s / 1e9 }')
echo "matvec (decode) $rows x $cols bf16 (1 GiB): $gbps GB/s = $(ratio "$gbps" "$(field read_gbps "$bandwidth")") of bandwidth"
