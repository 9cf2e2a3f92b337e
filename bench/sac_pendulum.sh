#!/usr/bin/env bash
# SAC to -200 on Pendulum-v1: steps and seconds per seed, one JSON line each, then a summary line.
#   bench/sac_pendulum.sh [RLX] [SEEDS] [EXTRA --set ARGS...]
# RLX: the `rlx` executable (default build/rlx); SEEDS: how many, from 0 (default 3). Each seed
# trains experiments/pendulum-sac.yaml (synchronous, the native learner) until the mean return of
# the last 100 training episodes reaches -200 (its stop criterion), within its step budget.
# "seconds" is the run's time_total_s (training, as results report it), "wall_s" the whole
# process. E.g. `bench/sac_pendulum.sh build/rlx 3 --set hidden_sizes=256,256` for SB3's network.
# Stable-Baselines3's SAC (RL Zoo's Pendulum settings, 256-256) runs at roughly 100-150 env steps/s
# on this kind of 2-core machine (not measured by this script: SB3 is not installed here).
set -uo pipefail
cd "$(dirname "$0")/.."
rlx=${1:-build/rlx} seeds=${2:-3}
shift $(( $# < 2 ? $# : 2 ))
extra=("$@")
work=$(mktemp -d /tmp/rlx-sac-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT

for seed in $(seq 0 $((seeds - 1))); do
  out="$work/seed-$seed"
  start=$(date +%s%N)
  "$rlx" train experiments/pendulum-sac.yaml --seed "$seed" "${extra[@]}" --output "$out" --trial-name t -q \
    >"$out.log" 2>&1
  status=$?
  end=$(date +%s%N)
  python3 - "$out/pendulum-sac/t" "$seed" "$status" "$(( (end - start) / 1000000 ))" <<'PY'
import json, sys
trial, seed, status, wall_ms = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
try:
    r = json.load(open(trial + "/result.json"))
    params = open(trial + "/params.yaml").read()
except OSError as error:
    print(json.dumps({"seed": seed, "exit": status, "error": str(error)}))
    sys.exit(0)
hidden = next((line.split(":", 1)[1].strip() for line in params.splitlines() if line.strip().startswith("hidden_sizes:")), "?")
steps, seconds = r["timesteps_total"], r["time_total_s"]
print(json.dumps({"seed": seed, "solved": status == 0, "steps": steps, "seconds": round(seconds, 2),
                  "steps_per_s": round(steps / seconds, 1), "wall_s": round(wall_ms / 1000, 2),
                  "episode_return_mean": round(r["episode_return_mean"], 1), "hidden_sizes": hidden}))
PY
done | tee "$work/lines"
python3 - "$work/lines" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
done = [r for r in rows if "steps" in r]
if done:
    print(json.dumps({"summary": True, "seeds": len(rows), "solved": sum(r["solved"] for r in done),
                      "median_steps": statistics.median(r["steps"] for r in done),
                      "median_seconds": statistics.median(r["seconds"] for r in done),
                      "median_steps_per_s": statistics.median(r["steps_per_s"] for r in done)}))
PY
