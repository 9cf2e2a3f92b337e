#!/usr/bin/env bash
# ctest cluster.fleet_link_down: a learner on node1 serves a worker fleet on node2 and node3
# (srun steps, CURVE keys). Mid-run node3's link goes down: training goes on with node2's
# workers, the learner counts node3's as lost, and they come back when the link does
# (result.json). A worker whose key the learner does not authorize is refused (exit 2) and
# counted. Every fragment a worker sent is accounted for.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

cluster_up 3
rlx_work_dir
rlx_fleet_keys
# A worker with the learner's public key but a key pair the learner does not authorize (one
# made, then revoked).
"$RLX_BIN" keys add-worker keys rogue >/dev/null
rm keys/clients/rogue.pub
trial=runs/cartpole-ppo/fleet
RLX_CLUSTER_TIMEOUT=150

# The learner: a fixed 45 s of training (--pause-at), whatever the return.
cluster_exec srun -w node1 -N1 -n1 "$RLX_BIN" train "$RLX_SOURCE_DIR/experiments/cartpole-ppo.yaml" \
  --workers 0 --bind tcp://0.0.0.0:5555 --auth-keys keys --trial-name fleet --quiet \
  --set stop.episode_return_mean=1000000 --set stop.timesteps_total=100000000 --pause-at time_total_s=45 \
  >learner.out 2>&1 &
learner=$!
cluster_exec srun -w node2,node3 -N2 --ntasks-per-node=2 "$RLX_BIN" worker --connect-file "$trial/endpoint" \
  --auth-keys keys/workers/fleet --envs 8 --learner-timeout 120 >workers.out 2>&1 &
workers=$!

wait_for_rows "$trial/progress.csv" 3 60 || fail "no 3 iterations within 60 s"
status=0
cluster_exec srun -w node2 -N1 -n1 "$RLX_BIN" worker --connect-file "$trial/endpoint" \
  --auth-keys keys/workers/rogue --learner-timeout 20 >rogue.out 2>&1 || status=$?
[ "$status" = 2 ] || fail "the worker with a revoked key exited $status, not 2"
grep -q "refused this worker's key" rogue.out || fail "the refused worker did not say why: $(tail -2 rogue.out)"
echo "ok: a worker with a revoked key was refused: $(grep -o "refused this worker.s key[^:]*" rogue.out | head -1)"

"$RLX_CLUSTER" link-down 3
down_rows=$(rows "$trial/progress.csv")
sleep 12   # past the learner's worker timeout (10 s)
up_rows=$(rows "$trial/progress.csv")
"$RLX_CLUSTER" link-up 3
((up_rows >= down_rows + 3)) || fail "training stalled while node3 was cut off: $down_rows -> $up_rows iterations"
echo "ok: $((up_rows - down_rows)) iterations while node3 was cut off"
# The connections survive the cut; TCP's retransmission backoff decides when they carry
# traffic again (seconds after a 12 s cut, up to 2 minutes after long ones).
back_by=$(($(date +%s) + 30))
until [ "$(grep -c 'joined again' workers.out)" -ge 2 ]; do
  (($(date +%s) < back_by)) || fail "node3's workers did not rejoin within 30 s of the link's return"
  sleep 0.2
done
echo "ok: node3's workers rejoined $(( $(date +%s) - back_by + 30 )) s after the link returned"

status=0
wait "$learner" || status=$?
[ "$status" = 5 ] || fail "the learner exited $status, not 5 (paused)"
status=0
wait "$workers" || status=$?
[ "$status" = 0 ] || fail "the fleet's step exited $status"

result=$trial/result.json
lost=$(json "$result" 'j["sampler"]["workers_lost"]')
back=$(json "$result" 'j["sampler"]["workers_rejoined"] + j["sampler"]["workers_joined"] - 4')
refused=$(json "$result" 'j["sampler"]["handshakes_refused"]')
((lost >= 2)) || fail "the learner counted $lost workers lost, not node3's 2"
((back >= 2)) || fail "only $back of node3's workers came back"
((refused >= 1)) || fail "the refused handshake was not counted"
fragments_refused=$(json "$result" 'j["sampler"]["fragments_refused"]')
[ "$fragments_refused" = 0 ] || fail "$fragments_refused fragments refused: the returning workers were dropped"
active=$(json "$result" 'j["sampler"]["workers_active"]')
[ "$active" = 4 ] || fail "$active workers active at the end, not 4"
[ "$(grep -c 'joined again' workers.out)" = 2 ] || fail "node3's 2 workers did not each rejoin once: $(grep -c 'joined again' workers.out)"
echo "ok: result.json: workers_lost $lost, came back $back, handshakes_refused $refused"
check_fragment_accounting "$result" "$(fragments_sent workers.out)"
