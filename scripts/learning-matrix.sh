#!/usr/bin/env bash
# Runs the tuned examples the learning tests use under several float paths (OpenBLAS kernels
# and LibTorch CPU capabilities, as other x86-64 machines would pick them) and prints one line
# per run: path, experiment, seed, exit status, steps, training return and greedy evaluation.
# The learning tests' assertions must hold on every line (see tests/algorithms/learning_test.cc).
#   scripts/learning-matrix.sh [OUT_DIR]      (RLX=path/to/rlx, default build/rlx)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/rlx-learning-matrix}
mkdir -p "$out"
rlx=${RLX:-build/rlx}
# name:ENV=VALUE ...: entries; MATRIX_PATHS (the same, separated by ';') replaces them.
paths=("default::" "haswell:OPENBLAS_CORETYPE=Haswell ATEN_CPU_CAPABILITY=avx2:"
       "skylakex:OPENBLAS_CORETYPE=SkylakeX ATEN_CPU_CAPABILITY=avx512:"
       "prescott:OPENBLAS_CORETYPE=Prescott ATEN_CPU_CAPABILITY=default:")
if [ -n "${MATRIX_PATHS:-}" ]; then IFS=';' read -r -a paths <<<"$MATRIX_PATHS"; fi

run() {  # path_name env_assignments experiment tag seed extra_args...
  local name=$1 assignments=$2 experiment=$3 tag=$4 seed=$5
  shift 5
  local dir="$out/$name/$tag-$seed"
  rm -rf "$dir"
  mkdir -p "$out/$name"
  local start end status
  start=$(date +%s%N)
  env $assignments "$rlx" train "experiments/$experiment.yaml" --seed "$seed" --output "$dir" --trial-name t -q "$@" \
    >"$dir.log" 2>&1
  status=$?
  end=$(date +%s%N)
  local result="$dir/${experiment}/t/result.json"
  local steps ret eval_mean
  steps=$(python3 -c "import json;print(json.load(open('$result'))['timesteps_total'])" 2>/dev/null || echo -)
  ret=$(python3 -c "import json;print(round(json.load(open('$result'))['episode_return_mean'],1))" 2>/dev/null || echo -)
  local checkpoint
  checkpoint=$(python3 -c "import json;print(json.load(open('$result'))['last_checkpoint'])" 2>/dev/null)
  eval_mean=-
  if [ -n "$checkpoint" ] && [ "$checkpoint" != None ]; then
    eval_mean=$(env $assignments "$rlx" evaluate "$checkpoint" --episodes 20 --deterministic 2>/dev/null |
                sed -n 's/.*"return_mean":\([-0-9.e+]*\).*/\1/p' | head -1)
  fi
  printf 'path=%s run=%s seed=%s exit=%s steps=%s return=%s eval=%s wall_s=%.1f\n' \
    "$name" "$tag" "$seed" "$status" "$steps" "$ret" "${eval_mean:--}" "$(((end - start) / 1000000))e-3"
}

for entry in "${paths[@]}"; do
  name=${entry%%:*}
  rest=${entry#*:}
  assignments=${rest%:*}
  for seed in 0 1 2 3 4 5; do run "$name" "$assignments" cartpole-ppo cartpole-ppo-sync "$seed" --workers 0; done
  for seed in 0 1 2; do run "$name" "$assignments" cartpole-dqn cartpole-dqn "$seed"; done
  for seed in 0 1 2; do run "$name" "$assignments" acrobot-ppo acrobot-ppo "$seed"; done
  for seed in 0 1 2; do run "$name" "$assignments" pendulum-ppo pendulum-ppo "$seed"; done
  for seed in 0 1 2; do run "$name" "$assignments" cartpole-ppo cartpole-ppo-2learners "$seed" --workers 0 --learners 2; done
done
