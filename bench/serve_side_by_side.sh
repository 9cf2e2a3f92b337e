#!/usr/bin/env bash
# `rlx serve` beside the Python server a user would write by hand (bench/peers/python_policy_server.py,
# ThreadingHTTPServer over python/rlx_policy.py), on two real policies: PPO on CartPole-v1 (trained
# to the solved threshold) and a short SAC run on Hopper-v4 (a MuJoCo-sized network: 11 floats in,
# 256-256 ReLU, 3 floats out; its skill does not matter for serving).
#   bench/serve_side_by_side.sh [SECONDS] [REPEATS] [CONCURRENCY] [RATES]
# Defaults: 5 s runs, 3 repeats, concurrency 1,8,64,256, and an open-loop series over 64
# connections at RATES (default 1000,10000,400000 requests/s: the last about 10x what rlx serve
# sustains on a 2-core machine, to show that latency grows but the server's memory stays bounded).
# Prints `rlx bench serve`'s JSON lines; the "summary" lines at the end hold the medians and the
# rlx/python ratios of requests/s and p50. Needs a build with rlx serve (build/rlx) and
# Debian's python3-numpy.
set -euo pipefail
seconds=${1:-5} repeats=${2:-3} concurrency=${3:-1,8,64,256} rates=${4:-1000,10000,400000}
cd "$(dirname "$0")/.."
rlx=build/rlx
work=$(mktemp -d /tmp/rlx-serve-side-by-side-XXXXXX)
trap 'rm -rf "$work"' EXIT

# Trains experiment FILE with extra arguments, then exports its newest checkpoint to OUT.rlxp.
train_and_export() {
  local experiment=$1 out=$2
  shift 2
  echo "training $experiment $*" >&2
  "$rlx" train "$experiment" --workers 0 --seed 0 --output "$work/runs" -q "$@" >&2 || {
    local status=$?
    [ "$status" -eq 3 ] || exit "$status"  # 3: stopped by its step budget, which is all we asked of it
  }
  local name
  name=$(basename "$experiment" .yaml)
  "$rlx" export "$(ls -d "$work/runs/$name"/*/checkpoints/* | tail -1)" --output "$work/$out.rlxp" >&2
}

start=$(date +%s)
train_and_export experiments/cartpole-ppo.yaml cartpole
train_and_export experiments/hopper-sac.yaml hopper --set stop.timesteps_total=12000 --set learning_starts=10000
echo "trained and exported in $(( $(date +%s) - start )) s" >&2

"$rlx" bench serve "cartpole=$work/cartpole.rlxp" "hopper=$work/hopper.rlxp" --python-baseline \
  --seconds "$seconds" --repeats "$repeats" --concurrency "$concurrency" --rate "$rates" --connections 64
