#!/usr/bin/env bash
# ctest cluster.tune_steps: deploy/slurm/tune.sbatch on a 3-node allocation runs `rlx tune`
# in the batch step and each trial segment as a job step of its own (--launch-prefix srun):
# the trials run on more than one node, and the tuning run finishes with a best trial.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

cluster_up 3
rlx_work_dir
jid=$(RLX="$RLX_BIN" cluster_exec sbatch --parsable --export=ALL -N3 --ntasks=6 --cpus-per-task=2 \
  "$RLX_SOURCE_DIR/deploy/slurm/tune.sbatch" "$RLX_SOURCE_DIR/experiments/asha-cartpole-ppo.yaml" \
  --set stop.timesteps_total=16000)
wait_job_state "$jid" COMPLETED 180 || fail "tune job $jid did not complete"
[ "$(job_exit_code "$jid")" = 0 ] || fail "tune job $jid exited $(job_exit_code "$jid")"
grep -q "best trial: trial_" "rlx-tune-$jid.out" || fail "the tuner named no best trial"
hosts=$(grep -ho "train, pid [0-9]* on node[0-9]" runs/asha-cartpole-ppo/trial_*/logs/driver.log | awk '{print $NF}' | sort -u)
[ "$(wc -w <<<"$hosts")" -ge 2 ] || fail "every trial ran on $(echo $hosts): not spread over the allocation"
echo "ok: $(ls -d runs/asha-cartpole-ppo/trial_* | wc -l) trials as job steps on $(echo $hosts)"
