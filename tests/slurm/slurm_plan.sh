#!/usr/bin/env bash
# slurm_plan.sh - `collstep plan` spread over a real Slurm: a private
# one-node cluster (slurm-cluster.sh) started for the test in $TMPDIR and
# stopped on every exit.  Every plan must equal the one-process plan of the
# same arguments byte for byte (report and tuning table).  The batch scripts
# and commands are docs/slurm.md's ("Planning a large machine"), taken from
# the page and scaled down (substitutions below: summit:nodes=4, two sizes,
# 8 candidates, one node, four tasks); a page whose commands no longer hold
# what the test scales fails the test.
#   slurm_plan.sh COLLSTEP CASE
# CASE:
#   srun   srun --mpi=pmix -n 2 and -n 3 collstep plan; ranks started with
#          different arguments are refused, naming the rank
#   batch  the page's plan.sbatch (srun in a batch job, 3 tasks), sbatch --wait
#   array  the page's plan-array.sbatch and its submission (a job array of
#          --shard slurm tasks, a merge job --dependency=afterok on it);
#          sbatch --array=0-3 --wait of --shard slurm tasks merged here;
#          a failed shard run again by number (--shard 1/4) merges, one
#          run as an array of one task (--array=1) is refused by --merge;
#          without `mkdir -p parts` every task fails, saying why, and the
#          merge job is cancelled (--kill-on-invalid-dep), writing nothing;
#          --array=0-6:2 is refused in every task
#   kill   rank 1 of 3 killed while it plans: srun ends the job within
#          seconds naming task 1, no plan printed or written, no process of
#          the plan left
# Exits 77 (with the reason) when not root or Slurm / munge are missing.
# shellcheck disable=SC2034 # variables that check's conditions (eval) read
set -u
cs=$1 case=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
docs=$here/../../docs/slurm.md
. "$here/slurm-cluster.sh"
[ -x "$cs" ] || { echo "SKIP: collstep not built ('$cs')"; exit 77; }
"$cs" run --help >/dev/null 2>&1 || { echo "SKIP: collstep built without exec/ (no PMIx)"; exit 77; }
slurm_check || exit 77
PATH=$(dirname "$cs"):$PATH # the docs' commands say `collstep`
export PATH

fails=0
check() { # check COND MESSAGE
    if eval "$1"; then echo "ok   $2"; else echo "FAIL $2"; fails=$((fails + 1)); fi
}
work=$(mktemp -d "${TMPDIR:-/tmp}/slurm-plan.XXXXXX") || exit 2
cd "$work" || exit 2

# The plan's arguments, scaled down from the page's; the one-process plan
# of them is what every spread plan must equal.
A=(--platform summit:nodes=4 --size "1M,64M" --top 2 --candidates 8 --budget 3000)
SCALE=(
    "-N 16 --ntasks-per-node=1 --cpus-per-task=32" "-N 1 --ntasks-per-node=3 --cpus-per-task=1"
    "--array=0-15 --cpus-per-task=32" "--array=0-3 --cpus-per-task=1"
    "--time=01:00:00" "--time=00:05:00" # the test partition's MaxTime is 10 min
    "hgx-h100:nodes=128" "summit:nodes=4"
    "--size 1M:1G" "--size 1M,64M --top 2"
    "--candidates 512" "--candidates 8"
)

