#!/usr/bin/env bash
# The check on a machine with NVIDIA GPUs, every mode, every report in one folder, then summarized:
#   1. the default check (GPU 0);
#   2. --all-devices (every visible GPU in one worker);
#   3. --host-check (what nvidia-smi says beside the check);
#   4. torchrun --nproc-per-node <every GPU> ... --distributed (NCCL), one report per rank;
#   5. summarize over the folder.
# It runs from a checkout with only a Python that has torch (the package from src/ via
# PYTHONPATH, nothing installed). Every step is bounded (TIMEOUT_S for the check, plus a margin);
# a step that fails is reported and the next one still runs. Exit 0 only when every step passed.
#
#   scripts/gpu-smoke.sh [PYTHON] [FOLDER]     # default: python3, ./gpu-smoke-<UTC time>
set -uo pipefail
cd "$(dirname "$0")/.."

python="${1:-python3}"
folder="${2:-gpu-smoke-$(date -u +%Y%m%dT%H%M%SZ)}"
timeout_s="${TIMEOUT_S:-60}"
bound=$((timeout_s + 30))
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"

if ! "$python" -c 'import torch' >/dev/null 2>&1; then
    echo "gpu-smoke: $python cannot import torch" >&2
    exit 2
fi
gpus="$(timeout 10 nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)"
if [ "${gpus:-0}" -lt 1 ]; then
    gpus="$(timeout 60 "$python" -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null \
            || echo 0)"
fi
mkdir -p "$folder" || exit 2
echo "gpu-smoke: $gpus GPU(s); reports in $folder; time limit ${timeout_s} s per check"

failed=0
step() {  # step NAME COMMAND...: run it bounded, say how it ended
    local name="$1"
    shift
    echo
    echo "== $name: $*"
    local start=$SECONDS
    timeout --kill-after=5 "$bound" "$@"
    local status=$?
    echo "== $name: exit $status in $((SECONDS - start)) s"
    [ "$status" -eq 0 ] || failed=1
}

tool=("$python" -m kernodeck_diagnostic --timeout "$timeout_s")
step default "${tool[@]}" --output "$folder/default.json"
step all-devices "${tool[@]}" --all-devices --output "$folder/all-devices.json"
step host-check "${tool[@]}" --host-check --output "$folder/host-check.json"
if [ "${gpus:-0}" -ge 1 ]; then
    port="$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    step distributed "$python" -m torch.distributed.run --nproc-per-node "$gpus" \
        --master-addr 127.0.0.1 --master-port "$port" \
        -m kernodeck_diagnostic --distributed --timeout "$timeout_s" \
        --output "$folder/distributed-rank{rank}.json"
else
    echo "== distributed: skipped, no GPU visible"
    failed=1
fi
step summarize "$python" -m kernodeck_diagnostic summarize "$folder"
echo
if [ "$failed" -eq 0 ]; then
    echo "gpu-smoke: every step passed"
else
    echo "gpu-smoke: a step failed (see above)"
fi
exit "$failed"
