#!/usr/bin/env bash
# ctest cluster.hetjob_train: deploy/slurm/train-hetjob.sbatch as a user submits it, on 3
# nodes: 2 learner ranks on node1 and node2 (Gloo across the namespace network) and the
# worker fleet on node3, with CURVE keys. CartPole PPO (or the experiment RLX_HETJOB_EXPERIMENT
# names, e.g. cartpole-appo) reaches 475; results and the checkpoint are in the trial directory;
# every fragment a worker sent is accounted for. Prints the time from sbatch to the first
# iteration (docs/results.md).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

experiment=${RLX_HETJOB_EXPERIMENT:-cartpole-ppo}
cluster_up 3
rlx_work_dir
rlx_fleet_keys

submitted=$(date +%s.%N)
jid=$(RLX="$RLX_BIN" RLX_KEYS=$PWD/keys cluster_exec sbatch --parsable --export=ALL \
  "$RLX_SOURCE_DIR/deploy/slurm/train-hetjob.sbatch" "$RLX_SOURCE_DIR/experiments/$experiment.yaml" \
  --set stop.timesteps_total=300000)
trial=runs/$experiment/slurm-$experiment
wait_for_rows "$trial/progress.csv" 1 60 || fail "no iteration within 60 s of sbatch"
first=$(date +%s.%N)
wait_job_state "$jid" COMPLETED 240 || fail "job $jid did not complete"
echo "FIGURE sbatch_to_first_iteration_s $(awk -v a="$first" -v b="$submitted" 'BEGIN {print a - b}')"

out=rlx-train-$jid.out
[ "$(job_exit_code "$jid")" = 0 ] || fail "job $jid exited $(job_exit_code "$jid")"
grep -q "learner rank 0 of 2 on node1" "$out" || fail "rank 0 did not run on node1"
grep -q "learner rank 1 of 2 on node2" "$out" || fail "rank 1 did not run on node2"
[ "$(grep -c 'starting: pid [0-9]* on node3' "$out")" = 2 ] || fail "the 2 workers did not run on node3"
return_mean=$(json "$trial/result.json" 'j["episode_return_mean"]')
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 475 else 1)" "$return_mean" ||
  fail "episode_return_mean $return_mean < 475"
checkpoint=$(json "$trial/result.json" 'j["last_checkpoint"]')
[ -f "$checkpoint/checkpoint.json" ] || fail "no checkpoint at $checkpoint"
[ -s "$trial/logs/learner_rank_1.log" ] || fail "rank 1 wrote no log into the trial"
echo "ok: 2 ranks on node1 and node2, workers on node3: return $return_mean at iteration" \
  "$(json "$trial/result.json" 'j["training_iteration"]'), $(json "$trial/result.json" 'j["timesteps_total"]') steps"
echo "FIGURE hetjob_time_total_s $(json "$trial/result.json" 'j["time_total_s"]')"
check_fragment_accounting "$trial/result.json" "$(fragments_sent "$out")"
