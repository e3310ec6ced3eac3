#!/bin/sh
# test/baremetal/run.sh ELF: the bare-metal build on qemu-system-arm -M mps3-an547 (Cortex-M55, 2 GB DDR),
# its files through semihosting (whose command line is split at spaces: no spaces in arguments): the demo Llama's next tokens, then its --reference logits compared
# bit for bit with ./gna's (when ./gna is there). Exits non-zero on any failure.
set -u
ELF=$1
semihost() { a=""; for x in "$@"; do a="$a,arg=$(printf '%s' "$x" | sed 's/,/,,/g')"; done
    qemu-system-arm -M mps3-an547 -nographic -monitor none -serial none -semihosting-config "enable=on,target=native$a" -kernel "$ELF"; }
semihost gna logits -m test/models/llama_demo --tokens 275,63,1581,306,2041,88,45,19 --top 3 || exit 1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
semihost gna logits -q --reference -m test/models/llama_demo --tokens 275,63,1581,306,2041,88,45,19 -o "$TMP/m55.npy" || exit 1
if [ -x ./gna ]; then
    ./gna logits -q --reference -m test/models/llama_demo --tokens 275,63,1581,306,2041,88,45,19 -o "$TMP/host.npy" || exit 1
    if cmp -s "$TMP/m55.npy" "$TMP/host.npy"; then echo "ok   --reference logits on Cortex-M55 = this machine's, bit for bit"
    else echo "FAIL --reference logits on Cortex-M55 differ from this machine's"; exit 1; fi
fi
