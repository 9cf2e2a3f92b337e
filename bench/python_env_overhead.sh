#!/usr/bin/env bash
# The Python env bridge's cost per step: `rlx envs bench` stepping a Python env (through the
# embedded interpreter, observations read from NumPy's memory, rlx's env contract checks) against
# the same env stepped in a plain Python loop (bench/python_env_loop.py), both with Debian's
# /usr/bin/python3 (the interpreter the bridge embeds). The two alternate, one timed repeat each
# per round, so that drift in the machine's speed reaches both alike. Prints every repeat, then
#   plain_loop_steps_per_s=<median> rlx_steps_per_s=<median> python_bridge_speed_ratio=<rlx / plain>
#   bench/python_env_overhead.sh [RLX] [ENV] [ROUNDS] [STEPS]
# defaults: build/rlx, cartpole_env:CartPoleEnv from examples/python_env, 7 rounds, 200000 steps.
set -euo pipefail
cd "$(dirname "$0")/.."
rlx=${1:-build/rlx} env=${2:-cartpole_env:CartPoleEnv} rounds=${3:-7} steps=${4:-200000}
path=examples/python_env

plain_rates=() rlx_rates=()
for round in $(seq 1 "$rounds"); do
  plain=$(/usr/bin/python3 bench/python_env_loop.py "$env" --python-path "$path" --steps "$steps" --repeats 1 --seed "$round")
  bridged=$("$rlx" envs bench "python:$env" --python-path "$path" --envs 1 --steps "$steps" --repeats 1 --seed "$round")
  echo "round=$round plain: $(echo "$plain" | head -1)"
  echo "round=$round rlx:   $(echo "$bridged" | head -1)"
  plain_rates+=("$(echo "$plain" | sed -n 's/.*median env_steps_per_s=\([0-9.]*\).*/\1/p')")
  rlx_rates+=("$(echo "$bridged" | sed -n 's/^env_steps_per_s=\([0-9.]*\)$/\1/p')")  # its last line
done
python3 - "${plain_rates[*]}" "${rlx_rates[*]}" <<'PY'
import statistics, sys
plain = statistics.median(float(x) for x in sys.argv[1].split())
bridged = statistics.median(float(x) for x in sys.argv[2].split())
print(f"plain_loop_steps_per_s={plain:.0f} rlx_steps_per_s={bridged:.0f} python_bridge_speed_ratio={bridged / plain:.3f}")
PY
