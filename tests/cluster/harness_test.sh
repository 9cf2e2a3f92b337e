#!/usr/bin/env bash
# ctest cluster.harness: slurm_cluster.sh's own failure paths. `up` exits 77 with one line
# where the machine cannot run a cluster, a failed `up` cleans up after itself, `up` over a
# crashed run's leftovers starts afresh, and `down` is idempotent.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
"$RLX_CLUSTER" check || exit   # 77 (skipped) where no cluster can run at all
trap _cluster_on_exit EXIT   # down, whatever happens

# expect_skip WHY CMD...: CMD (an `up`) exits 77 with a one-line reason, leaving nothing.
expect_skip() {
  local why=$1 rc=0 out
  shift
  out=$("$@" 2>&1) || rc=$?
  [ "$rc" = 77 ] || fail "up $why: exit $rc, not 77 ($out)"
  [ "$(wc -l <<<"$out")" = 1 ] || fail "up $why: want one line, got: $out"
  [ -z "$(cluster_leftovers)" ] || fail "up $why left: $(cluster_leftovers)"
  echo "ok: up $why exits 77: $out"
}
expect_skip "as a user without root" setpriv --reuid=65534 --regid=65534 --clear-groups "$RLX_CLUSTER" up 1
# Debian keeps munged, slurmctld and slurmd in /usr/sbin, the clients in /usr/bin.
expect_skip "without munged on PATH" env PATH=/usr/bin:/bin "$RLX_CLUSTER" up 1
if unshare --user --map-root-user true 2>/dev/null; then
  expect_skip "where namespaces are refused (root in a user namespace)" \
    unshare --user --map-root-user "$RLX_CLUSTER" up 1
fi

# A failed up (slurmctld rejects its configuration) exits 1 and tears down what it started.
rc=0
out=$(RLX_SLURM_CONF_EXTRA="NoSuchKey=1" timeout -k 5 60 "$RLX_CLUSTER" up 2 2>&1) || rc=$?
[ "$rc" = 1 ] || fail "up with a broken slurm.conf: exit $rc, not 1 ($out)"
left=$(cluster_leftovers)
[ "$left" = "files $RLX_SLURM_DIR: .rlx-slurm-cluster log " ] || fail "failed up left: $left"
timeout -k 5 60 "$RLX_CLUSTER" down >/dev/null
[ -z "$(cluster_leftovers)" ] || fail "down after a failed up left: $(cluster_leftovers)"
echo "ok: a failed up exits 1, keeps only its logs, and down removes them"

# up over a cluster that was never taken down (here: a live one with a running job).
timeout -k 5 60 "$RLX_CLUSTER" up 2 >/dev/null
cluster_exec sbatch -o /dev/null --wrap 'sleep 300' >/dev/null
timeout -k 5 60 "$RLX_CLUSTER" up 3 >/dev/null || fail "up over a live cluster failed"
[ "$(cluster_exec sinfo -h -t idle -o %D)" = 3 ] || fail "up over a live cluster: not 3 idle nodes"
[ -z "$(cluster_exec squeue -h)" ] || fail "up over a live cluster kept its jobs"
echo "ok: up over a live cluster replaces it"

# up killed halfway: the next down cleans up what it had started.
timeout -k 5 60 "$RLX_CLUSTER" down >/dev/null
"$RLX_CLUSTER" up 3 >/dev/null 2>&1 &
up_pid=$!
for _ in $(seq 100); do   # until slurmctld's namespace exists, or 10 s
  [ ! -e "/run/netns/$RLX_SLURM_PREFIX-node2" ] || break
  sleep 0.1
done
kill -9 "$up_pid"
wait "$up_pid" 2>/dev/null || true
[ -n "$(cluster_leftovers)" ] || fail "up killed halfway left nothing (was it too quick to kill?)"
timeout -k 5 60 "$RLX_CLUSTER" down >/dev/null
timeout -k 5 60 "$RLX_CLUSTER" down >/dev/null || fail "a second down failed"
[ -z "$(cluster_leftovers)" ] || fail "down after a killed up left: $(cluster_leftovers)"
echo "ok: down cleans up after an up killed halfway, and again with nothing to do"
