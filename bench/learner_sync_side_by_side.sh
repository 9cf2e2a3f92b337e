#!/usr/bin/env bash
# All-reduce against the parameter server, side by side on one machine (forked learner ranks,
# loopback):
#   bench/learner_sync_side_by_side.sh [RLX] [SEEDS] [EXPERIMENT] [RANKS...]
# For seeds 0..SEEDS-1 (default 1), EXPERIMENT (default experiments/cartpole-ppo.yaml, synchronous
# sampling) and each number of ranks (default 2 4), trains to the stop criterion with
# learner_sync allreduce and parameter_server, each without and with a straggler (rank 1 computes
# 5x slower: debug_slow_rank 1, debug_slow_factor 5). One key=value line per run: wall ms from exec
# to exit, exit status (0: target reached), env steps, updates/s and env steps/s over the run, and
# for the parameter server the last update's staleness and how its steps were shared. Then each
# setting's medians and parameter_server / allreduce ratios of wall time.
set -uo pipefail
cd "$(dirname "$0")/.."
rlx=${1:-build/rlx} seeds=${2:-1} experiment=${3:-experiments/cartpole-ppo.yaml}
shift $(($# < 3 ? $# : 3))
ranks_list=("${@:-2 4}")
read -r -a ranks_list <<<"${ranks_list[*]}"
work=$(mktemp -d /tmp/rlx-sync-XXXXXX)
trap 'rm -rf "$work"' EXIT
name=$(basename "$experiment" .yaml)

median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

for seed in $(seq 0 $((seeds - 1))); do
  for ranks in "${ranks_list[@]}"; do
    for straggler in none rank1x5; do
      for sync in allreduce parameter_server; do
        out="$work/$sync-$ranks-$straggler-$seed"
        slow=()
        [ "$straggler" = none ] || slow=(--set debug_slow_rank=1 --set debug_slow_factor=5)
        start=$(date +%s%N)
        "$rlx" train "$experiment" --learners "$ranks" --workers 0 --seed "$seed" --set learner_sync="$sync" \
          "${slow[@]}" --output "$out" --trial-name t -q >"$out.log" 2>&1
        status=$?
        wall=$(( ($(date +%s%N) - start) / 1000000 ))
        figures=$(python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
l = r['learner']
line = 'steps=%d updates_per_s=%.2f env_steps_per_s=%.0f' % (r['timesteps_total'],
    r['training_iteration'] / r['time_total_s'], r['timesteps_total'] / r['time_total_s'])
if 'staleness_mean' in l:
    line += ' staleness_mean=%.2f staleness_max=%d tasks_per_rank=%s held_back=%d' % (
        l['staleness_mean'], l['staleness_max'], ','.join(map(str, l['tasks_per_rank'])), l['held_back'])
print(line)" "$out/$name/t/result.json")
        key="$sync ranks=$ranks straggler=$straggler"
        echo "sync=$sync ranks=$ranks straggler=$straggler seed=$seed exec_to_exit_ms=$wall exit=$status $figures" |
          tee -a "$work/lines"
        echo "$wall" >>"$work/$sync-$ranks-$straggler.ms"
      done
    done
  done
done
for ranks in "${ranks_list[@]}"; do
  for straggler in none rank1x5; do
    a=$(median <"$work/allreduce-$ranks-$straggler.ms")
    p=$(median <"$work/parameter_server-$ranks-$straggler.ms")
    echo "summary ranks=$ranks straggler=$straggler allreduce_median_ms=$a parameter_server_median_ms=$p" \
      "ratio_parameter_server_over_allreduce=$(awk -v a="$a" -v p="$p" 'BEGIN {printf "%.3f", p / a}')"
  done
done
