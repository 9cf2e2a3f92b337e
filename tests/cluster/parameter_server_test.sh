#!/usr/bin/env bash
# ctest cluster.parameter_server: `learner_sync: parameter_server` with its 2 learner ranks on two
# hosts (srun -N 2 -n 2), over a slow, lossy network and with a straggler host:
#  - shaped: both links delay every frame 5 +- 1 ms each way (a request and its answer cross
#    four times: a 20 ms round trip), node2's link drops 0.5 % of frames, and node2 is throttled
#    to 30 % of one CPU (a CFS quota: it runs 30 ms of each 100, so a step of 1 ms can take 70).
#    Without a staleness bound (max_staleness 1000) CartPole still reaches 475, rank 0 doing most
#    of the minibatch steps; every gradient's staleness is recorded and nothing is refused. With
#    max_staleness 4, three updates: the straggler is held to within 4 steps of rank 0, so it
#    does at least 38 of each update's 80 and the update waits for it (the price of the bound).
#  - kill: node2's rank gets SIGKILL mid-run. Without `elastic` the run cannot go on: rank 0
#    stops within learner_timeout_s with an error that names the rank it waited on, and exits
#    non-zero; results written before stay whole.
# FIGUREs: the shaped run's wall time, steps and staleness, and the kill's time to the error.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

cluster_up 2
rlx_work_dir
experiment=$RLX_SOURCE_DIR/experiments/cartpole-ppo.yaml

# train TRIAL [--set K=V...]: both ranks, node1's rank 0 and node2's rank 1, synchronous sampling.
train() {
  local trial=$1
  shift
  RLX_CLUSTER_TIMEOUT=200 cluster_exec srun --label -N 2 -n 2 --kill-on-bad-exit=0 "$RLX_BIN" train "$experiment" \
    --workers 0 --seed 0 --output runs --trial-name "$trial" --set learner_sync=parameter_server "$@"
}

# ---- shaped: a slow, lossy network and a straggler host ----
shape_link 1 --delay-ms 5 --jitter-ms 1 --seed 3 >/dev/null
shape_link 2 --delay-ms 5 --jitter-ms 1 --loss 0.5 --seed 4 >/dev/null
throttle_node 2 30
start=$(date +%s.%N)
status=0
train shaped --set max_staleness=1000 >shaped.out 2>&1 || status=$?
wall=$(echo "$(date +%s.%N) - $start" | bc)
[ "$status" = 0 ] || fail "shaped: rlx train exited $status: $(tail -n 5 shaped.out)"
result=runs/cartpole-ppo/shaped/result.json
python3 - "$result" runs/cartpole-ppo/shaped/result.jsonl "$wall" <<'PY' || fail "shaped: see above"
import json, sys
r = json.load(open(sys.argv[1]))
rows = [json.loads(line) for line in open(sys.argv[2])]
l = r["learner"]
assert r["episode_return_mean"] >= 475, f"episode_return_mean {r['episode_return_mean']} < 475"
assert l["learner_sync"] == "parameter_server" and l["num_learners"] == 2, l
# Every minibatch step of every update was one rank's task, its gradient applied with the
# staleness it had: the histogram holds each one.
for row in rows:
    tasks = row["learner"]["tasks_per_rank"]
    assert sum(row["learner"]["staleness_counts"]) == sum(tasks), (row["training_iteration"], row["learner"])
    assert row["learner"]["ps_refused"] == 0, f"iteration {row['training_iteration']}: refused {row['learner']['ps_refused']}"
fast = sum(row["learner"]["tasks_per_rank"][0] for row in rows)
slow = sum(row["learner"]["tasks_per_rank"][1] for row in rows)
held = sum(row["learner"]["held_back"] for row in rows)
stale = sum(row["learner"]["staleness_mean"] for row in rows) / len(rows)
stale_max = max(row["learner"]["staleness_max"] for row in rows)
assert slow < fast, f"the straggler on node2 did {slow} steps, rank 0 {fast}"
assert held == 0, f"requests held back {held} times without a bound"
assert stale > 0, "no gradient was stale: the ranks did not overlap"
print(f"ok: shaped: 475 reached at {r['timesteps_total']} steps in {float(sys.argv[3]):.1f} s; the straggler did "
      f"{slow} of {fast + slow} steps; staleness mean {stale:.2f}, max {stale_max}; nothing refused")
