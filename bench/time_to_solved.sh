#!/usr/bin/env bash
# Exec to solved, the two learners side by side in one run, seeds interleaved:
#   bench/time_to_solved.sh [RLX] [EXPERIMENT] [SEEDS] [EXTRA --set ARGS...]
# RLX: the `rlx` executable (default build/rlx); EXPERIMENT: default experiments/cartpole-ppo.yaml;
# SEEDS: how many, from 0 (default 3). Each seed trains the file three times: torch
# (learner_backend=torch: rlx execs rlx-torch, LibTorch's learner), native (learner_backend=native:
# rlx trains it itself) and native_sync (the same with --workers 0: synchronous sampling).
# Prints one key=value line per run (wall ms from exec to exit, exit status: 0 solved, the
# iterations and steps trained on of result.json, and the steps the workers sampled, stale
# fragments the learner dropped included), then the medians of each side, native/torch, and the native
# median against Stable-Baselines3's 14.3 s (the whole process, median of seeds 0-2, measured on
# this kind of machine: shared/reference/learning-details.md).
set -uo pipefail
cd "$(dirname "$0")/.."
rlx=${1:-build/rlx} experiment=${2:-experiments/cartpole-ppo.yaml} seeds=${3:-3}
shift $(( $# < 3 ? $# : 3 ))
extra=("$@")
work=$(mktemp -d /tmp/rlx-solve-XXXXXX)
trap 'rm -rf "$work"' EXIT
sb3_ms=14300

median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
for seed in $(seq 0 $((seeds - 1))); do
  for backend in torch native native_sync; do
    out="$work/$backend-$seed"
    settings=(--set "learner_backend=${backend%_sync}")
    [ "$backend" = native_sync ] && settings+=(--workers 0)
    start=$(date +%s%N)
    "$rlx" train "$experiment" --seed "$seed" "${settings[@]}" "${extra[@]}" --output "$out" --trial-name t -q \
      >"$out.log" 2>&1
    status=$?
    end=$(date +%s%N)
    wall=$(( (end - start) / 1000000 ))
    result=$(find "$out" -name result.json | head -1)
    read -r steps sampled < <(python3 -c "
import json, sys
r = json.load(open(sys.argv[1])); s = r['sampler']
steps, received, consumed = r['timesteps_total'], s['fragments_received'], s['fragments_consumed']
print(steps, steps * received // consumed if received else steps)" "$result" 2>/dev/null)
    iters=$(sed -n 's/^stopped by .* at iteration \([0-9]*\):.*/\1/p' "$out.log")
    echo "backend=$backend seed=$seed exec_to_exit_ms=$wall exit=$status solved=$([ $status = 0 ] && echo 1 || echo 0) iterations=$iters steps=$steps sampled_steps=$sampled"
    echo "$wall" >>"$work/$backend.ms"
  done
done
t=$(median <"$work/torch.ms") n=$(median <"$work/native.ms") s=$(median <"$work/native_sync.ms")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
echo "torch_median_ms=$t native_median_ms=$n native_sync_median_ms=$s native_over_torch=$(ratio "$n" "$t")"
echo "sb3_ms=$sb3_ms sb3_over_native=$(ratio $sb3_ms "$n") sb3_over_native_sync=$(ratio $sb3_ms "$s") sb3_over_torch=$(ratio $sb3_ms "$t")"
