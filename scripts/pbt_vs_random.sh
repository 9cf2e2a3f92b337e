#!/usr/bin/env bash
# PBT against random search on CartPole-v1 PPO with a deliberately bad initial lr range
# (loguniform 1e-5..1e-4): 8 trials x STEPS env steps each for both (no reward stop, so both
# spend the same steps), SEEDS seeds each. Prints one row per run: the best trial's final
# return and the steps at which it first reached 475. Usage: scripts/pbt_vs_random.sh [STEPS] [SEEDS]
set -euo pipefail
steps=${1:-100000}
seeds=${2:-3}
rlx=${RLX:-build/rlx}
out=${OUT:-runs/pbt-vs-random}
mkdir -p "$out"
base=$(sed -n '/^pbt-cartpole-ppo:/,/^  tune:/p' experiments/pbt-cartpole-ppo.yaml | sed '$d')
for seed in $(seq 0 $((seeds - 1))); do
  for method in pbt random; do
    file="$out/$method-seed$seed.yaml"
    { echo "$base" | sed "s/^pbt-cartpole-ppo:/$method-seed$seed:/"
      echo "  tune:"
      echo "    num_samples: 8"
      echo "    seed: $seed"
      echo "    param_space: {lr: {loguniform: [1.0e-5, 1.0e-4]}, seed: {randint: [0, 1000]}}"
      if [ "$method" = pbt ]; then
        echo "    scheduler: {type: pbt, time_attr: timesteps_total, perturbation_interval: 10000, synch: true,"
        echo "                hyperparam_mutations: {lr: {loguniform: [1.0e-5, 1.0e-2]}, clip_param: [0.1, 0.2, 0.3], entropy_coeff: [0.0, 0.001, 0.01]}}"
      fi; } > "$file"
    "$rlx" tune "$file" --output "$out" --quiet --set stop.episode_return_mean=null --set stop.timesteps_total="$steps" >/dev/null
  done
done
python3 - "$out" "$seeds" <<'PY'
import csv, json, sys, os
out, seeds = sys.argv[1], int(sys.argv[2])
print("| method | seed | best trial | final return | steps to 475 |")
print("|---|---|---|---|---|")
for seed in range(seeds):
    for method in ("pbt", "random"):
        d = os.path.join(out, f"{method}-seed{seed}")
        rows = list(csv.DictReader(open(os.path.join(d, "trials.csv"))))
        best = max(rows, key=lambda r: float(r["episode_return_mean"] or "-inf"))
        reach = "-"
        for line in open(os.path.join(d, best["trial"], "result.jsonl")):
            r = json.loads(line)
            if r.get("episode_return_mean") is not None and r["episode_return_mean"] >= 475:
                reach = r["timesteps_total"]; break
        print(f"| {method} | {seed} | {best['trial']} | {float(best['episode_return_mean']):.1f} | {reach} |")
PY
