#!/usr/bin/env bash
# ctest cluster.requeue: the job lifecycle on Slurm. deploy/slurm/train-hetjob.sbatch runs
# (2 learner ranks on node1 and node2, the fleet on node3); `scancel --signal=TERM` makes rank 0
# write a final checkpoint and the job exit 6; `scontrol requeue` runs the same job again,
# which continues from that checkpoint (--resume auto) and reaches the target. Counters never
# go backwards: progress.csv's iterations rise by one from the first row to the last. The job's
# output file keeps both attempts' lines.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

cluster_up 3
rlx_work_dir
rlx_fleet_keys

jid=$(RLX="$RLX_BIN" RLX_KEYS=$PWD/keys cluster_exec sbatch --parsable --export=ALL \
  "$RLX_SOURCE_DIR/deploy/slurm/train-hetjob.sbatch" "$RLX_SOURCE_DIR/experiments/cartpole-ppo.yaml" \
  --set stop.timesteps_total=300000)
trial=runs/cartpole-ppo/slurm-cartpole-ppo
wait_for_rows "$trial/progress.csv" 5 60 || fail "no 5 iterations within 60 s"
cluster_exec scancel --signal=TERM "$jid"
wait_job_state "$jid" "FAILED|COMPLETED" 60 || fail "job $jid did not end after SIGTERM"
[ "$(job_exit_code "$jid")" = 6 ] || fail "job $jid exited $(job_exit_code "$jid") after SIGTERM, not 6"
[ "$(json "$trial/result.json" 'j["stopped_by"]')" = signal ] || fail "result.json does not say the signal stopped it"
stopped_at=$(json "$trial/result.json" 'j["training_iteration"]')
checkpoint=$(json "$trial/result.json" 'j["last_checkpoint"]')
[ -f "$checkpoint/checkpoint.json" ] || fail "no final checkpoint at $checkpoint"
echo "ok: SIGTERM stopped job $jid at iteration $stopped_at with exit 6 and checkpoint $checkpoint"
cp "rlx-train-$jid.out" first-attempt.out
# The 2 workers got the SIGTERM too, and each still wrote its last line with what it sent.
[ "$(grep -c 'fragments_sent=' first-attempt.out)" = 2 ] ||
  fail "after SIGTERM, $(grep -c 'fragments_sent=' first-attempt.out) of the 2 workers wrote their last line"

requeue_job "$jid"
wait_job_state "$jid" RUNNING 60 || fail "requeued job $jid did not start again"
wait_job_state "$jid" COMPLETED 240 || fail "requeued job $jid did not complete"
[ "$(job_exit_code "$jid")" = 0 ] || fail "requeued job $jid exited $(job_exit_code "$jid")"
grep -q "resume auto: continuing from .*$(basename "$checkpoint")" "rlx-train-$jid.out" ||
  fail "the requeued job did not continue from $checkpoint"
# One record across attempts (#SBATCH --open-mode=append): the first attempt's lines are still
# there, the second's after them.
head -c "$(stat -c %s first-attempt.out)" "rlx-train-$jid.out" | cmp -s - first-attempt.out ||
  fail "the requeued job's output does not begin with the first attempt's: its lines were lost"
echo "ok: rlx-train-$jid.out keeps the first attempt's $(wc -l <first-attempt.out) lines before the second's"
return_mean=$(json "$trial/result.json" 'j["episode_return_mean"]')
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 475 else 1)" "$return_mean" ||
  fail "episode_return_mean $return_mean < 475 after the requeue"
python3 - "$trial/progress.csv" <<'PY' || fail "progress.csv's counters go backwards or repeat"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
iterations = [int(r["training_iteration"]) for r in rows]
steps = [int(r["timesteps_total"]) for r in rows]
assert iterations == list(range(1, len(rows) + 1)), iterations
assert all(b > a for a, b in zip(steps, steps[1:])), steps
PY
echo "ok: requeued job $jid continued from iteration $stopped_at to $(json "$trial/result.json" \
  'j["training_iteration"]') and return $return_mean; progress.csv rises by one iteration a row"
