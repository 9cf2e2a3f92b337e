#!/usr/bin/env bash
# A synchronous off-policy run SIGKILLed right after its checkpoint at KILL_AT steps and resumed
# from it (its replay restored from the trial's segments) against the same run never killed:
# both must reach TOTAL steps with the same results, row for row. One JSON line per checkpoint
# compared, then a verdict line.
#   bench/replay_resume_exact.sh [EXPERIMENT] [KILL_AT] [TOTAL] [CHECKPOINT_EVERY] [EXTRA --set ARGS...]
# Defaults: experiments/hopper-sac.yaml 300000 400000 100 (the issue's run; about 45 min per run
# here at ~150 env steps/s, the two side by side). EXPERIMENT's iterations must be of a fixed
# number of steps (num_workers: 0); CHECKPOINT_EVERY is checkpoint_freq in iterations and must
# land a checkpoint on KILL_AT. RLX (env) names the executable (default build/rlx).
set -uo pipefail
cd "$(dirname "$0")/.."
experiment=${1:-experiments/hopper-sac.yaml} kill_at=${2:-300000} total=${3:-400000} every=${4:-100}
shift $(( $# < 4 ? $# : 4 ))
extra=("$@")
rlx=${RLX:-build/rlx}
work=$(mktemp -d /tmp/rlx-resume-exact-XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
name=$(grep -m1 -v -e '^#' -e '^$' "$experiment" | sed 's/:.*//')  # the experiment's name, its first key
common=(--seed 0 --set stop.episode_return_mean=null --set "stop.timesteps_total=$total" --set "checkpoint_freq=$every"
        --output "$work" -q "${extra[@]}")

start=$(date +%s)
"$rlx" train "$experiment" "${common[@]}" --trial-name straight >"$work/straight.log" 2>&1 &
straight=$!
"$rlx" train "$experiment" "${common[@]}" --trial-name killed >"$work/killed.log" 2>&1 &
killed=$!
# Kill the second run (SIGKILL: nothing of it runs after) once its checkpoint at KILL_AT is written.
killed_dir="$work/$name/killed"
target=""
while kill -0 "$killed" 2>/dev/null; do
  target=$(python3 - "$killed_dir/checkpoints" "$kill_at" <<'PY'
import json, os, sys
root, kill_at = sys.argv[1], int(sys.argv[2])
for d in sorted(os.listdir(root)) if os.path.isdir(root) else []:
    try:
        m = json.load(open(os.path.join(root, d, "checkpoint.json")))
    except (OSError, ValueError):
        continue
    if m["counters"]["timesteps_total"] == kill_at:
        print(os.path.join(root, d))
PY
)
  if [ -n "$target" ]; then kill -KILL "$killed"; break; fi
  sleep 1
done
wait "$killed" 2>/dev/null
if [ -z "$target" ]; then echo '{"error": "no checkpoint at KILL_AT steps; see the killed run'"'"'s log"}'; cat "$work/killed.log"; exit 1; fi
"$rlx" train --resume "$target" --set "stop.timesteps_total=$total" -q >"$work/resumed.log" 2>&1
resumed_status=$?
wait "$straight"
straight_status=$?
python3 - "$work/$name/straight" "$killed_dir" "$kill_at" "$total" "$resumed_status" "$straight_status" "$(( $(date +%s) - start ))" <<'PY'
import json, sys
straight, killed, kill_at, total, resumed_status, straight_status, wall_s = sys.argv[1:]
def rows(trial):
    out = []
    for line in open(trial + "/result.jsonl"):
        r = json.loads(line)
        for key in ("time_total_s", "time_this_iter_s", "env_steps_per_s", "attempt", "sampler"):
            r.pop(key, None)
        out.append(r)
    return out
a, b = rows(straight), rows(killed)
same = len(a) == len(b) and all(x == y for x, y in zip(a, b))
first_diff = next((i + 1 for i, (x, y) in enumerate(zip(a, b)) if x != y), None)
for r, s in zip(a, b):
    if r["timesteps_total"] % 100000 == 0 or r["timesteps_total"] in (int(kill_at), int(total)):
        print(json.dumps({"timesteps_total": r["timesteps_total"], "return_straight": r["episode_return_mean"],
                          "return_killed_and_resumed": s["episode_return_mean"], "same_row": r == s}))
print(json.dumps({"bench": "replay_resume_exact", "kill_at": int(kill_at), "total": int(total), "rows": len(a),
                  "rows_resumed": len(b), "bit_exact": same, "first_differing_iteration": first_diff,
                  "return_at_total": a[-1]["episode_return_mean"] if a else None,
                  "exit_straight": int(straight_status), "exit_resumed": int(resumed_status), "wall_s": int(wall_s)}))
PY
