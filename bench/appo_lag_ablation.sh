#!/usr/bin/env bash
# What V-trace buys on stale data: APPO on CartPole-v1 with every fragment DELAY policy versions
# old (worker_weight_delay, synchronous sampling, so each run is deterministic under its seed),
# V-trace on against V-trace off (no correction for the lag: GAE and the ratio to the learner's
# own policy, as plain PPO on stale data), seeds interleaved:
#   bench/appo_lag_ablation.sh [RLX_TORCH] [DELAY] [SEEDS] [BUDGET] [CURVES_CSV]
# Prints one key=value line per run (solved, steps to 475, the final 100-episode mean, the mean
# lag trained on), the learning curve of each run at every 25k steps (the 100-episode mean, until
# the run stopped), and
# per side the runs solved and the median steps to solve (unsolved runs count as the budget).
# CURVES_CSV (optional) gets every iteration: vtrace,seed,timesteps,episode_return_mean.
set -uo pipefail
cd "$(dirname "$0")/.."
rlx=${1:-build/rlx-torch} delay=${2:-8} seeds=${3:-5} budget=${4:-300000} curves=${5:-}
work=$(mktemp -d /tmp/rlx-appo-ablation-XXXXXX)
trap 'rm -rf "$work"' EXIT
[ -n "$curves" ] && echo "vtrace,seed,timesteps,episode_return_mean" >"$curves"

median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
for seed in $(seq 0 $((seeds - 1))); do
  for vtrace in true false; do
    out="$work/$vtrace-$seed"
    "$rlx" train experiments/cartpole-appo.yaml --seed "$seed" --workers 0 --set "worker_weight_delay=$delay" \
      --set "max_policy_lag=$((delay + 8))" --set "vtrace=$vtrace" --set "stop.timesteps_total=$budget" \
      --output "$out" --trial-name t -q >"$out.log" 2>&1
    python3 - "$out/cartpole-appo/t/result.jsonl" "$vtrace" "$seed" "$budget" "$curves" >>"$work/$vtrace.lines" <<'PY'
import json, sys
path, vtrace, seed, budget, curves = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
rows = [json.loads(line) for line in open(path)]
solved = next((r["timesteps_total"] for r in rows if (r["episode_return_mean"] or 0) >= 475), None)
last = rows[-1]
curve = []
for mark in range(25000, budget + 1, 25000):
    if mark > last["timesteps_total"] + 25000:
        break  # the run had stopped (solved)
    upto = [r for r in rows if r["timesteps_total"] <= mark]
    value = upto[-1]["episode_return_mean"] if upto else None
    curve.append("-" if value is None else f"{value:.0f}")
lags = [r["learner"]["policy_lag"]["mean"] for r in rows[len(rows) // 2:]]
print(f"vtrace={vtrace} seed={seed} solved={int(solved is not None)} steps_to_solved={solved or budget} "
      f"final_return_mean={last['episode_return_mean']:.1f} lag_mean={sum(lags) / len(lags):.2f} "
      f"curve_every_25k={','.join(curve)}")
if curves:
    with open(curves, "a") as out:
        for r in rows:
            out.write(f"{vtrace},{seed},{r['timesteps_total']},{r['episode_return_mean']}\n")
PY
    tail -1 "$work/$vtrace.lines"
  done
done
for vtrace in true false; do
  solved=$(grep -c "solved=1" "$work/$vtrace.lines")
  med=$(sed -n 's/.*steps_to_solved=\([0-9]*\).*/\1/p' "$work/$vtrace.lines" | median)
  echo "summary vtrace=$vtrace delay=$delay solved=$solved/$seeds median_steps_to_solved=$med budget=$budget"
done
