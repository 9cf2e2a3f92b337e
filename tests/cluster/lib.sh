# shellcheck shell=bash
# tests/cluster/lib.sh: what rlx's cluster tests share. Source it from a bash test script:
#
#   set -euo pipefail
#   source "$(dirname "$0")/lib.sh"
#   cluster_up 3                      # exit 77 (skipped) where the machine cannot; on exit,
#                                     # logs are printed if the test failed, then `down` runs
#   cluster_exec srun -N 3 hostname   # a Slurm client on the "login node", under a timeout
#   jid=$(cluster_exec sbatch --parsable -o out-%j.txt job.sh)
#   wait_job_state "$jid" COMPLETED 30 || fail "job $jid did not complete"
#   [ "$(job_exit_code "$jid")" = 0 ] || fail "job $jid exited $(job_exit_code "$jid")"
#
# Each test gets its own cluster: prefix rlxt<script name without _test.sh and non-alnums>,
# state in /tmp/rlx-slurm-<prefix> (set RLX_SLURM_PREFIX / RLX_SLURM_DIR to override). ctest
# still runs the cluster tests one at a time (RESOURCE_LOCK): two clusters on 2 cores make
# timings meaningless.
#
# ctest runs each script in build/tests/cluster with RLX_BIN (the rlx binary) and
# RLX_SOURCE_DIR set.
#
# Every call that can block is bounded: cluster_exec by RLX_CLUSTER_TIMEOUT (default 60 s),
# polls by their own timeout. Finished jobs stay visible to scontrol for MinJobAge (30 s by
# default); poll with wait_job_state rather than `sbatch --wait`, which polls only every
# 10 s with that setting.

RLX_CLUSTER=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/slurm_cluster.sh
if [ -z "${RLX_SLURM_PREFIX:-}" ]; then
  RLX_SLURM_PREFIX=rlxt$(basename "$0" .sh | sed 's/_test$//; s/[^a-z0-9]//g')
fi
export RLX_SLURM_PREFIX
export RLX_SLURM_DIR=${RLX_SLURM_DIR:-/tmp/rlx-slurm-$RLX_SLURM_PREFIX}
RLX_CLUSTER_TIMEOUT=${RLX_CLUSTER_TIMEOUT:-60}

# fail MESSAGE...: the test fails, saying why (the EXIT trap then prints the logs).
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# cluster_up N: a cluster of N nodes, torn down however the test ends. Exits 77 (ctest:
# skipped) with the harness's one-line reason when this machine cannot run one.
cluster_up() {
  trap _cluster_on_exit EXIT
  trap 'exit 143' TERM   # so that a timeout's SIGTERM still runs the EXIT trap
  trap 'exit 130' INT
  local rc=0
  timeout -k 5 120 "$RLX_CLUSTER" up "$1" || rc=$?
  [ "$rc" = 0 ] || exit "$rc"   # 77 passes through as "skipped"
}

# cluster_down: tear down now (the EXIT trap would otherwise); fails if anything is left.
cluster_down() {
  timeout -k 5 60 "$RLX_CLUSTER" down
  local left
  left=$(cluster_leftovers)
  [ -z "$left" ] || fail "left behind after down: $left"
}

_cluster_on_exit() {
  local rc=$?
  trap - EXIT
  if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
    print_slurm_logs >&2
    [ -z "${RLX_WORK:-}" ] || print_rlx_logs >&2
  fi
  timeout -k 5 60 "$RLX_CLUSTER" down >/dev/null 2>&1 || echo "lib.sh: down failed" >&2
  if [ -n "${RLX_WORK:-}" ] && [ -z "${RLX_CLUSTER_KEEP_WORK:-}" ]; then rm -rf "$RLX_WORK"; fi
  exit "$rc"
}

# cluster_exec CMD...: run CMD on the login node (Slurm clients find the cluster), in the
# current directory, killed after RLX_CLUSTER_TIMEOUT seconds.
cluster_exec() { timeout -k 5 "$RLX_CLUSTER_TIMEOUT" "$RLX_CLUSTER" exec "$@"; }

# node_exec I CMD...: run CMD on node I (outside Slurm), bounded like cluster_exec.
node_exec() { timeout -k 5 "$RLX_CLUSTER_TIMEOUT" "$RLX_CLUSTER" node-exec "$@"; }

# node_pids I NAME: the pids of node I's processes called NAME (/proc/PID/comm), e.g. to kill
# one node's: `kill -9 $(node_pids 2 rlx-torch)`. The nodes share one process table, so
# `node_exec I pkill NAME` would reach every node's NAME; a node's processes are those in its
# network namespace.
node_pids() {
  local pid
  for pid in $(ip netns pids "$RLX_SLURM_PREFIX-node$1"); do
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" != "$2" ] || echo "$pid"
  done
}

