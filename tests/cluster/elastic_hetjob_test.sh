#!/usr/bin/env bash
# ctest cluster.elastic_hetjob: an elastic learner group on Slurm, as docs/cluster.md says to run
# one: `sbatch --no-kill deploy/slurm/train-hetjob.sbatch ... --set elastic=true --set
# min_learners=1`, 2 learner ranks on node1 and node2, the worker fleet on node3. Three jobs, one
# for each way node2's rank is lost:
#  - kill: its process gets SIGKILL (rank 0's next collective fails at once);
#  - cut: node2's link drops everything for good and the rank dies behind it, as on a host that
#    went away (rank 0 hears nothing: the update's all-reduce times out after learner_timeout_s,
#    or, between updates, the rank's heartbeat stops);
#  - down: Slurm marks node2 DOWN, as slurmctld does once a node is silent for SlurmdTimeout;
#    with --no-kill the job goes on without node2 (its rank is killed, the node leaves the job).
# Either way rank 0 trains on alone within seconds. A replacement that
# deploy/slurm/rejoin-learner.sh starts on node2 (the link back first), or on node3 when node2
# has left the job, is taken in at the next iteration boundary: generation 3. The job completes
# with exit 0 and a return >= 475; result.json counts one rank lost and one joined; progress.csv
# has every iteration once; every fragment is accounted for. FIGUREs: the longest gap between
# iterations around the loss, the median gap, the seconds from the loss to the re-formed group,
# and the iteration at which the replacement joined.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

cluster_up 3
rlx_work_dir
rlx_fleet_keys

# wait_for_line FILE TEXT TIMEOUT: until FILE has a line containing TEXT; returns 1 on timeout.
wait_for_line() {
  local end=$(($(date +%s) + $3))
  until grep -qF -- "$2" "$1" 2>/dev/null; do
    (($(date +%s) < end)) || return 1
    sleep 0.1
  done
}

# elastic_case kill|cut|down: one job that loses node2's rank that way and takes a replacement in.
elastic_case() {
  local how=$1 trial=runs/cartpole-ppo/elastic-$1 jid rank1 lost_at rejoin status driver spare=node2
  # Rank 0 is a straggler (its minibatch steps take 6 times as long): an iteration takes about
  # 0.6 s, most of it in the update, so that the loss lands mid-update and CartPole is far from
  # 475 (25 iterations at the least) when the replacement joins, at most 10 in.
  jid=$(RLX="$RLX_BIN" RLX_KEYS=$PWD/keys RLX_TRIAL=elastic-$how cluster_exec sbatch --parsable --export=ALL \
    --no-kill "$RLX_SOURCE_DIR/deploy/slurm/train-hetjob.sbatch" "$RLX_SOURCE_DIR/experiments/cartpole-ppo.yaml" \
    --set elastic=true --set min_learners=1 --set learner_timeout_s=10 --set stop.timesteps_total=300000 \
    --set debug_slow_rank=0 --set debug_slow_factor=6)
  driver=$trial/logs/driver.log
  wait_for_rows "$trial/progress.csv" 3 60 || fail "$how: no 3 iterations within 60 s of sbatch"
  rank1=$(node_pids 2 rlx-torch)
  [[ $rank1 =~ ^[0-9]+$ ]] || fail "$how: want one learner rank on node2, found pids '$rank1'"
  lost_at=$(date +%s.%N)
  case $how in
    kill) kill -9 "$rank1" ;;
    cut) cut_link 2 86400 >/dev/null ;;   # for good: until `shape_link 2 off`
    down) cluster_exec scontrol update NodeName=node2 State=DOWN Reason=elastic-test ;;
  esac
  echo "$how: node2's rank (pid $rank1) lost after iteration $(rows "$trial/progress.csv")"
  wait_for_line "$driver" "learner group generation 2: 1 ranks" 40 ||
    fail "$how: rank 0 did not go on alone within 40 s of the loss"
  echo "ok: $how: $(grep -o 'generation 1 failed: .*' "$driver" | cut -c1-150)"
  if [ "$how" = cut ]; then
    # The host is gone: its rank dies where nobody hears it. Then the link comes back, for a
    # replacement (a rank that lived through the cut would come back by itself).
    kill -9 "$rank1"
    shape_link 2 off >/dev/null
  fi
  if [ "$how" = down ]; then   # node2 has left the job: rejoin-learner.sh says so, and names the others
    status=0
    RLX="$RLX_BIN" RLX_TRIAL=elastic-$how cluster_exec "$RLX_SOURCE_DIR/deploy/slurm/rejoin-learner.sh" "$jid" node2 \
      >refused.out 2>&1 || status=$?
    if [ "$status" != 2 ] || ! grep -q "node2 is not a node of job $jid.*its nodes: node1 node3" refused.out; then
      fail "down: rejoin-learner.sh on node2, which left the job, exited $status: $(cat refused.out)"
    fi
    echo "ok: down: $(cat refused.out)"
    spare=node3
  fi
  RLX="$RLX_BIN" RLX_TRIAL=elastic-$how RLX_CLUSTER_TIMEOUT=240 cluster_exec \
    "$RLX_SOURCE_DIR/deploy/slurm/rejoin-learner.sh" "$jid" "$spare" >"rejoin-$how.out" 2>&1 &
  rejoin=$!
  wait_for_line "$driver" "learner group generation 3: 2 ranks" 60 ||
    fail "$how: the replacement on $spare was not taken in within 60 s: $(tail -n 3 "rejoin-$how.out")"
  wait_job_state "$jid" COMPLETED 200 || fail "$how: job $jid did not complete"
  [ "$(job_exit_code "$jid")" = 0 ] || fail "$how: job $jid exited $(job_exit_code "$jid")"
  status=0
  wait "$rejoin" || status=$?
  [ "$status" = 0 ] || fail "$how: rejoin-learner.sh exited $status: $(tail -n 3 "rejoin-$how.out")"
  grep -q "joined generation 3 of the elastic group as rank 1 of 2" "rejoin-$how.out" ||
    fail "$how: the replacement did not join generation 3 as rank 1"
  grep -q "the driver said stop" "rejoin-$how.out" || fail "$how: rank 0 did not stop the replacement"

  local return_mean
  return_mean=$(json "$trial/result.json" 'j["episode_return_mean"]')
  python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 475 else 1)" "$return_mean" ||
    fail "$how: episode_return_mean $return_mean < 475"
  # The group's history; the update the loss cut short (if it did) was redone once.
  json "$trial/result.json" '" ".join(k + "=" + str(j["learner"][k]) for k in ("generation", "regroups",
    "ranks_lost", "ranks_joined", "num_learners", "updates_redone"))' >"learner-$how.txt"
  [ "$(cat "learner-$how.txt")" = "generation=3 regroups=2 ranks_lost=1 ranks_joined=1 num_learners=2 updates_redone=1" ] ||
    [ "$(cat "learner-$how.txt")" = "generation=3 regroups=2 ranks_lost=1 ranks_joined=1 num_learners=2 updates_redone=0" ] ||
    fail "$how: result.json's learner says $(cat "learner-$how.txt"), not one rank lost and one joined"
  echo "ok: $how: job $jid exited 0 with return $return_mean; learner $(cat "learner-$how.txt")," \
    "regroup_s $(json "$trial/result.json" 'round(j["learner"]["regroup_s"], 3)')"
  python3 - "$trial/result.jsonl" "$how" "$lost_at" "$driver" <<'PY' || fail "$how: result.jsonl: see above"
