#!/usr/bin/env bash
# Sampling throughput of APPO against PPO with the same worker processes, side by side:
#   bench/appo_throughput.sh [RLX_TORCH] [WORKERS_LIST] [SECONDS] [REPEATS]
# For each worker count (default 2,8,64) and repeat, trains experiments/cartpole-ppo.yaml
# (LibTorch's learner, so both sides run the same learner code) and experiments/cartpole-appo.yaml
# for SECONDS (default 20) of training, no reward stop, and prints one key=value line per run:
# env steps the learner trained on per second, env steps the workers sampled per second (every
# fragment received, stale ones included), the share of sampled steps dropped as stale, and the
# workers' idle share (the time they held no credit, everything they may send queued at the
# learner or in flight, over their time joined). Then per worker count the medians and
# APPO/PPO ratios of trained and sampled steps per second.
set -uo pipefail
cd "$(dirname "$0")/.."
rlx=${1:-build/rlx-torch} workers_list=${2:-2,8,64} seconds=${3:-20} repeats=${4:-3}
work=$(mktemp -d /tmp/rlx-appo-throughput-XXXXXX)
trap 'rm -rf "$work"' EXIT

median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
for workers in ${workers_list//,/ }; do
  for repeat in $(seq 1 "$repeats"); do
    for algorithm in ppo appo; do
      out="$work/$algorithm-$workers-$repeat"
      settings=(--workers "$workers" --set stop.episode_return_mean=null --set "stop.time_total_s=$seconds"
                --set stop.timesteps_total=100000000)
      [ "$algorithm" = ppo ] && settings+=(--set learner_backend=torch --set lr_schedule=constant --set clip_schedule=constant)
      [ "$algorithm" = appo ] && settings+=(--set lr_schedule=constant)
      "$rlx" train "experiments/cartpole-$algorithm.yaml" "${settings[@]}" --output "$out" --trial-name t -q \
        >"$out.log" 2>&1
      python3 - "$(find "$out" -name result.json | head -1)" "$algorithm" "$workers" "$repeat" <<'PY' | tee -a "$work/lines"
import json, sys
r = json.load(open(sys.argv[1])); s = r["sampler"]
t = r["time_total_s"]; steps = r["timesteps_total"]
per_fragment = steps / s["fragments_consumed"] if s["fragments_consumed"] else 0
sampled = s["fragments_received"] * per_fragment
stale = s["fragments_dropped_stale"] / s["fragments_received"] if s["fragments_received"] else 0
idle = s.get("worker_idle_share")
print(f"algorithm={sys.argv[2]} workers={sys.argv[3]} repeat={sys.argv[4]} seconds={t:.1f} "
      f"trained_steps_per_s={steps / t:.0f} sampled_steps_per_s={sampled / t:.0f} stale_share={stale:.3f} "
      f"worker_idle_share={'-' if idle is None else f'{idle:.3f}'} return_mean={r['episode_return_mean']}")
PY
    done
  done
  for algorithm in ppo appo; do
    for key in trained_steps_per_s sampled_steps_per_s worker_idle_share; do
      grep "algorithm=$algorithm workers=$workers " "$work/lines" | sed -n "s/.*$key=\([0-9.]*\).*/\1/p" | median >"$work/$algorithm-$workers-$key"
    done
  done
  read -r pt < "$work/ppo-$workers-trained_steps_per_s"; read -r at < "$work/appo-$workers-trained_steps_per_s"
  read -r ps < "$work/ppo-$workers-sampled_steps_per_s"; read -r as < "$work/appo-$workers-sampled_steps_per_s"
  read -r pi < "$work/ppo-$workers-worker_idle_share"; read -r ai < "$work/appo-$workers-worker_idle_share"
  echo "summary workers=$workers ppo_trained_steps_per_s=$pt appo_trained_steps_per_s=$at appo_over_ppo_trained=$(awk -v a="$at" -v b="$pt" 'BEGIN {printf "%.2f", a / b}') ppo_sampled_steps_per_s=$ps appo_sampled_steps_per_s=$as appo_over_ppo_sampled=$(awk -v a="$as" -v b="$ps" 'BEGIN {printf "%.2f", a / b}') ppo_worker_idle_share=$pi appo_worker_idle_share=$ai"
done
