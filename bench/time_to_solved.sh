#!/usr/bin/env bash
# Exec to solved, the two learners side by side in one run, seeds interleaved:
#   bench/time_to_solved.sh [RLX] [EXPERIMENT] [SEEDS] [EXTRA --set ARGS...]
# RLX: the `rlx` executable (default build/rlx); EXPERIMENT: default experiments/cartpole-ppo.yaml;
# SEEDS: how many, from 0 (default 3). Each seed trains the file twice: learner_backend=torch
# (rlx execs rlx-torch, LibTorch's learner) and learner_backend=native (rlx trains it itself).
# Prints one key=value line per run (wall ms from exec to exit, exit status: 0 solved, the steps
# and iterations of result.json), then the medians of each side, native/torch, and the native
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
  for backend in torch native; do
    out="$work/$backend-$seed"
    start=$(date +%s%N)
    "$rlx" train "$experiment" --seed "$seed" --set learner_backend=$backend "${extra[@]}" --output "$out" \
      --trial-name t -q >"$out.log" 2>&1
    status=$?
    end=$(date +%s%N)
    wall=$(( (end - start) / 1000000 ))
    result=$(find "$out" -name result.json | head -1)
    steps=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r.get('timesteps_total', r.get('final_row', {}).get('timesteps_total', '')))" "$result" 2>/dev/null)
    iters=$(sed -n 's/^stopped by .* at iteration \([0-9]*\):.*/\1/p' "$out.log")
    echo "backend=$backend seed=$seed exec_to_exit_ms=$wall exit=$status solved=$([ $status = 0 ] && echo 1 || echo 0) iterations=$iters steps=$steps"
    echo "$wall" >>"$work/$backend.ms"
  done
done
t=$(median <"$work/torch.ms") n=$(median <"$work/native.ms")
echo "torch_median_ms=$t native_median_ms=$n native_over_torch=$(awk -v a="$n" -v b="$t" 'BEGIN {printf "%.3f", a / b}')"
echo "sb3_ms=$sb3_ms sb3_over_native=$(awk -v a="$sb3_ms" -v b="$n" 'BEGIN {printf "%.2f", a / b}') sb3_over_torch=$(awk -v a="$sb3_ms" -v b="$t" 'BEGIN {printf "%.2f", a / b}')"
