#!/usr/bin/env bash
# Issue 16's measurement: each MuJoCo example trained for exactly 1,000,000 env steps (its reward
# criterion dropped), then its final checkpoint evaluated deterministically over 10 episodes, as
# RL Zoo reports its figures. One JSON line per run: the training return (mean of the last 100
# episodes), the evaluation mean, min and max, the training's env steps per second and the wall
# clock of both commands.
#   bench/mujoco_1m.sh [RLX] [EXPERIMENT.yaml ...] [-- SEEDS...]
# defaults: build/rlx, experiments/{hopper,halfcheetah,walker2d,ant}-ppo.yaml, seeds 0 1 2 3 4.
# Runs are sequential; start two scripts with different seeds to use two cores. RLX_TRAIN_ARGS
# adds to every `rlx train` (e.g. RLX_TRAIN_ARGS="--set log_std_init=-1" for a variant);
# RLX_STEPS trains to another step count (default 1000000), e.g. for a partial SAC run.
set -uo pipefail
cd "$(dirname "$0")/.."
rlx=${1:-build/rlx}
shift $(( $# > 0 ? 1 : 0 ))
files=() seeds=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do files+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
seeds=("$@")
[ ${#files[@]} -gt 0 ] || files=(experiments/hopper-ppo.yaml experiments/halfcheetah-ppo.yaml experiments/walker2d-ppo.yaml experiments/ant-ppo.yaml)
[ ${#seeds[@]} -gt 0 ] || seeds=(0 1 2 3 4)
steps=${RLX_STEPS:-1000000}
work=${RLX_BENCH_DIR:-$(mktemp -d /tmp/rlx-mujoco-1m-XXXXXX)}

for file in "${files[@]}"; do
  for seed in "${seeds[@]}"; do
    name=$(basename "$file" .yaml)
    out="$work/$name-seed$seed"
    start=$(date +%s%N)
    "$rlx" train "$file" --seed "$seed" --set stop.episode_return_mean=null --set stop.timesteps_total="$steps" \
      ${RLX_TRAIN_ARGS:-} --output "$out" --trial-name t -q >"$out.train.log" 2>&1
    train_status=$?
    mid=$(date +%s%N)
    checkpoint=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['last_checkpoint'])" "$out"/*/t/result.json 2>/dev/null)
    "$rlx" evaluate "$checkpoint" --deterministic --episodes 10 --seed 1000 >"$out.eval.log" 2>&1
    eval_status=$?
    end=$(date +%s%N)
    python3 - "$out" "$name" "$seed" "$train_status" "$eval_status" "$(( (mid - start) / 1000000 ))" "$(( (end - mid) / 1000000 ))" <<'PY'
import glob, json, sys
out, name, seed, train_status, eval_status, train_ms, eval_ms = sys.argv[1:8]
row = {"experiment": name, "seed": int(seed), "train_exit": int(train_status), "eval_exit": int(eval_status)}
try:
    r = json.load(open(glob.glob(out + "/*/t/result.json")[0]))
    row.update(timesteps=r["timesteps_total"], train_return=round(r["episode_return_mean"], 1),
               env_steps_per_s=round(r["timesteps_total"] / r["time_total_s"]), train_wall_s=round(int(train_ms) / 1000, 1))
    text = open(out + ".eval.log").read()
    e = json.loads(text[text.rindex("{"):])
    row.update(eval_mean=round(e["return_mean"], 1), eval_min=round(e["return_min"], 1), eval_max=round(e["return_max"], 1),
               eval_wall_s=round(int(eval_ms) / 1000, 1))
except (OSError, IndexError, KeyError, ValueError) as error:
    row["error"] = repr(error)
print(json.dumps(row), flush=True)
PY
  done
done