# job_field JOBID FIELD: FIELD's value in `scontrol show job` (empty once the job is gone); of
# the first component for a heterogeneous job.
job_field() {
  local line
  line=$(timeout -k 2 10 "$RLX_CLUSTER" exec scontrol show job -o "$1" 2>/dev/null) || return 0
  # A heterogeneous job has a line per component: the first is the leader's.
  sed -n "1s/.* $2=\([^ ]*\).*/\1/p" <<<" $line"
}

# job_state JOBID: PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, ... (empty once the job
# is gone, MinJobAge seconds after it ended).
job_state() { job_field "$1" JobState; }

# job_exit_code JOBID: the batch script's exit status as a shell would report it: its exit
# code, or 128 + the signal that killed it.
job_exit_code() {
  local code
  code=$(job_field "$1" ExitCode)   # "status:signal"
  [ -n "$code" ] || { echo "lib.sh: job $1 is unknown (gone after MinJobAge?)" >&2; return 1; }
  if [ "${code#*:}" != 0 ]; then echo $((128 + ${code#*:})); else echo "${code%:*}"; fi
}

# wait_job_state JOBID STATE[|STATE...] TIMEOUT: poll until the job is in one of the states;
# on timeout, say which state it was in and return 1.
wait_job_state() {
  local jid=$1 want=$2 end state
  end=$(($(date +%s%N) + $3 * 1000000000))
  while :; do
    state=$(job_state "$jid")
    [[ -n $state && "|$want|" == *"|$state|"* ]] && return 0
    (($(date +%s%N) < end)) || break
    sleep 0.2
  done
  echo "lib.sh: job $jid is ${state:-unknown}, not $want, after $3 s" >&2
  return 1
}

# print_slurm_logs: the cluster's state and the tail of every daemon's log (for a failure).
print_slurm_logs() {
  local f
  echo "===== slurm cluster $RLX_SLURM_PREFIX ($RLX_SLURM_DIR) at failure ====="
  timeout -k 2 10 "$RLX_CLUSTER" status 2>&1 || true
  for f in "$RLX_SLURM_DIR"/log/*.log; do
    [ -e "$f" ] || continue
    echo "----- $f (last 40 lines) -----"
    tail -n 40 "$f"
  done
  echo "===== end of slurm logs ====="
}

# cluster_leftovers: what of this cluster survives `down`, one item a line (nothing if clean):
# namespaces, live processes started in it (their environment names its slurm.conf) or
# serving its munge socket, netns mounts and files.
cluster_leftovers() {
  local f pid state
  ip netns list | awk '{print $1}' | grep -E "^$RLX_SLURM_PREFIX-" | sed 's/^/namespace /' || true
  for f in /run/netns/"$RLX_SLURM_PREFIX"-*; do [ ! -e "$f" ] || echo "mount $f"; done
  for f in /sys/fs/cgroup/{cpu/,,unified/}rlx-"$RLX_SLURM_PREFIX"-*; do [ ! -e "$f" ] || echo "cgroup $f"; done
  # The patterns come from a file, so that grep's own command line does not match them.
  grep -lzxF -f <(printf '%s\n' "SLURM_CONF=$RLX_SLURM_DIR/slurm.conf" "--socket=$RLX_SLURM_DIR/munge/munge.sock") \
    /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | while read -r f; do
    pid=${f#/proc/}
    pid=${pid%/*}
    state=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -c1)
    # gone since, or a zombie (dead already; init reaps it)
    [ -z "$state" ] || [ "$state" = Z ] || echo "process $pid $(cat "/proc/$pid/comm" 2>/dev/null)"
  done | sort -u || true   # (grep fails on the /proc files it may not read)
  # shellcheck disable=SC2012
  [ ! -e "$RLX_SLURM_DIR" ] || echo "files $RLX_SLURM_DIR: $(ls -A "$RLX_SLURM_DIR" | tr '\n' ' ')"
}

# ---- a realistic network, and a straggler (slurm_cluster.sh; link_shaping.sh says how) ----

# shape_link I [--delay-ms MS] [--jitter-ms MS] [--loss PERCENT] [--seed N]: node I's link
# delays every frame by MS (+- the jitter, uniform) and drops PERCENT % of them, each way;
# a frame between two shaped nodes crosses both links. Replaces the link's earlier shape.
# Prints "SHAPER: ...", SHAPER netem or (where the kernel has no netem) rlx_link_emulator.
# shape_link I off: no more shaping.
shape_link() { timeout -k 5 30 "$RLX_CLUSTER" shape "$@"; }

# cut_link I SECONDS: node I's link drops every frame for SECONDS; returns at once. Unlike
# link-down, the node's interface stays up: its sockets see silence, not a dead link.
cut_link() { timeout -k 5 30 "$RLX_CLUSTER" cut "$@"; }

# throttle_node I PERCENT: a straggler host. Node I's processes, and every one that its slurmd
# or node_exec starts later, share at most PERCENT % of one CPU (a cpu cgroup's CFS quota).
# unthrottle_node I lifts it. `down` removes the cgroup.
throttle_node() { timeout -k 5 30 "$RLX_CLUSTER" throttle "$@"; }
unthrottle_node() { timeout -k 5 30 "$RLX_CLUSTER" unthrottle "$@"; }

# ---- rlx on the cluster ----

# cluster_work_dir: a fresh directory on the "shared filesystem" for the test's files (RLX_WORK,
# the current directory from now on), removed on exit unless RLX_CLUSTER_KEEP_WORK is set.
cluster_work_dir() {
  RLX_WORK=/tmp/rlx-cluster-work-$RLX_SLURM_PREFIX
  rm -rf "$RLX_WORK"
  mkdir -p "$RLX_WORK"
  chmod 755 "$RLX_WORK"
  cd "$RLX_WORK"
}

# rlx_work_dir: cluster_work_dir, for rlx's runs, keys and job output. Needs RLX_BIN (ctest
# sets it).
rlx_work_dir() {
  [ -x "${RLX_BIN:-}" ] || fail "RLX_BIN is not set to the rlx binary"
  cluster_work_dir
}

# rlx_fleet_keys: CURVE keys in ./keys (rlx keys init) with one worker key pair, keys/workers/fleet.
rlx_fleet_keys() {
  "$RLX_BIN" keys init keys >/dev/null
  "$RLX_BIN" keys add-worker keys fleet >/dev/null
}

# print_rlx_logs: the tail of every job output and rlx log under RLX_WORK (for a failure).
print_rlx_logs() {
  local f
  for f in "$RLX_WORK"/*.out "$RLX_WORK"/runs/*/*/logs/*.log; do
    [ -e "$f" ] || continue
    echo "----- $f (last 30 lines) -----"
    tail -n 30 "$f"
  done
}

# json FILE EXPR: a value of a JSON file, EXPR a Python expression over `j`, e.g.
# json result.json 'j["sampler"]["workers_lost"]'.
json() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# wait_for_rows CSV N TIMEOUT: until the progress file has N data rows; returns 1 on timeout.
wait_for_rows() {
  local end=$(($(date +%s) + $3))
  while (($(date +%s) < end)); do
    [ -f "$1" ] && (($(wc -l <"$1") - 1 >= $2)) && return 0
    sleep 0.1
  done
  return 1
}

# rows CSV: how many data rows the progress file has (0 while it does not exist).
rows() { if [ -f "$1" ]; then echo $(($(wc -l <"$1") - 1)); else echo 0; fi; }

# fragments_sent OUTPUT_FILE: the fragments every worker that wrote its final line to the job
# output says it sent, summed.
fragments_sent() { grep -o 'fragments_sent=[0-9]*' "$1" | cut -d= -f2 | awk '{s += $1} END {print s + 0}'; }

# check_fragment_accounting RESULT_JSON SENT: every fragment a worker sent was received, and
# every one received ended consumed, dropped (stale, unknown sender, at stop), refused or queued.
check_fragment_accounting() {
  local received ended
  received=$(json "$1" 'j["sampler"]["fragments_received"]')
  ended=$(json "$1" 'sum(j["sampler"][k] for k in ("fragments_consumed", "fragments_dropped_stale",
    "fragments_dropped_other", "fragments_refused", "fragments_queued"))')
  [ "$2" = "$received" ] || fail "the workers sent $2 fragments, the learner received $received"
  [ "$received" = "$ended" ] || fail "$received fragments received, but consumed + dropped + refused + queued = $ended"
  echo "ok: $2 fragments sent = $received received = consumed + dropped + refused + queued"
}

# requeue_job JOBID: `scontrol requeue JOBID`, as a user (or a preemption) would. Slurm holds a
# requeued job until its credentials expire (cred_expire + 1 s): slurmd revoked the ended run's
# credentials, and a run launched inside that window dies with "Job credential revoked". Only
# the backfill scheduler starts heterogeneous jobs, and Slurm 22.05 skips a backfill pass when
# nothing changed since the last one; on a busy cluster something always has, on this idle one
# nothing does when the hold ends. So once the hold is over (timed here, not read from the
# job's Reason, which says None for a moment after the requeue), a still pending job gets a
# nudge (its start time set to now), which is what any change on a real cluster amounts to.
requeue_job() {
  cluster_exec scontrol requeue "$1"
  local hold_end=$(($(date +%s) + ${RLX_SLURM_CRED_EXPIRE:-5} + 2))
  local end=$((hold_end + 30))
  while (($(date +%s) < end)); do
    [ "$(job_state "$1")" = PENDING ] || return 0
    if (($(date +%s) >= hold_end)); then
      cluster_exec scontrol update JobId="$1" StartTime=now
      return 0
    fi
    sleep 0.5
  done
}
