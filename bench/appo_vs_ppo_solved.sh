#!/usr/bin/env bash
# CartPole-v1 to 475, APPO against PPO with the same two worker processes, seeds interleaved:
#   bench/appo_vs_ppo_solved.sh [RLX] [SEEDS]
# Runs experiments/cartpole-appo.yaml, experiments/cartpole-ppo.yaml on LibTorch's learner (the
# learner APPO uses) and cartpole-ppo.yaml as shipped (the native learner) for seeds 0..SEEDS-1
# (default 5). Prints one key=value line per run (wall ms from exec to exit, exit status: 0
# solved, env steps trained on, the mean lag of the last iteration's fragments, the workers' idle
# share), then each side's median wall ms and steps and APPO's ratios to PPO's.
set -uo pipefail
cd "$(dirname "$0")/.."
rlx=${1:-build/rlx} seeds=${2:-5}
work=$(mktemp -d /tmp/rlx-appo-solved-XXXXXX)
trap 'rm -rf "$work"' EXIT

median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
for seed in $(seq 0 $((seeds - 1))); do
  for side in appo ppo_torch ppo_native; do
    out="$work/$side-$seed"
    case $side in
      appo) args=(experiments/cartpole-appo.yaml) ;;
      ppo_torch) args=(experiments/cartpole-ppo.yaml --set learner_backend=torch) ;;
      ppo_native) args=(experiments/cartpole-ppo.yaml) ;;
    esac
    start=$(date +%s%N)
    "$rlx" train "${args[@]}" --seed "$seed" --output "$out" --trial-name t -q >"$out.log" 2>&1
    status=$?
    wall=$(( ($(date +%s%N) - start) / 1000000 ))
    read -r steps lag idle < <(python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
lag = r['learner'].get('policy_lag', {}).get('mean', 0)
idle = r['sampler'].get('worker_idle_share')
print(r['timesteps_total'], lag, '-' if idle is None else round(idle, 3))" "$(find "$out" -name result.json | head -1)")
    echo "side=$side seed=$seed exec_to_exit_ms=$wall exit=$status solved=$([ $status = 0 ] && echo 1 || echo 0) steps=$steps lag_mean=$lag worker_idle_share=$idle" | tee -a "$work/lines"
    echo "$wall" >>"$work/$side.ms"
    echo "$steps" >>"$work/$side.steps"
  done
done
for side in appo ppo_torch ppo_native; do
  echo "summary side=$side solved=$(grep -c "side=$side .*solved=1" "$work/lines")/$seeds median_ms=$(median <"$work/$side.ms") median_steps=$(median <"$work/$side.steps")"
done
a=$(median <"$work/appo.ms") t=$(median <"$work/ppo_torch.ms") n=$(median <"$work/ppo_native.ms")
awk -v a="$a" -v t="$t" -v n="$n" 'BEGIN {printf "appo_over_ppo_torch_ms=%.3f appo_over_ppo_native_ms=%.3f\n", a / t, a / n}'
