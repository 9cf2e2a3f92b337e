#!/usr/bin/env bash
# ctest cluster.cross_host_weights: the same batches give the same weights whether the 2
# learner ranks share a host or not. Synchronous sampling (--workers 0, seed 0) makes every run
# train on the same batches; `srun -N2 -n2` puts the ranks on node1 and node2 (Gloo over the
# namespace network), `srun -N1 -n2` both on node1, and a single learner is the reference. The
# checkpoints after 3 iterations agree to 1e-5 (rlx_checkpoint_diff).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[ -x "${RLX_CHECKPOINT_DIFF:-}" ] || fail "RLX_CHECKPOINT_DIFF is not set to rlx_checkpoint_diff"
cluster_up 2
rlx_work_dir
# LibTorch's learner for the single-learner reference too (auto would pick the native one).
train=("$RLX_BIN" train "$RLX_SOURCE_DIR/experiments/cartpole-ppo.yaml" --workers 0 --seed 0 --set learner_backend=torch
  --pause-at training_iteration=3 --quiet)

status=0
cluster_exec srun -N2 -n2 "${train[@]}" --trial-name two-hosts >two-hosts.out 2>&1 || status=$?
[ "$status" = 5 ] || fail "the run on two hosts exited $status, not 5 (paused)"
grep -q "learner rank 1 of 2 on node2" two-hosts.out || fail "rank 1 did not run on node2"
status=0
cluster_exec srun -N1 -n2 -w node1 "${train[@]}" --trial-name one-host >one-host.out 2>&1 || status=$?
[ "$status" = 5 ] || fail "the run on one host exited $status, not 5 (paused)"
grep -q "learner rank 1 of 2 on node1" one-host.out || fail "rank 1 did not run on node1"
status=0
cluster_exec srun -N1 -n1 "${train[@]}" --trial-name one-learner >one-learner.out 2>&1 || status=$?
[ "$status" = 5 ] || fail "the single learner exited $status, not 5 (paused)"

checkpoint() { echo "runs/cartpole-ppo/$1/checkpoints/checkpoint_000003"; }
for pair in "two-hosts one-host" "two-hosts one-learner"; do
  read -r a b <<<"$pair"
  diff=$("$RLX_CHECKPOINT_DIFF" "$(checkpoint "$a")" "$(checkpoint "$b")" | awk '/^max_rel_diff/ {print $2}')
  [ -n "$diff" ] || fail "rlx_checkpoint_diff could not compare $a and $b"
  python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) <= 1e-5 else 1)" "$diff" ||
    fail "$a and $b differ by $diff (relative), more than 1e-5"
  echo "ok: $a and $b agree after 3 iterations: max relative difference $diff"
done