import datetime, json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
how, lost_at = sys.argv[2], float(sys.argv[3])
iterations = [r["training_iteration"] for r in rows]
assert iterations == list(range(1, len(rows) + 1)), f"iterations {iterations}: one lost or repeated"
t = [r["time_total_s"] for r in rows]
gaps = [t[0]] + [b - a for a, b in zip(t, t[1:])]
generation = [r["learner"]["generation"] for r in rows]
lost = next(i for i, g in enumerate(generation) if g >= 2)      # the iteration the loss cut into
back = next(i for i, g in enumerate(generation) if g >= 3)      # the first with the replacement
around = max(gaps[lost:back + 1])
median = statistics.median(gaps[1:])
# From the loss to the re-formed group, by the driver's clock (local time, as date's).
line = next(l for l in open(sys.argv[4]) if "learner group generation 2: 1 ranks" in l)
regrouped = datetime.datetime.strptime(line[1:24], "%Y-%m-%d %H:%M:%S.%f").timestamp()
print(f"FIGURE elastic_{how}_lost_rank_gap_s {around:.2f}")
print(f"FIGURE elastic_{how}_median_gap_s {median:.2f}")
print(f"FIGURE elastic_{how}_time_lost_s {around - median:.2f}")
print(f"FIGURE elastic_{how}_loss_to_regroup_s {regrouped - lost_at:.2f}")
print(f"FIGURE elastic_{how}_lost_at_iteration {lost + 1}")
print(f"FIGURE elastic_{how}_rejoined_at_iteration {back + 1}")
print(f"ok: {how}: {len(rows)} iterations, each once; the loss cut into iteration {lost + 1}, rank 0 trained alone"
      f" until iteration {back}, the replacement learned from iteration {back + 1} on")
PY
  check_fragment_accounting "$trial/result.json" "$(fragments_sent "rlx-train-$jid.out")"
}

elastic_case kill
elastic_case cut
elastic_case down
