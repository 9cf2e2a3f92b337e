#!/usr/bin/env bash
# The native learner's product threads (learner_threads) on SAC at SB3's 256-256 networks: the same
# run (experiments/hopper-sac.yaml, synchronous, seed 0, learning from step 1,000) with each thread
# count in turn, REPEATS times, interleaved. One JSON line per run, then one per thread count with
# the median seconds and gradient steps per second and its speed-up over the first count (a ratio of
# medians from this one invocation). The runs must end with the same return: threads split a
# product's rows, so every count computes the same numbers.
#   bench/sac_learner_threads.sh [RLX] [THREADS,...] [STEPS] [REPEATS]
# defaults: build/rlx, 1,2, 6000 env steps (5,000 gradient steps), 3 repeats.
set -uo pipefail
cd "$(dirname "$0")/.."
rlx=${1:-build/rlx} counts=${2:-1,2} steps=${3:-6000} repeats=${4:-3}
work=$(mktemp -d /tmp/rlx-sac-threads-XXXXXX)
trap 'rm -rf "$work"' EXIT

for repeat in $(seq 1 "$repeats"); do
  for threads in ${counts//,/ }; do
    out="$work/t$threads-r$repeat"
    "$rlx" train experiments/hopper-sac.yaml --seed 0 --set stop.timesteps_total="$steps" --set learning_starts=1000 \
      --set learner_threads="$threads" --output "$out" --trial-name t -q >"$out.log" 2>&1
    python3 - "$out/hopper-sac/t/result.json" "$threads" "$repeat" "$steps" <<'PY'
import json, sys
path, threads, repeat, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
try:
    r = json.load(open(path))
except OSError as error:
    print(json.dumps({"threads": threads, "repeat": repeat, "error": str(error)}))
    sys.exit(0)
print(json.dumps({"threads": threads, "repeat": repeat, "steps": r["timesteps_total"], "seconds": round(r["time_total_s"], 2),
                  "gradient_steps_per_s": round((steps - 1000) / r["time_total_s"], 1),
                  "episode_return_mean": r["episode_return_mean"]}), flush=True)
PY
  done
done | tee "$work/runs.jsonl"
python3 - "$work/runs.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if '"seconds"' in line]
counts = sorted({r["threads"] for r in rows}, key=[r["threads"] for r in rows].index)
returns = {r["episode_return_mean"] for r in rows}
base = None
for threads in counts:
    seconds = statistics.median(r["seconds"] for r in rows if r["threads"] == threads)
    base = base or seconds
    print(json.dumps({"threads": threads, "median_seconds": round(seconds, 2),
                      "median_gradient_steps_per_s": round(statistics.median(r["gradient_steps_per_s"] for r in rows if r["threads"] == threads), 1),
                      "speedup": round(base / seconds, 2), "same_return_every_run": len(returns) == 1}))
PY