print(f"FIGURE ps_shaped_straggler_wall_s {float(sys.argv[3]):.1f}")
print(f"FIGURE ps_shaped_straggler_steps {r['timesteps_total']}")
print(f"FIGURE ps_shaped_straggler_share_of_steps {slow / (fast + slow):.3f}")
print(f"FIGURE ps_shaped_staleness_mean {stale:.2f}")
PY

# The bound: rank 0 may be at most 4 steps ahead of the straggler within an update, so of an
# update's 80 steps the straggler does at least (80 - 4) / 2 = 38.
status=0
train bounded --set max_staleness=4 --set stop.training_iteration=3 >bounded.out 2>&1 || status=$?
[ "$status" = 3 ] || fail "bounded: rlx train exited $status, not 3 (budget spent): $(tail -n 5 bounded.out)"
python3 - runs/cartpole-ppo/bounded/result.jsonl <<'PY' || fail "bounded: see above"
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
assert len(rows) == 3, f"{len(rows)} iterations"
shares = [row["learner"]["tasks_per_rank"] for row in rows]
assert all(sum(s) == 80 and s[1] >= 38 for s in shares), f"steps per rank {shares}: the bound of 4 did not hold"
held = sum(row["learner"]["held_back"] for row in rows)
assert held > 0, "rank 0 was never held back for the straggler"
print(f"ok: bounded: steps per rank {shares}, rank 0 held back {held} times; "
      f"{rows[-1]['time_total_s'] / 3:.2f} s an iteration")
print(f"FIGURE ps_shaped_bounded_iteration_s {rows[-1]['time_total_s'] / 3:.2f}")
PY
unthrottle_node 2
shape_link 1 off >/dev/null
shape_link 2 off >/dev/null

# ---- kill: a rank lost without elastic stops the run, saying which ----
status=0
train kill --set learner_timeout_s=8 --set stop.timesteps_total=10000000 --set stop.episode_return_mean=100000 \
  --set debug_slow_rank=0 --set debug_slow_factor=6 >kill.out 2>&1 &
run=$!
wait_for_rows runs/cartpole-ppo/kill/progress.csv 3 60 || fail "kill: no 3 iterations within 60 s"
rank1=$(node_pids 2 rlx-torch)
[[ $rank1 =~ ^[0-9]+$ ]] || fail "kill: want one learner rank on node2, found pids '$rank1'"
rows_before=$(rows runs/cartpole-ppo/kill/progress.csv)
killed_at=$(date +%s.%N)
kill -9 "$rank1"
wait "$run" || status=$?
stopped=$(echo "$(date +%s.%N) - $killed_at" | bc)
[ "$status" != 0 ] || fail "kill: rlx train exited 0 after losing rank 1"
# Mid-update (mostly: rank 0 is slowed 6x) the server waits on the task rank 1 holds and times
# out naming it; between updates Gloo's broadcast fails at once naming its address.
error=$(grep -m 1 -E '^0: rlx train: error: (parameter server: no learner rank sent anything for 8 s .*rank 1 \(holds|.*Connection closed by peer)' kill.out) ||
  fail "kill: rank 0's error does not name the lost rank: $(grep '^0: ' kill.out | tail -n 3)"
awk -v s="$stopped" 'BEGIN {exit !(s < 8 + 20)}' || fail "kill: rank 0 took $stopped s to stop (learner_timeout_s 8)"
rows_after=$(rows runs/cartpole-ppo/kill/progress.csv)
((rows_after >= rows_before)) || fail "kill: progress.csv lost rows ($rows_before, then $rows_after)"
python3 -c 'import json, sys; [json.loads(l) for l in open(sys.argv[1])]' runs/cartpole-ppo/kill/result.jsonl ||
  fail "kill: result.jsonl is torn"
echo "ok: kill: rank 0 stopped $(printf '%.1f' "$stopped") s after node2's rank was killed, exit $status: ${error#0: }"
echo "FIGURE ps_kill_to_error_s $(printf '%.2f' "$stopped")"
