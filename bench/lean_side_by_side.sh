#!/usr/bin/env bash
# Issue 14's before/after in one run: two rlx builds side by side, interleaved, medians.
#   bench/lean_side_by_side.sh BEFORE_RLX AFTER_RLX [REPEATS] [BEFORE_EXPERIMENT]
# BEFORE_RLX: an rlx executable of the earlier build (e.g. 802caa1), AFTER_RLX: this build's
# `rlx`. Prints key=value lines: exec-to-exit of `--version` and `envs list`; a CartPole
# worker's RSS and PSS 1.5 s into `rlx train` (median over its 2 workers); local CartPole
# sampling (`rlx bench sampling`); exec-to-exit of `rlx train experiments/cartpole-ppo.yaml`
# for seeds 0-2 (BEFORE_EXPERIMENT, default the same file, lets the earlier build train the
# file as it was then); and after/before ratios of the medians.
set -euo pipefail
before=$1 after=$2 repeats=${3:-5}
cd "$(dirname "$0")/.."
before_experiment=${4:-experiments/cartpole-ppo.yaml}
work=$(mktemp -d /tmp/rlx-lean-XXXXXX)
trap 'rm -rf "$work"' EXIT

median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
ms() {  # wall milliseconds of a command
  local start end
  start=$(date +%s%N); "$@" >/dev/null 2>&1; end=$(date +%s%N)
  echo $(( (end - start) / 1000000 ))
}
# RSS and PSS (kB) of the worker children of `rlx train` 1.5 s into a long run.
worker_memory() {  # rlx experiment -> "rss pss" medians over workers
  local rlx=$1 experiment=$2 out="$work/mem"
  rm -rf "$out"
  "$rlx" train "$experiment" --set stop.timesteps_total=100000000 --set stop.episode_return_mean=100000 \
    --output "$out" -q >/dev/null 2>&1 &
  local train=$!
  sleep 1.5
  local rss=() pss=()
  for pid in $(pgrep -f -- " worker --connect"); do
    [ "$(ps -o ppid= -p "$pid" | tr -d ' ')" = "$train" ] || continue
    rss+=("$(awk '/^Rss:/ {print $2}' "/proc/$pid/smaps_rollup")")
    pss+=("$(awk '/^Pss:/ {print $2}' "/proc/$pid/smaps_rollup")")
  done
  kill "$train"; wait "$train" 2>/dev/null || true
  echo "$(printf '%s\n' "${rss[@]}" | median) $(printf '%s\n' "${pss[@]}" | median)"
}

for side in before after; do : >"$work/$side.version"; : >"$work/$side.envs"; : >"$work/$side.solve"; : >"$work/$side.rss"; : >"$work/$side.pss"; : >"$work/$side.local"; done
for r in $(seq "$repeats"); do
  for side in before after; do
    rlx=${!side}
    ms "$rlx" --version >>"$work/$side.version"
    ms "$rlx" envs list >>"$work/$side.envs"
  done
done
for side in before after; do
  rlx=${!side}
  experiment=experiments/cartpole-ppo.yaml
  [ "$side" = before ] && experiment=$before_experiment
  read -r rss pss < <(worker_memory "$rlx" "$experiment")
  echo "$rss" >>"$work/$side.rss"; echo "$pss" >>"$work/$side.pss"
  "$rlx" bench sampling --env CartPole-v1 --workers 1 --seconds 3 2>/dev/null |
    sed -n 's/^local_steps_per_s_one_process=//p' >>"$work/$side.local"
done
for seed in 0 1 2; do
  for side in before after; do
    rlx=${!side}
    experiment=experiments/cartpole-ppo.yaml
    [ "$side" = before ] && experiment=$before_experiment
    t=$(ms "$rlx" train "$experiment" --seed "$seed" --output "$work/runs-$side" -q)
    echo "side=$side seed=$seed exec_to_solved_ms=$t"
    echo "$t" >>"$work/$side.solve"
  done
done
for figure in version envs rss pss local solve; do
  b=$(median <"$work/before.$figure") a=$(median <"$work/after.$figure")
  echo "${figure}_before=$b ${figure}_after=$a ${figure}_after_over_before=$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", a / b}')"
done
