#!/usr/bin/env bash
# The check on a machine with NVIDIA GPUs, judged by what each report says, within 5 minutes:
#   1. the default check with --host-check: GPU_CHECK_PASSED on cuda:0, named, with its
#      capability, nvidia-smi read;
#   2. --all-devices: every GPU torch sees (CUDA_VISIBLE_DEVICES honored) passed, every copy
#      between two of them verified;
#   3. torchrun --nproc-per-node <those GPUs> ... --distributed: NCCL, rank 0's report and each
#      rank's own, the all-reduce's sum right (between processes from two GPUs on);
#   4. two ranks started by hand on cuda:0: NCCL refuses them ("Duplicate GPU detected"), the
#      check says COLLECTIVE_FAILED and names DUPLICATE_GPU_PER_RANK;
#   5. summarize over the folder (the job and the devices at a glance).
# Each report is judged by scripts/gpu-smoke-judge.py (its content: codes, device names and
# capabilities, the backend, the collective's numbers), not by exit statuses alone. It runs from
# a checkout with only a Python that has torch (the package from src/ via PYTHONPATH, nothing
# installed). Every step is bounded (TIMEOUT_S, default 40 s, plus 15 s), and the whole run by
# BUDGET_S (default 300 s): a step that no longer fits is not started, and counts as failed.
# A step that fails is reported and the next one still runs. Exit 0 only when every step passed.
#
#   scripts/gpu-smoke.sh [PYTHON] [FOLDER]     # default: python3, ./gpu-smoke-<UTC time>
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

python="${1:-python3}"
folder="${2:-gpu-smoke-$(date -u +%Y%m%dT%H%M%SZ)}"
timeout_s="${TIMEOUT_S:-40}"
budget_s="${BUDGET_S:-300}"
bound=$((timeout_s + 15))
judge=("$python" scripts/gpu-smoke-judge.py)
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"

mkdir -p "$folder" || exit 2
if [ -n "$(ls -A "$folder")" ]; then  # the check never overwrites: an old report would be judged
    echo "gpu-smoke: $folder is not empty" >&2
    exit 2
fi
echo "gpu-smoke: reports in $folder; ${timeout_s} s per check, ${budget_s} s in all"

failed=0
fits() {  # fits NAME: whether a step of at most $bound seconds still fits in the budget
    if [ $((SECONDS + bound)) -gt "$budget_s" ]; then
        echo
        echo "== $1: not started, ${SECONDS} s of ${budget_s} s used"
        failed=1
        return 1
    fi
}
step() {  # step NAME COMMAND...: run it bounded, its output in FOLDER/NAME.log; say how it ended
    local name="$1"
    shift
    echo
    echo "== $name: $*"
    local start=$SECONDS
    timeout --kill-after=5 "$bound" "$@" >"$folder/$name.log" 2>&1
    local status=$?
    echo "== $name: exit $status in $((SECONDS - start)) s"
}
judged() {  # judged WHAT ARGUMENTS...: the reports' content, as gpu-smoke-judge.py sees it
    if ! "${judge[@]}" "$@"; then
        echo "== $1: the reports do not say what was expected"
        failed=1
    fi
}

tool=("$python" -m kernodeck_diagnostic --timeout "$timeout_s")
if fits default; then
    step default "${tool[@]}" --host-check --output "$folder/default.json"
    judged single "$folder/default.json"
fi
# torch's own count, as the check saw it: CUDA_VISIBLE_DEVICES honored (nvidia-smi -L is not).
gpus="$("${judge[@]}" count "$folder/default.json" || true)"
case "$gpus" in
    ''|*[!0-9]*) gpus=0; failed=1; echo "gpu-smoke: the default check's report gave no GPU count" ;;
esac
echo "gpu-smoke: $gpus GPU(s) visible to torch"

if fits all-devices; then
    step all-devices "${tool[@]}" --all-devices --output "$folder/all-devices.json"
    judged every "$folder/all-devices.json"
fi

port() { "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
if [ "$gpus" -lt 1 ]; then
    echo "== distributed: not run, no GPU visible"
    failed=1
elif fits distributed; then
    step distributed "$python" -m torch.distributed.run --nproc-per-node "$gpus" \
        --master-addr 127.0.0.1 --master-port "$(port)" \
        -m kernodeck_diagnostic --distributed --timeout "$timeout_s" \
        --output "$folder/job-rank{rank}.json"
    ranks=()
    for ((rank = 0; rank < gpus; rank++)); do ranks+=("$folder/job-rank$rank.json"); done
    judged job "$gpus" "${ranks[@]}"
fi

if [ "$gpus" -ge 1 ] && fits duplicate-gpu; then
    # Two ranks started by hand, both with LOCAL_RANK 0: both on cuda:0, each bounded.
    echo
    echo "== duplicate-gpu: ranks 0 and 1 of 2, both with LOCAL_RANK=0"
    start=$SECONDS
    duplicate_port="$(port)"
    pids=()
    for rank in 0 1; do
        RANK=$rank WORLD_SIZE=2 LOCAL_RANK=0 GROUP_RANK=0 MASTER_ADDR=127.0.0.1 \
            MASTER_PORT="$duplicate_port" NCCL_DEBUG=WARN timeout --kill-after=5 "$bound" \
            "${tool[@]}" --distributed --output "$folder/duplicate-rank{rank}.json" \
            >"$folder/duplicate-rank$rank.log" 2>&1 &
        pids+=($!)
    done
    statuses=()
    for pid in "${pids[@]}"; do
        wait "$pid"
        statuses+=($?)
    done
    echo "== duplicate-gpu: exit ${statuses[*]} in $((SECONDS - start)) s"
    judged duplicate "$folder/duplicate-rank0.json" "$folder/duplicate-rank1.json"
    # NCCL's own words, when its warning reached a rank's output (said, not judged: the
    # worker's output may be kept from it).
    grep -h -m 1 "Duplicate GPU detected" "$folder"/duplicate-rank*.log \
        || echo "  (NCCL's own message not in the ranks' output)"
fi

if fits summarize; then
    echo
    echo "== summarize: $folder"
    timeout --kill-after=5 "$bound" "$python" -m kernodeck_diagnostic summarize "$folder"
    echo "== summarize: exit $?"
fi
echo
if [ "$failed" -eq 0 ]; then
    echo "gpu-smoke: every step passed, in ${SECONDS} s"
else
    echo "gpu-smoke: a step failed (see above), in ${SECONDS} s"
fi
exit "$failed"
