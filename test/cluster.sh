#!/bin/sh
# A harness run split over a cluster, end to end: a one-node Slurm started here (munged, slurmctld,
# slurmd, all under TMPDIR), the README's batch script as an array job of 3 shards and a dependent merge
# job; the same split through GNU parallel; and the failure paths: a shard cancelled (scancel) or
# SIGKILLed mid-run, then re-submitted or requeued, resumes from its log, and the merge is still byte
# for byte the results of one unsharded run.
#   sh test/cluster.sh GNA TMPDIR
# GNA the gna program, TMPDIR a scratch folder. Prints one "ok   ..." or "FAIL ..." line per check (with
# indented detail) and exits 1 if any failed. The Slurm part needs Debian's slurm-wlm and munge, not
# root: the daemons run as the user running this (SlurmUser, SlurmdUser), which is also the only user
# who submits jobs; where it cannot start, it is one FAIL line saying why. GNU parallel: Debian's
# parallel. About 50 s on 2 cores.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd) || exit 1
# the absolute path of gna: the jobs run in other folders, and gna_pid below compares /proc/PID/exe
GNA=$(cd "$(dirname "$1")" && pwd -P)/$(basename "$1")
W=$(mkdir -p "$2/cluster" && cd "$2/cluster" && pwd -P) || exit 1
rm -rf "${W:?}"/* || exit 1
PATH=$PATH:/usr/sbin:/sbin # slurmctld, slurmd, munged
failed=0
pass() { printf 'ok   %s\n' "$1"; }
fail() { failed=1; printf 'FAIL %s\n' "$1"; [ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/     /'; }

# The runs. A shard must last long enough to be killed in the middle (a few seconds on one core):
# Slurm runs kv on the demo Llama (600 questions, 200 a shard); GNU parallel kv under a mask on the demo
# Mamba-2 (160 questions, each with and without the mask: 320, 107 a shard) and mmlu 5-shot on a random
# checkpoint that is not in test/models: a copy of the harness fixtures' tiny Mamba-2 with its
# 1500-token tokenizer (weights_tools/bench/make_random_checkpoint.py writes only full-size shapes, 0.8e9
# parameters and up).
mkdir -p "$W/models" && cp -R "$ROOT/test/fixtures/harness/mamba2_tiny" "$W/models/random_mamba2" || exit 1
H=$ROOT/test/fixtures/harness
KV_SLURM="kv -q -m $ROOT/test/models/llama_demo --pairs 40,50 --samples 300 --seed 1"
KV_PAR="kv -q -m $ROOT/test/models/mamba2_demo --pairs 40,50 --samples 80 --seed 2 --mask L0H0"
MMLU_PAR="mmlu -q -m $W/models/random_mamba2 --data $H/data/mmlu --shots 5"

# questions LOG: how many questions the shard holds (from the log's first line)
questions() { sed -n '1s/.*"questions": \([0-9]*\).*/\1/p' "$1"; }
# unfinished LOG: has the log fewer lines than a header and its questions?
unfinished() { [ "$(lines "$1")" -le "$(questions "$1")" ]; }
# progress LOG: "N of M" questions done
progress() { echo "$(($(lines "$1") - 1)) of $(questions "$1")"; }
# lines F: complete lines in F (0 if there is no F)
lines() { if [ -f "$1" ]; then wc -l <"$1" | tr -d ' '; else echo 0; fi; }
# wait_lines F N: until F has N complete lines (1 after 60 s)
wait_lines() {
    i=0
    while [ "$(lines "$1")" -lt "$2" ]; do
        i=$((i + 1))
        [ $i -gt 1200 ] && return 1
        sleep 0.05
    done
}
# gna_pid DIR LOG: the process id of the gna running in DIR with --log LOG (from /proc), to kill that
# one process and no other
gna_pid() {
    for p in /proc/[0-9]*; do
        [ "$(readlink "$p/exe" 2>/dev/null)" = "$GNA" ] && [ "$(readlink "$p/cwd" 2>/dev/null)" = "$1" ] &&
            tr '\0' '\n' <"$p/cmdline" 2>/dev/null | grep -qxF -- "$2" && { echo "${p#/proc/}"; return 0; }
    done
    return 1
}
# same WHAT A B: a check that files A and B are equal byte for byte
same() {
    if [ -s "$2" ] && cmp "$2" "$3" >"$W/cmp.txt" 2>&1; then pass "$1"; else fail "$1" "$(cat "$W/cmp.txt" "$W/err" 2>/dev/null)"; fi
}
# refused WHAT EXPECT LOG...: gna merge of the logs is exit 2 with one line matching EXPECT
refused() {
    what=$1 expect=$2
    shift 2
    "$GNA" merge "$@" --json "$W/refused.json" >/dev/null 2>"$W/err"
    rc=$?
    if [ $rc -eq 2 ] && [ "$(lines "$W/err")" -eq 1 ] && grep -q -- "$expect" "$W/err" && [ ! -e "$W/refused.json" ]; then
        pass "$what: $(cat "$W/err")"
    else
        fail "$what: exit 2, one line" "exit $rc: $(cat "$W/err")"
    fi
}