# doc_block LINE FILE [TEXT...]: the fenced block of the page that has LINE
# (a whole line), scaled down, into FILE; each TEXT (of SCALE) must be in
# it, so that the page's job is never submitted unscaled
doc_block() {
    local want=$1 file=$2 text from to i
    shift 2
    text=$(awk -v want="$want" '
        /^```/ { if (inb) { if (hit) { printf "%s", buf; found = 1; exit }
                            inb = 0; buf = ""; hit = 0 }
                 else inb = 1
                 next }
        inb { buf = buf $0 "\n"; if ($0 == want) hit = 1 }
        END { exit !found }' "$docs")
    check '[ -n "$text" ]' "docs/slurm.md has a block with the line '$want'"
    for from in "$@"; do
        case $text in
        *"$from"*) ;;
        *) check 'false' "the page's block '$want' holds '$from'"; text= ;;
        esac
    done
    for ((i = 0; i < ${#SCALE[@]}; i += 2)); do
        from=${SCALE[i]} to=${SCALE[i + 1]}
        text=${text//"$from"/$to}
    done
    printf '%s\n' "$text" >"$file"
    [ -n "$text" ]
}

# one-process plan
one() {
    collstep plan "${A[@]}" -o one.tuning >one.txt 2>one.err
    check '[ $? = 0 ] && [ -s one.txt ] && [ -s one.tuning ]' "the one-process plan ($(tail -1 one.err))"
}
# same NAME REPORT TUNING: both equal the one-process plan's
same() {
    local rep=$2 tun=$3
    check 'cmp -s one.txt "$rep"' "$1: the report equals the one-process plan's ($(diff one.txt "$rep" 2>&1 | head -3 | tr '\n' ' '))"
    check 'cmp -s one.tuning "$tun"' "$1: the tuning table equals the one-process plan's"
}
# wait_idle SECONDS: until the cluster has no job
wait_idle() {
    local i
    for ((i = 0; i < $1 * 4; i++)); do
        [ -z "$(slurm_exec squeue -h -o %i 2>/dev/null)" ] && return 0
        sleep 0.25
    done
    return 1
}

case_srun() {
    local n rc
    one
    for n in 2 3; do
        slurm_exec srun --mpi=pmix -n $n collstep plan "${A[@]}" -o srun$n.tuning >srun$n.txt 2>srun$n.err
        rc=$?
        check '[ $rc = 0 ]' "srun --mpi=pmix -n $n collstep plan: exit $rc $(tail -2 srun$n.err | tr '\n' ' ')"
        check 'grep -q "planned on $n ranks" srun$n.err' "the $n ranks shared the simulations"
        same "srun -n $n" srun$n.txt srun$n.tuning
    done
    # rank 1 with --top 3, rank 0 with --top 2
    slurm_exec srun --mpi=pmix -n 2 sh -c 'exec collstep plan --top $((2 + SLURM_PROCID)) "$@"' \
        sh --platform summit:nodes=4 --size 1M --candidates 2 >diff.out 2>diff.err
    rc=$?
    check '[ $rc != 0 ] && grep -q "rank 1 was started with different arguments" diff.err && [ ! -s diff.out ]' \
        "ranks of different arguments refused (exit $rc): $(grep -m1 "rank 1" diff.err)"
}

case_batch() {
    local rc
    one
    doc_block "# plan.sbatch: hgx-h100 at 128 nodes (1,024 GPUs) planned on 16 nodes" plan.sbatch \
        "${SCALE[0]}" "${SCALE[4]}" "${SCALE[6]}" "${SCALE[8]}" "${SCALE[10]}" || return
    slurm_exec sbatch --wait -o job.out plan.sbatch >sbatch.out 2>&1
    rc=$?
    check '[ $rc = 0 ]' "sbatch --wait plan.sbatch: exit $rc $(tail -2 job.out 2>/dev/null | tr '\n' ' ')"
    check 'grep -q "planned on 3 ranks" job.out' "the job's 3 tasks shared the simulations"
    same "plan.sbatch" hgx128.plan hgx128.tuning
}

case_array() {
    local rc i n
    one
    doc_block "# plan-array.sbatch: 16 tasks, one shard each" plan-array.sbatch \
        "${SCALE[2]}" "${SCALE[4]}" "${SCALE[6]}" "${SCALE[8]}" "${SCALE[10]}" || return
    doc_block "mkdir -p parts" submit.sh "--dependency=afterok:" || return
    slurm_exec bash -e submit.sh >submit.out 2>&1
    rc=$?
    check '[ $rc = 0 ]' "the page's submission: exit $rc $(cat submit.out | tr '\n' ' ')"
    wait_idle 40
    check '[ $? = 0 ]' "the array and the merge job ended"
    n=$(ls parts/part.* 2>/dev/null | wc -l)
    check '[ "$n" = 4 ]' "four parts ($n)"
    check 'grep -q "shard 3/4" slurm-*_3.out' "task 3 planned shard 3/4"
    same "array, merge job" hgx128.plan hgx128.tuning

    # the one-line form: sbatch --array --wait, merged here
    slurm_exec sbatch --array=0-3 --wait -o 'task-%a.out' --wrap \
        "collstep plan ${A[*]} --shard slurm -o part.\$SLURM_ARRAY_TASK_ID" >wait.out 2>&1
    rc=$?
    check '[ $rc = 0 ]' "sbatch --array=0-3 --wait of --shard slurm: exit $rc"
    collstep plan --merge part.* -o merged.tuning >merged.txt 2>merge.err
    check '[ $? = 0 ]' "collstep plan --merge part.* ($(tail -1 merge.err))"
    same "array --wait, merged" merged.txt merged.tuning

    # a failed task run again by its number, in a job of its own; an array
    # of that task alone plans a shard of 1, which --merge refuses
    rm -f parts/part.1
    slurm_exec sbatch --wait -o again.out --wrap \
        "collstep plan ${A[*]} --shard 1/4 -o parts/part.1" >/dev/null 2>&1
    check '[ $? = 0 ] && [ -s parts/part.1 ]' "shard 1/4 run again: $(tail -1 again.out 2>/dev/null)"
    collstep plan --merge parts/part.* -o again.tuning >again.txt 2>again.err
    check '[ $? = 0 ]' "the parts merged again ($(tail -1 again.err))"
    same "shard run again" again.txt again.tuning
    slurm_exec sbatch --array=1 --wait -o /dev/null --wrap \
        "collstep plan ${A[*]} --shard slurm -o solo.1" >/dev/null 2>&1
    collstep plan --merge parts/part.0 solo.1 parts/part.2 parts/part.3 >solo.txt 2>solo.err
    rc=$?
    check '[ $rc = 2 ] && grep -q "solo.1 of 1" solo.err' \
        "sbatch --array=1 alone: a shard of 1, refused by --merge (exit $rc: $(tail -1 solo.err))"

    # no parts/ folder: every task fails saying so, the merge job is cancelled
    rm -rf parts hgx128.plan hgx128.tuning merge.out slurm-*.out
    grep -v '^mkdir -p parts$' submit.sh >submit-nodir.sh
    slurm_exec bash -e submit-nodir.sh >nodir.out 2>&1
    wait_idle 40
    check '[ $? = 0 ]' "without parts/: the jobs ended (none left pending)"
    n=$(grep -l "parts/part\.[0-3]" slurm-*_[0-3].out 2>/dev/null | wc -l)
    check '[ "$n" = 4 ]' "every task said it could not write its part ($n): $(head -1 slurm-*_0.out 2>/dev/null)"
    check '[ ! -e hgx128.plan ] && [ ! -e hgx128.tuning ] && [ ! -e merge.out ]' \
        "the merge job was cancelled: nothing written"

    # ids not consecutive: every task refused
    rm -f slurm-*.out
    slurm_exec sbatch --array=0-6:2 --wait -o 'step-%a.out' --wrap \
        "collstep plan ${A[*]} --shard slurm -o step.\$SLURM_ARRAY_TASK_ID" >step.out 2>&1
    rc=$?
    n=$(grep -l "ids must be consecutive" step-*.out 2>/dev/null | wc -l)
    check '[ $rc != 0 ] && [ "$n" = 4 ] && [ -z "$(ls step.* 2>/dev/null | grep -v step.out)" ]' \
        "--array=0-6:2: all 4 tasks refused, no part (exit $rc, $n refusals)"
}

case_kill() {
    local rc i f p pid t0 victim="" left
    # about 400 simulations: each of 3 ranks plans for longer than the test
    # waits
    slurm_exec srun --mpi=pmix -n 3 collstep plan --platform summit:nodes=4 --size 64K:1G:2 \
        --all --jobs 1 -o kill.tuning >kill.txt 2>kill.err &
    pid=$!
    # rank 1: a collstep whose parent is the step daemon (not one of its
    # simulations' workers)
    for ((i = 0; i < 80; i++)); do
        [ -z "$victim" ] || break
        sleep 0.25
        for f in $(grep -lzx SLURM_PROCID=1 /proc/[0-9]*/environ 2>/dev/null); do
            p=${f#/proc/} && p=${p%/environ}
            [ "$(cat "/proc/$p/comm" 2>/dev/null)" = collstep ] &&
                grep -qzxF "SLURM_CONF=$SLURM_CONF_PATH" "/proc/$p/environ" 2>/dev/null &&
                [ "$(cat "/proc/$(awk '{ print $4 }' "/proc/$p/stat")/comm" 2>/dev/null)" = slurmstepd ] &&
                victim=$p
        done
    done
    # planning (rank 0 says so)
    for ((i = 0; i < 40; i++)); do grep -q "simulated in" kill.err 2>/dev/null && break; sleep 0.25; done
    t0=$SECONDS
    [ -n "$victim" ] && kill -KILL "$victim"
    wait "$pid"
    rc=$?
    check '[ -n "$victim" ] && [ $rc != 0 ] && [ $((SECONDS - t0)) -le 12 ]' \
        "rank 1 killed while planning: srun exits $rc after $((SECONDS - t0)) s"
    check 'grep -qE "task 1: Killed|rank 1" kill.err' \
        "task 1 named: $(grep -E "task 1: Killed|rank 1" kill.err | tr '\n' ';')"
    check '[ ! -s kill.txt ] && [ ! -e kill.tuning ]' "no plan printed, no tuning table written"
    sleep 1
    left=$(for f in $(grep -lzxF "SLURM_CONF=$SLURM_CONF_PATH" /proc/[0-9]*/environ 2>/dev/null); do
        p=${f#/proc/} && p=${p%/environ}
        [ "$(cat "/proc/$p/comm" 2>/dev/null)" = collstep ] && echo "$p"
    done)
    check '[ -z "$left" ]' "no collstep of the job left: ${left:-none}"
}

case $case in
srun | batch | array | kill) ;;
*) echo "usage: slurm_plan.sh COLLSTEP srun|batch|array|kill" >&2; exit 2 ;;
esac

slurm_start "$work/slurm" || exit 1
SLURM_CONF_PATH=$work/slurm/slurm.conf
echo "cluster: $(slurm_exec sinfo -h -o '%P %D %c %t %N') in $work/slurm"
"case_$case"
if [ $fails != 0 ]; then
    echo "---- $SLURM_STEPD_LOG (last 15 lines)"
    tail -n 15 "$work/slurm/$SLURM_STEPD_LOG"
fi
slurm_stop
[ $fails = 0 ] || exit 1
exit 0
