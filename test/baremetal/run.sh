#!/bin/sh
# test/baremetal/run.sh ELF: the bare-metal build on qemu-system-arm -M mps3-an547 (Cortex-M55, 2 GB DDR),
# its files through semihosting (whose command line is split at spaces: no spaces in arguments): the demo Llama's next tokens,
# KV-retrieval prompts whose log-likelihoods are held to ./gna's (with build/gna_test), then its --reference logits
# compared bit for bit with ./gna's (when ./gna is there). Exits non-zero on any failure.
set -u
ELF=$1
semihost() { a=""; for x in "$@"; do a="$a,arg=$(printf '%s' "$x" | sed 's/,/,,/g')"; done
    qemu-system-arm -M mps3-an547 -nographic -monitor none -serial none -semihosting-config "enable=on,target=native$a" -kernel "$ELF"; }
semihost gna logits -m test/models/llama_demo --tokens 275,63,1581,306,2041,88,45,19 --top 3 || exit 1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
semihost gna logits -q --reference -m test/models/llama_demo --tokens 275,63,1581,306,2041,88,45,19 -o "$TMP/m55.npy" || exit 1
# KV retrieval in the paper's format, 3 samples at 10 pairs: the same prompts, and log-likelihoods within
# the tolerance of this machine's (its vector kernels against the M55's Part I)
semihost gna kv -m test/models/llama_demo --samples 3 --pairs 10 --seed 1 --log "$TMP/m55.jsonl" || exit 1
if [ -x ./gna ] && [ -x build/gna_test ]; then
    ./gna kv -q -m test/models/llama_demo --samples 3 --pairs 10 --seed 1 --log "$TMP/host.jsonl" >/dev/null || exit 1
    build/gna_test harness "$TMP/host.jsonl" "$TMP/m55.jsonl" || exit 1
fi
if [ -x ./gna ]; then
    ./gna logits -q --reference -m test/models/llama_demo --tokens 275,63,1581,306,2041,88,45,19 -o "$TMP/host.npy" || exit 1
    if cmp -s "$TMP/m55.npy" "$TMP/host.npy"; then echo "ok   --reference logits on Cortex-M55 = this machine's, bit for bit"
    else echo "FAIL --reference logits on Cortex-M55 differ from this machine's"; exit 1; fi
fi
