#!/usr/bin/env bash
# An elastic learner group that loses a rank and gets one back, against one that loses nothing:
#   bench/elastic_side_by_side.sh [RLX] [SEEDS] [EXPERIMENT]
# For seeds 0..SEEDS-1 (default 3), EXPERIMENT (default experiments/cartpole-ppo.yaml) with 3
# forked learner ranks (elastic: true, synchronous sampling) trains to its stop criterion twice:
# "uninterrupted", and "killed", where learner rank 1 gets SIGKILL once the run has 3 rows of
# results (1 s into the next iteration, so mostly mid-update) and a replacement joins with
# `rlx learner --join-file` 2 s later. One key=value line per run (wall ms from exec to exit,
# exit status: 0 solved, env steps, the elastic columns of the last row), then each side's
# medians and the killed runs' ratios: time lost and steps to the target.
set -uo pipefail
cd "$(dirname "$0")/.."
rlx=${1:-build/rlx} seeds=${2:-3} experiment=${3:-experiments/cartpole-ppo.yaml}
work=$(mktemp -d /tmp/rlx-elastic-XXXXXX)
trap 'pkill -P $$ 2>/dev/null; rm -rf "$work"' EXIT
name=$(basename "$experiment" .yaml)

median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
rows() { [ -f "$1" ] && wc -l <"$1" || echo 0; }

for seed in $(seq 0 $((seeds - 1))); do
  for side in uninterrupted killed; do
    out="$work/$side-$seed"
    trial="$out/$name/t"
    start=$(date +%s%N)
    "$rlx" train "$experiment" --learners 3 --workers 0 --set elastic=true --set learner_timeout_s=20 \
      --seed "$seed" --output "$out" --trial-name t -q >"$out.log" 2>&1 &
    train=$!
    if [ "$side" = killed ]; then
      until [ "$(rows "$trial/result.jsonl")" -ge 3 ] || ! kill -0 "$train" 2>/dev/null; do sleep 0.05; done
      sleep 1
      rank1=$(pgrep -P "$train" -f -- "--rank 1 " | head -1)
      [ -n "$rank1" ] && kill -9 "$rank1"
      sleep 2
      "$rlx" learner --join-file "$trial/learner_endpoint" >"$out.join.log" 2>&1 &
    fi
    wait "$train"
    status=$?
    wall=$(( ($(date +%s%N) - start) / 1000000 ))
    wait  # the joiner leaves when rank 0 stops the group
    read -r steps columns < <(python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
l = r['learner']
print(r['timesteps_total'], ' '.join(f'{k}={l.get(k)}' for k in
      ('generation', 'ranks_lost', 'ranks_joined', 'updates_redone', 'regroup_s', 'num_learners')))" "$trial/result.json")
    echo "side=$side seed=$seed exec_to_exit_ms=$wall exit=$status solved=$([ $status = 0 ] && echo 1 || echo 0) steps=$steps $columns" |
      tee -a "$work/lines"
    echo "$wall" >>"$work/$side.ms"
    echo "$steps" >>"$work/$side.steps"
  done
done
for side in uninterrupted killed; do
  echo "summary side=$side solved=$(grep -c "side=$side .*solved=1" "$work/lines")/$seeds" \
    "median_ms=$(median <"$work/$side.ms") median_steps=$(median <"$work/$side.steps")"
done
echo "ratio killed/uninterrupted median_ms=$(awk -v a="$(median <"$work/killed.ms")" -v b="$(median <"$work/uninterrupted.ms")" 'BEGIN {printf "%.3f", a / b}')" \
  "median_steps=$(awk -v a="$(median <"$work/killed.steps")" -v b="$(median <"$work/uninterrupted.steps")" 'BEGIN {printf "%.3f", a / b}')"
