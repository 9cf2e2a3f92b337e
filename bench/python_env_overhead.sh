#!/usr/bin/env bash
# The Python env bridge's cost per step: `rlx envs bench` stepping a Python env (through the
# embedded interpreter, observations read from NumPy's memory, rlx's env contract checks) against
# the same env stepped in a plain Python loop (bench/python_env_loop.py), both with Debian's
# /usr/bin/python3 (the interpreter the bridge embeds). The two alternate, one timed repeat each
# per round, so that drift in the machine's speed reaches both alike. Then the same for
# bench/python_noop_env.py, whose step does nothing: the difference in time per step is what the
# bridge itself costs. Prints every repeat, then
#   plain_loop_steps_per_s=<median> rlx_steps_per_s=<median> python_bridge_speed_ratio=<rlx / plain>
#   noop_plain_ns_per_step=<median> noop_rlx_ns_per_step=<median> bridge_overhead_ns_per_step=<difference>
#   bench/python_env_overhead.sh [RLX] [ENV] [ROUNDS] [STEPS]
# defaults: build/rlx, cartpole_env:CartPoleEnv from examples/python_env, 9 rounds, 300000 steps.
# The plain loop runs in /usr/bin/python3, which Debian links statically with libpython; the bridge
# embeds libpython3.11.so, built position-independent and some 5-10% slower on the same Python code.
set -euo pipefail
cd "$(dirname "$0")/.."
rlx=${1:-build/rlx} env=${2:-cartpole_env:CartPoleEnv} rounds=${3:-9} steps=${4:-300000}

# measure ENV PATH STEPS: alternating rounds; sets plain_rates and rlx_rates (steps/s, one per round).
measure() {
  plain_rates=() rlx_rates=()
  for round in $(seq 1 "$rounds"); do
    plain=$(/usr/bin/python3 bench/python_env_loop.py "$1" --python-path "$2" --steps "$3" --repeats 1 --seed "$round")
    bridged=$("$rlx" envs bench "python:$1" --python-path "$2" --envs 1 --steps "$3" --repeats 1 --seed "$round")
    echo "round=$round plain: $(echo "$plain" | head -1)"
    echo "round=$round rlx:   $(echo "$bridged" | head -1)"
    plain_rates+=("$(echo "$plain" | sed -n 's/.*median env_steps_per_s=\([0-9.]*\).*/\1/p')")
    rlx_rates+=("$(echo "$bridged" | sed -n 's/^env_steps_per_s=\([0-9.]*\)$/\1/p')")  # its last line
  done
}

measure "$env" examples/python_env "$steps"
env_plain="${plain_rates[*]}" env_rlx="${rlx_rates[*]}"
measure python_noop_env:NoopEnv bench $((steps * 10))
python3 - "$env_plain" "$env_rlx" "${plain_rates[*]}" "${rlx_rates[*]}" <<'PY'
import statistics, sys
median = lambda text: statistics.median(float(x) for x in text.split())
plain, bridged, noop_plain, noop_rlx = (median(a) for a in sys.argv[1:5])
print(f"plain_loop_steps_per_s={plain:.0f} rlx_steps_per_s={bridged:.0f} python_bridge_speed_ratio={bridged / plain:.3f}")
print(f"noop_plain_ns_per_step={1e9 / noop_plain:.0f} noop_rlx_ns_per_step={1e9 / noop_rlx:.0f} "
      f"bridge_overhead_ns_per_step={1e9 / noop_rlx - 1e9 / noop_plain:.0f}")
PY