# Everything this script starts is stopped on any exit, each by its process id.
S=$W/slurm
MUNGE=$W/munge
PARALLEL_PID=
cleanup() {
    [ -n "$PARALLEL_PID" ] && kill "$PARALLEL_PID" 2>/dev/null
    if [ -f "$S/slurmctld.pid" ]; then
        # cancel what is left of this cluster's jobs, give their processes a moment to go
        scancel --partition=gnatest >/dev/null 2>&1
        i=0
        while [ -n "$(squeue -h 2>/dev/null)" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    fi
    for f in "$S/slurmd.pid" "$S/slurmctld.pid" "$MUNGE/munged.pid"; do
        [ -f "$f" ] || continue
        pid=$(cat "$f")
        kill "$pid" 2>/dev/null
        i=0
        while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
        rm -f "$f"
    done
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE

# The results of one unsharded run of each, to compare the merges with
# shellcheck disable=SC2086
if ! { "$GNA" $KV_SLURM --json "$W/one_kv_llama.json" >/dev/null 2>"$W/err" &&
    "$GNA" $KV_PAR --json "$W/one_kv_mamba2.json" >/dev/null 2>>"$W/err" &&
    "$GNA" $MMLU_PAR --json "$W/one_mmlu.json" >/dev/null 2>>"$W/err"; }; then
    fail "the unsharded runs" "$(cat "$W/err")"
fi

# ---- 1. Slurm ----
# slurm_start: munged and a one-node Slurm (slurmctld and slurmd on localhost), configured and kept
# entirely under $W; prints why on failure
slurm_start() {
    for t in munged slurmctld slurmd sbatch squeue scontrol scancel sinfo; do
        command -v $t >/dev/null 2>&1 || { echo "$t is not installed (Debian: slurm-wlm, munge)"; return 1; }
    done
    # munge: a fresh key; the socket, pid, log and seed beside it. munged checks that every folder
    # above its socket is open to all (clients of other users), which a mktemp -d folder is not;
    # --force makes that a warning: the only clients here are this user's.
    mkdir -p "$MUNGE" && chmod 755 "$MUNGE" &&
        dd if=/dev/urandom of="$MUNGE/munge.key" bs=1024 count=1 2>/dev/null && chmod 600 "$MUNGE/munge.key" || return 1
    munged --force --key-file="$MUNGE/munge.key" --socket="$MUNGE/munge.socket" --pid-file="$MUNGE/munged.pid" \
        --log-file="$MUNGE/munged.log" --seed-file="$MUNGE/munged.seed" 2>"$W/err" ||
        { echo "munged did not start: $(cat "$W/err")"; return 1; }
    # the node as slurmd sees it (CPUs, sockets, cores, threads, memory), named localhost
    node=$(slurmd -C 2>/dev/null | sed -n '1s/^NodeName=[^ ]*/NodeName=localhost/p')
    [ -n "$node" ] || node="NodeName=localhost CPUs=$(getconf _NPROCESSORS_ONLN)"
    # ports of this run's own, away from a real Slurm's 6817/6818
    port=$((20000 + $$ % 20000 * 2))
    user=$(id -un)
    mkdir -p "$S/state" "$S/spool" || return 1
    cat >"$S/slurm.conf" <<EOF
ClusterName=gnatest
SlurmctldHost=localhost
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE/munge.socket
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd.log
# no cgroups, no accounting database, no MPI, no mail
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
ReturnToService=2
# keep finished jobs visible to scontrol for 10 minutes; SIGKILL 5 s after a cancel's SIGTERM
MinJobAge=600
KillWait=5
# run the main scheduler every second, not every minute: a test waits on every job
SchedulerParameters=sched_interval=1
$node State=UNKNOWN
PartitionName=gnatest Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
    slurmctld 2>"$W/err" || { echo "slurmctld did not start: $(cat "$W/err"; tail -n 5 "$S/slurmctld.log" 2>/dev/null)"; return 1; }
    slurmd -N localhost 2>"$W/err" || { echo "slurmd did not start: $(cat "$W/err"; tail -n 5 "$S/slurmd.log" 2>/dev/null)"; return 1; }
    i=0
    until [ "$(sinfo -h -N -n localhost -o %t 2>/dev/null)" = idle ]; do
        i=$((i + 1))
        [ $i -gt 300 ] && { echo "the node is not idle after 30 s: $(sinfo -N 2>&1; sinfo -R 2>&1; tail -n 5 "$S/slurmd.log")"; return 1; }
        sleep 0.1
    done
}
# slurm_wait JOBS: until none of the jobs (comma-separated) is pending or running; 1 after 90 s
slurm_wait() {
    i=0
    while [ -n "$(squeue -h -j "$1" -o %i 2>/dev/null)" ]; do
        i=$((i + 1))
        [ $i -gt 900 ] && return 1
        sleep 0.1
    done
}
# state JOB: its JobState (one per array task for an array's id)
state() { scontrol show job "$1" 2>&1 | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | sort | tr '\n' ' ' | sed 's/ $//'; }
# slurm_detail: what to look at when a Slurm check fails
slurm_detail() {
    squeue 2>&1
    for f in logs/*.out; do [ -f "$f" ] && echo "$f: $(cat "$f")"; done
    grep -h -i -E 'error|kill|requeu' "$S/slurmctld.log" "$S/slurmd.log" 2>/dev/null | grep -v -E 'pmix|MPI|state file|backup state' | tail -n 8
}
# write_batch DIR: the README's two batch scripts (the sh blocks after "<!-- test/cluster.sh runs these
# batch scripts -->"), shards.sbatch and merge.sbatch, with this test's run in place of the README's
# (its gna command line, 3 shards of 1 CPU for 16 of 16)
write_batch() {
    mkdir -p "$1/logs" || return 1
    awk -v dir="$1" -v gna="\"$GNA\"" -v run="$KV_SLURM" '
        /<!-- test\/cluster.sh runs these batch scripts -->/ { on = 1; next }
        on && /^```sh$/ { n++; inside = 1; next }
        inside && /^```$/ { inside = 0; if (n == 2) exit; next }
        inside {
            gsub(/--array=1-16/, "--array=1-3"); gsub(/--cpus-per-task=16/, "--cpus-per-task=1"); gsub(/ID\/16"/, "ID/3\"")
            if ($1 == "gna" && $2 == "merge") sub(/^gna/, gna)
            else if ($1 == "gna") $0 = gna " " run " \\"
            print > (dir (n == 1 ? "/shards.sbatch" : "/merge.sbatch"))
        }' "$ROOT/README.md"
    grep -q -- '--array=1-3' "$1/shards.sbatch" 2>/dev/null && grep -q -- '/3" --log' "$1/shards.sbatch" &&
        grep -q -- "$KV_SLURM" "$1/shards.sbatch" && grep -q merge "$1/merge.sbatch" 2>/dev/null || {
        fail "README.md: the two batch scripts after \"<!-- test/cluster.sh runs these batch scripts -->\" are not as this test expects"
        return 1
    }
}

export SLURM_CONF="$S/slurm.conf" # this cluster's, for every Slurm command below
if slurm_start >"$W/why" 2>&1; then
    pass "slurm: munged, slurmctld and slurmd started under TMPDIR; localhost idle ($(sinfo -h -N -o '%c CPUs, %m MB'))"

    # 1b. The array of 3 shards and the merge that waits for all of them (afterok)
    R=$W/slurm_run
    write_batch "$R" && cd "$R" || exit 1
    a=$(sbatch --parsable shards.sbatch 2>"$W/err") &&
        m=$(sbatch --parsable --dependency=afterok:"$a" --kill-on-invalid-dep=yes merge.sbatch 2>>"$W/err")
    if [ -n "${m:-}" ] && slurm_wait "$a,$m" && [ "$(state "$a")" = "COMPLETED COMPLETED COMPLETED" ] && [ "$(state "$m")" = COMPLETED ]; then
        same "slurm: array job $a (3 shards) and dependent merge job $m: results.json = one unsharded run" \
            "$R/results.json" "$W/one_kv_llama.json"
    else
        fail "slurm: array job and dependent merge job" "states ${a:-} $(state "${a:-0}"), ${m:-} $(state "${m:-0}"): $(cat "$W/err"; slurm_detail)"
    fi

    # 1c. Again, with task 2 cancelled (scancel) and task 3's gna SIGKILLed, each in the middle of its
    # shard; the merge job's dependency can no longer be met, and --kill-on-invalid-dep cancels it
    # (without, it would pend for ever: DependencyNeverSatisfied)
    F=$W/slurm_fail
    write_batch "$F" && cd "$F" || exit 1
    a=$(sbatch --parsable shards.sbatch 2>"$W/err") &&
        m=$(sbatch --parsable --dependency=afterok:"$a" --kill-on-invalid-dep=yes merge.sbatch 2>>"$W/err")
    killed=
    if [ -n "${m:-}" ] && wait_lines logs/shard_2.jsonl 20 && scancel "${a}_2" 2>>"$W/err" &&
        wait_lines logs/shard_3.jsonl 20 && pid=$(gna_pid "$F" logs/shard_3.jsonl) && kill -9 "$pid" &&
        slurm_wait "$a"; then
        killed="task 2 cancelled after $(progress logs/shard_2.jsonl) questions, task 3's gna (pid $pid) SIGKILLed after $(progress logs/shard_3.jsonl)"
    fi
    states="$(state "${a:-0}_1") $(state "${a:-0}_2") $(state "${a:-0}_3")"
    slurm_wait "${m:-0}"
    if [ -n "$killed" ] && [ "$states" = "COMPLETED CANCELLED FAILED" ] && [ "$(state "$m")" = CANCELLED ] &&
        unfinished logs/shard_2.jsonl && unfinished logs/shard_3.jsonl; then
        pass "slurm: $killed; the merge job is cancelled (afterok can no longer be met)"
    else
        fail "slurm: an array task cancelled and one SIGKILLed mid-shard" "states $states, merge $(state "${m:-0}"): $(cat "$W/err"; slurm_detail)"
    fi
    # merge refuses the unfinished shard
    refused "merge of shards cut short" "logs/shard_[23].jsonl" logs/shard_1.jsonl logs/shard_2.jsonl logs/shard_3.jsonl
    # Task 2 again as a new sbatch of that one task; task 3 requeued in place. Slurm holds a requeued
    # job (BeginTime) for about 2 minutes, until the credentials of its last run expire; here it is
    # released at once (StartTime=now) 2 s after the requeue, since a start within the second of the
    # revocation is refused ("Job credential revoked"). Then the merge again, waiting for these two.
    b=$(sbatch --parsable --array=2 shards.sbatch 2>"$W/err") && scontrol requeue "${a}_3" 2>>"$W/err" &&
        sleep 2 && scontrol update JobId="${a}_3" StartTime=now 2>>"$W/err" &&
        m=$(sbatch --parsable --dependency=afterok:"${a}_3:$b" --kill-on-invalid-dep=yes merge.sbatch 2>>"$W/err")
    if [ -n "${b:-}" ] && slurm_wait "$a,$b,$m" && [ "$(state "${a}_3") $(state "$b") $(state "$m")" = "COMPLETED COMPLETED COMPLETED" ]; then
        # each resumed log ends as an undisturbed shard's log (1b's), and the merge is one run's results
        how="task 2 re-submitted (job $b), task 3 requeued"
        same "slurm: $how: shard 2's log = an undisturbed shard's" logs/shard_2.jsonl "$R/logs/shard_2.jsonl"
        same "slurm: $how: shard 3's log = an undisturbed shard's" logs/shard_3.jsonl "$R/logs/shard_3.jsonl"
        same "slurm: $how, merged again (job $m): results.json = one unsharded run" results.json "$W/one_kv_llama.json"
    else
        fail "slurm: the cancelled task re-submitted and the killed one requeued" "states $(state "${a}_3") $(state "${b:-0}") $(state "${m:-0}"): $(cat "$W/err"; slurm_detail)"
    fi
    cd "$W" || exit 1
else
    fail "slurm: a one-node cluster cannot start here: $(cat "$W/why")"
fi

# ---- 2. GNU parallel: the same split over 2 local slots ----
P=$W/parallel
mkdir -p "$P/logs" && cd "$P" || exit 1
export PARALLEL_HOME="$W/parallel_home" # not ~/.parallel
if command -v parallel >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    parallel -j 2 "$GNA" $KV_PAR --threads 1 --shard {}/3 --log logs/p_{}.jsonl ::: 1 2 3 >/dev/null 2>"$W/err" &&
        "$GNA" merge logs/p_*.jsonl --json kv.json >/dev/null 2>>"$W/err"
    same "parallel: kv (mamba2_demo, under a mask), 3 shards on 2 slots merged = one unsharded run" kv.json "$W/one_kv_mamba2.json"
    # shellcheck disable=SC2086
    parallel -j 2 "$GNA" $MMLU_PAR --threads 1 --shard {}/3 --log logs/m_{}.jsonl ::: 1 2 3 >/dev/null 2>"$W/err" &&
        "$GNA" merge logs/m_*.jsonl --json mmlu.json >/dev/null 2>>"$W/err"
    same "parallel: mmlu 5-shot on a random checkpoint, 3 shards merged = one unsharded run" mmlu.json "$W/one_mmlu.json"

    # shard 2's gna SIGKILLed mid-run; parallel --resume-failed runs that shard alone again (its joblog
    # says which failed), and it resumes from its log
    # shellcheck disable=SC2086
    parallel -j 2 --joblog kill.joblog "$GNA" $KV_PAR --threads 1 --shard {}/3 --log logs/k_{}.jsonl ::: 1 2 3 >/dev/null 2>"$W/err" &
    PARALLEL_PID=$!
    wait_lines logs/k_2.jsonl 10 && pid=$(gna_pid "$P" logs/k_2.jsonl) && kill -9 "$pid"
    wait $PARALLEL_PID
    rc=$?
    PARALLEL_PID=
    k=$(lines logs/k_2.jsonl)
    done_then=$(progress logs/k_2.jsonl)
    cp logs/k_2.jsonl cut2.jsonl
    # shellcheck disable=SC2086
    parallel -j 2 --joblog kill.joblog --resume-failed "$GNA" $KV_PAR --threads 1 --shard {}/3 --log logs/k_{}.jsonl \
        ::: 1 2 3 >/dev/null 2>>"$W/err" &&
        "$GNA" merge logs/k_*.jsonl --json resumed.json >/dev/null 2>>"$W/err"
    runs=$(($(lines kill.joblog) - 1))
    # parallel reports one failed job; the log kept its lines; the joblog has the 3 runs and 1 re-run
    if [ $rc -eq 1 ] && unfinished cut2.jsonl && [ $runs -eq 4 ] && [ "$(head -n "$k" logs/k_2.jsonl)" = "$(head -n "$k" cut2.jsonl)" ]; then
        same "parallel: shard 2 SIGKILLed after $done_then questions, re-run alone by --resume-failed: merged = one unsharded run" \
            resumed.json "$W/one_kv_mamba2.json"
    else
        fail "parallel: a shard SIGKILLed and resumed by --resume-failed" \
            "parallel exit $rc (1 failed job expected), $k log lines at the kill, $runs runs in the joblog: $(cat kill.joblog "$W/err")"
    fi

    # ---- 3. merge names what is wrong with the set of logs ----
    refused "merge of shards 1 and 3 of 3" "shard 2/3 is missing" logs/p_1.jsonl logs/p_3.jsonl
    cp logs/p_2.jsonl again.jsonl
    refused "merge with shard 2 given twice" "again.jsonl: is shard 2/3, which is given twice" logs/p_1.jsonl logs/p_2.jsonl logs/p_3.jsonl again.jsonl
    refused "merge with the log of a killed shard" "cut2.jsonl" logs/k_1.jsonl cut2.jsonl logs/k_3.jsonl
else
    fail "parallel: GNU parallel is not installed (Debian: parallel)"
fi

cd "$W/.." || exit 1
cleanup
trap - EXIT
[ $failed -eq 0 ] && rm -rf "$W"
exit $failed
