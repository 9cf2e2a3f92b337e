#!/usr/bin/env bash
# slurm_cluster.sh: a real Slurm cluster of N "hosts" on this one machine, for rlx's cluster
# tests. Each host is a network namespace with its own address, hostname (a UTS namespace)
# and slurmd; slurmctld runs in a controller namespace whose bridge links the hosts. One
# munged, in the root namespace, serves them all (unix sockets are paths, which every
# namespace sees). Needs root; no systemd and no cgroup plugin.
#
#   slurm_cluster.sh up N          start N nodes (node1..nodeN), wait until all are idle
#   slurm_cluster.sh exec CMD...   run a Slurm client (or anything) on the "login node": in
#                                  the controller's namespaces, SLURM_CONF set, cwd kept
#   slurm_cluster.sh node-exec I CMD...   run CMD on node I (its network, hostname, hosts file)
#   slurm_cluster.sh link-down I   unplug node I (its veth end on the controller's bridge)
#   slurm_cluster.sh link-up I     plug it back in
#   slurm_cluster.sh shape I [--delay-ms MS] [--jitter-ms MS] [--loss PERCENT] [--seed N]
#                                  delay, jitter (uniform, +-MS) and loss on node I's link, each
#                                  way; replaces an earlier shape. Its line starts with the shaper
#                                  used: netem, or rlx_link_emulator where the kernel has no netem
#   slurm_cluster.sh shape I off   no more shaping
#   slurm_cluster.sh cut I SECONDS node I's link drops everything for SECONDS; returns at once
#   slurm_cluster.sh throttle I PERCENT   a straggler: node I's processes, those slurmd starts
#                                  later included, get at most PERCENT % of one CPU
#   slurm_cluster.sh unthrottle I  lift it
#   slurm_cluster.sh status        namespaces, daemons, sinfo and squeue
#   slurm_cluster.sh check         exit 77 with the reason `up` would give, 0 if it could run
#   slurm_cluster.sh selftest      check a running cluster (>= 3 nodes): srun, TCP by name,
#                                  a heterogeneous job, requeue, link-down/up
#   slurm_cluster.sh down          kill everything of ours and delete it; idempotent
#
# Settings (environment):
#   RLX_SLURM_PREFIX=rlxs          names: namespaces rlxs-ctl and rlxs-node1..N, controller
#                                  hostname rlxsctl. Clusters with different prefixes are
#                                  independent and can run at the same time.
#   RLX_SLURM_DIR=/tmp/rlx-slurm-PREFIX   all state: slurm.conf, hosts, munge key and socket,
#                                  spool, pid files, logs (log/). Every directory on its path
#                                  must be o+x (munged checks), so not under /root.
#   RLX_SLURM_NET=10.78.0          the /24 inside the namespaces: controller .1, nodeI .(10+I).
#                                  Nothing is routed from the root namespace, so two clusters
#                                  could even share a subnet.
#   RLX_SLURM_CPUS=4               CPUs each node advertises (more than the machine has is fine)
#   RLX_SLURM_MINJOBAGE=30         seconds a finished job stays visible to squeue/scontrol, and
#                                  so can be requeued. With MinJobAge >= 4, sbatch --wait
#                                  polls at 2 s and 10 s, then every 10 s (a 3 s job
#                                  returns after 10 s), so tests poll scontrol instead
#                                  (lib.sh wait_job_state).
#   RLX_SLURM_CRED_EXPIRE=5        AuthInfo cred_expire: a requeued job waits this + 1 s before
#                                  it may start again (Slurm's default is 120 s; 5 is its
#                                  minimum). It is also how old a launch credential may be when
#                                  slurmd checks it: raise it if slurmd logs "credential expired".
#   RLX_SLURM_CONF_EXTRA=          lines appended to slurm.conf (e.g. "SlurmdTimeout=10"); a key
#                                  set above is overridden (Slurm logs "specified more than
#                                  once, latest value used")
#   RLX_SLURM_UP_TIMEOUT=60        seconds `up` waits for the nodes to be idle
#   RLX_SLURM_KEEP_LOGS=0          1: `down` keeps DIR/log (everything else still goes)
#   RLX_SLURM_SHAPER=              netem or rlx_link_emulator: the shaper `shape` and `cut` use
#                                  (default: netem where the kernel has it)
#   RLX_LINK_EMULATOR=             the rlx_link_emulator binary (default: build/tests/cluster/ in
#                                  this checkout); link_shaping.sh says how it is wired in
#
# Exit status: 0 ok, 1 failure, 2 usage, 77 (up, check) this machine cannot run a cluster
# (not root, namespaces refused, slurm or munge missing); ctest maps 77 to "skipped".
#
# Job tasks run with the caller's working directory, on the one shared filesystem: name
# per-node files with %n, %t or $SLURM_PROCID. A node cannot reach the root namespace's
# addresses; each node has its own loopback.
# SC2015: `A && B || die` is meant (die when either fails); SC2016: single-quoted scripts
# are expanded by the shell that runs them.
# shellcheck disable=SC2015,SC2016
set -euo pipefail

P=${RLX_SLURM_PREFIX:-rlxs}
D=${RLX_SLURM_DIR:-/tmp/rlx-slurm-$P}
NET=${RLX_SLURM_NET:-10.78.0}
CPUS=${RLX_SLURM_CPUS:-4}
MINJOBAGE=${RLX_SLURM_MINJOBAGE:-30}
CRED_EXPIRE=${RLX_SLURM_CRED_EXPIRE:-5}
UP_TIMEOUT=${RLX_SLURM_UP_TIMEOUT:-60}
CTL_NS=$P-ctl
CTL_HOST=${P}ctl
CTL_IP=$NET.1
MARKER=.rlx-slurm-cluster   # in $D: proves $D is ours before `down` deletes anything in it
# What `up` creates in $D, and so what `down` removes (nothing else is touched).
STATE_ENTRIES=(slurm.conf hosts nodes munge state spool run log "$MARKER")

me=$(basename "$0")
die() { echo "$me: $*" >&2; exit 1; }
skip() { echo "$me: skipped: $*" >&2; exit 77; }
usage() {   # the comment at the top of this file, up to the shellcheck notes
  awk 'NR > 1 && /^# SC2015/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0" >&2
  exit 2
}

[[ $P =~ ^[a-z][a-z0-9]{0,31}$ ]] || die "RLX_SLURM_PREFIX='$P': want 1-32 of [a-z0-9], starting with a letter"
[[ $NET =~ ^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$ ]] || die "RLX_SLURM_NET='$NET': want three octets, e.g. 10.78.0"
[[ $CPUS =~ ^[1-9][0-9]*$ ]] || die "RLX_SLURM_CPUS='$CPUS': want a positive integer"
[[ $MINJOBAGE =~ ^[0-9]+$ ]] || die "RLX_SLURM_MINJOBAGE='$MINJOBAGE': want seconds"
[[ $CRED_EXPIRE =~ ^[0-9]+$ ]] && ((CRED_EXPIRE >= 5)) ||
  die "RLX_SLURM_CRED_EXPIRE='$CRED_EXPIRE': want seconds, at least 5 (Slurm ignores less)"

node_ip() { echo "$NET.$((10 + $1))"; }
node_count() { cat "$D/nodes" 2>/dev/null || echo 0; }
our_namespaces() { ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$P-(ctl|node[0-9]+|check)$" || true; }

# ns_run NS HOSTNAME CMD...: run CMD "on a host": in network namespace NS, inside a fresh UTS
# namespace (hostname HOSTNAME) and mount namespace (our hosts file bound over /etc/hosts;
# the real /etc is untouched). nsenter rather than `ip netns exec`: the latter remounts /sys,
# which hides /sys/fs/cgroup, and slurmd 22.05 will not start without it (even with
# task/none). nsenter, unshare and sh all exec, so CMD ends up with our pid: a `timeout`
# around this script signals CMD itself.
ns_run() {
  local ns=$1 host=$2
  shift 2
  SLURM_CONF=$D/slurm.conf exec nsenter --net="/run/netns/$ns" \
    unshare --uts --mount --propagation slave -- \
    sh -c 'mount --bind "$0" /etc/hosts && hostname "$1" && shift && exec "$@"' \
    "$D/hosts" "$host" "$@"
}
in_ctl() { (ns_run "$CTL_NS" "$CTL_HOST" "$@"); }   # a subshell, so the caller carries on
in_node() { (ns_run "$P-node$1" "node$1" "${@:2}"); }

node_arg() {   # node_arg I: I must name a node of the running cluster
  [[ ${1:-} =~ ^[1-9][0-9]*$ ]] && (($1 <= $(node_count))) ||
    die "no node '${1:-}' (the cluster has nodes 1..$(node_count))"
  [ -e "/run/netns/$P-node$1" ] || die "node $1 has no namespace; is the cluster up?"
}

wait_for() {   # wait_for SECONDS CMD...: poll CMD every 0.2 s until it succeeds
  local end=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < end)) || return 1
    sleep 0.2
  done
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }
seconds_since() { local ms=$(($(now_ms) - $1)); printf '%d.%03d' $((ms / 1000)) $((ms % 1000)); }

# shape, cut, throttle and unthrottle, and their part of `down`
source "$(dirname "${BASH_SOURCE[0]}")/link_shaping.sh"

# --- teardown --------------------------------------------------------------------------------

# alive PID: it runs (it is neither gone nor a zombie: state Z, after the ")" that ends its name)
alive() { [ -e "/proc/$1" ] && [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)" != Z ]; }
none_alive() { local p; for p in "$@"; do ! alive "$p" || return 1; done; }   # none_alive PID...

kill_and_wait() {   # kill_and_wait PID...: SIGKILL, then wait (up to 5 s) until they are gone
  (($# > 0)) || return 0
  kill -9 "$@" 2>/dev/null || true
  wait_for 5 none_alive "$@" || true
}

our_munged_pids() {   # munged's serving our socket: found by their exact --socket argument
  local f pid
  grep -lzxF -- "--socket=$D/munge/munge.sock" /proc/[0-9]*/cmdline 2>/dev/null | while read -r f; do
    pid=${f#/proc/}
    pid=${pid%/cmdline}
    # (grep's own command line holds that argument too)
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = munged ] && echo "$pid"
  done || true   # (grep fails on the /proc files it may not read)
}

# Everything of ours is either in one of our network namespaces (slurmctld, the slurmd's,
# slurmstepd's, job tasks, clients started with exec/node-exec, link emulators, and anything
# they forked) or is our munged; the throttled nodes' cgroups go once their processes have. SIGKILL is fine: the whole state is thrown away. Deleting a namespace deletes
# its links (bridge and veths; the root namespace never gets any), and the hosts-file bind
# mounts die with the mount namespaces of the killed processes.
do_down() {
  local ns pids i
  shaping_down
  for ns in $(our_namespaces); do
    for i in 1 2 3 4 5; do   # again, in case something forked while we were killing
      pids=$(ip netns pids "$ns" 2>/dev/null || true)
      [ -n "$pids" ] || break
      # shellcheck disable=SC2086
      kill_and_wait $pids
    done
    ip netns del "$ns" 2>/dev/null || true
  done
  # shellcheck disable=SC2046
  kill_and_wait $(our_munged_pids)
  throttle_down
  if [ -e "$D/$MARKER" ]; then
    local keep=()
    [ "${RLX_SLURM_KEEP_LOGS:-0}" = 1 ] && keep=(log "$MARKER")   # a later down removes them
    for e in "${STATE_ENTRIES[@]}"; do
      [[ " ${keep[*]} " == *" $e "* ]] || rm -rf "${D:?}/$e"
    done
    rmdir "$D" 2>/dev/null || true   # only if empty: keeps kept logs and anything not ours
  fi
  [ -z "$(our_namespaces)" ] || die "namespaces left after down: $(our_namespaces | tr '\n' ' ')"
}

cmd_down() {
  local t0
  t0=$(now_ms)
  do_down
  echo "cluster $P down in $(seconds_since "$t0") s"
}

# --- bring-up --------------------------------------------------------------------------------

check_machine() {   # exit 77 with one line when this machine cannot run the cluster
  local b
  [ "$(id -u)" = 0 ] || skip "needs root (network, mount and UTS namespaces)"
  for b in munged slurmctld slurmd srun sbatch sinfo scontrol ip nsenter unshare; do
    command -v "$b" >/dev/null ||
      skip "$b not found (scripts/setup.sh installs slurmctld slurmd slurm-client munge iproute2)"
  done
  mountpoint -q /sys/fs/cgroup || skip "no cgroup filesystem on /sys/fs/cgroup (slurmd 22.05 needs one)"
  unshare --uts --mount --propagation slave true 2>/dev/null ||
    skip "cannot create UTS and mount namespaces (a container needs CAP_SYS_ADMIN)"
}

cmd_check() {   # what `up` checks first, without starting anything
  check_machine
  ip netns add "$P-check" 2>/dev/null || skip "cannot create network namespaces (ip netns add $P-check failed)"
  ip netns del "$P-check"
  echo "$me: this machine can run a cluster"
}

check_dir_path() {   # munged refuses a socket below a directory that others cannot enter
  local p=$D
  while [ "$p" != / ] && [ -n "$p" ]; do
    if [ -e "$p" ] && [ "$(($(stat -c '0%a' "$p") & 1))" = 0 ]; then
      die "RLX_SLURM_DIR=$D: $p is not o+x, and munged needs every directory on its socket's path to be; pick another RLX_SLURM_DIR"
    fi
    p=$(dirname "$p")
  done
}

write_hosts() {   # the /etc/hosts every host of ours sees (see ns_run)
  local n=$1 i
  {
    echo "127.0.0.1 localhost"
    echo "::1 localhost ip6-localhost ip6-loopback"
    echo "$CTL_IP $CTL_HOST"
    for ((i = 1; i <= n; i++)); do echo "$(node_ip "$i") node$i"; done
  } >"$D/hosts"
}

write_conf() {
  local n=$1 i
  cat >"$D/slurm.conf" <<EOF
# Written by tests/cluster/slurm_cluster.sh: $n nodes in network namespaces ($P-*).
ClusterName=$P
SlurmctldHost=$CTL_HOST($CTL_IP)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# cred_expire is also how long a requeued job waits before it may start again.
AuthInfo=socket=$D/munge/munge.sock,cred_expire=$CRED_EXPIRE
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool/%n
SlurmctldPidFile=$D/run/slurmctld.pid
SlurmdPidFile=$D/run/slurmd-%n.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups, CPU binding or accounting: /proc process tracking only.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# Start batch jobs at once (batch_sched_delay), run the backfill scheduler, which places
# heterogeneous jobs, every second instead of every 30 (bf_interval), and test all pending
# jobs every second instead of every 60 (sched_interval). Without the last, a requeued job
# waits for the next full pass once its requeue delay is over: nothing else wakes the
# scheduler, and backfill skips a queue in which nothing changed.
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,bf_interval=1,sched_interval=1
# Batch jobs may be requeued (scontrol requeue, or by Slurm when their node fails) while
# they are still known: MinJobAge seconds after they end.
JobRequeue=1
MinJobAge=$MINJOBAGE
# A node that was down comes back by itself once its slurmd registers again.
ReturnToService=2
# Trust the CPU counts below, not the real hardware.
SlurmdParameters=config_overrides
MailProg=/bin/true
EOF
  if [ -n "${RLX_SLURM_CONF_EXTRA:-}" ]; then
    printf '# RLX_SLURM_CONF_EXTRA\n%s\n' "$RLX_SLURM_CONF_EXTRA" >>"$D/slurm.conf"
  fi
  for ((i = 1; i <= n; i++)); do
    echo "NodeName=node$i NodeAddr=$(node_ip "$i") CPUs=$CPUS Boards=1 SocketsPerBoard=1" \
      "CoresPerSocket=$CPUS ThreadsPerCore=1 RealMemory=1000 State=UNKNOWN" >>"$D/slurm.conf"
  done
  echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP" >>"$D/slurm.conf"
}

all_idle() { [ "$(in_ctl sinfo -h -t idle -o %D 2>/dev/null)" = "$1" ]; }

up_ok=0
up_exit() {   # EXIT trap of `up`: a partial cluster is torn down (logs kept to look at)
  local rc=$?
  if [ "$up_ok" != 1 ]; then
    if [ -d "$D/log" ] && [ "$rc" != 77 ]; then
      echo "$me: up failed; last log lines:" >&2
      tail -n 5 "$D"/log/*.log >&2 2>/dev/null || true
    fi
    RLX_SLURM_KEEP_LOGS=$([ "$rc" = 77 ] && echo 0 || echo 1) do_down >/dev/null 2>&1 || true
    [ "$rc" = 77 ] || echo "$me: up failed; cleaned up (logs kept in $D/log)" >&2
  fi
}

cmd_up() {
  local n=${1:-} i t0
  [[ $n =~ ^[1-9][0-9]*$ ]] && ((n <= 200)) || die "up wants a node count 1..200, not '$n'"
  t0=$(now_ms)
  check_machine
  if [ -e "$D" ] && [ ! -e "$D/$MARKER" ] && [ -n "$(ls -A "$D")" ]; then
    die "RLX_SLURM_DIR=$D exists, is not empty and was not made by $me; pick another"
  fi
  check_dir_path
  do_down   # whatever an earlier, crashed run with this prefix left behind
  trap up_exit EXIT

  mkdir -p "$D"
  chmod 755 "$D"
  touch "$D/$MARKER"
  mkdir -p "$D"/{munge,state,spool,run,log}
  chmod 755 "$D/munge"
  echo "$n" >"$D/nodes"
  write_hosts "$n"
  write_conf "$n"

  # Network: bridge br0 in the controller namespace; per node a veth pair, "vnodeI" on the
  # bridge and "eth0" in the node's namespace.
  ip netns add "$CTL_NS" 2>/dev/null || skip "cannot create network namespaces (ip netns add $CTL_NS failed)"
  in_ctl true || skip "cannot enter a network namespace together with UTS and mount namespaces"
  ip -n "$CTL_NS" link set lo up
  # br0's address is set, so that it keeps it: a bridge otherwise takes its ports' lowest, which
  # changes when `shape` adds one, and the nodes would send to the controller's old address
  # until their ARP entries for it expire.
  # shellcheck disable=SC2086
  ip -n "$CTL_NS" link add br0 address "$(printf '02:00:%02x:%02x:%02x:%02x' ${CTL_IP//./ })" type bridge
  ip -n "$CTL_NS" addr add "$CTL_IP/24" dev br0
  ip -n "$CTL_NS" link set br0 up
  for ((i = 1; i <= n; i++)); do
    ip netns add "$P-node$i"
    ip -n "$P-node$i" link set lo up
    ip -n "$CTL_NS" link add "vnode$i" type veth peer name eth0 netns "$P-node$i"
    ip -n "$CTL_NS" link set "vnode$i" master br0 up
    ip -n "$P-node$i" addr add "$(node_ip "$i")/24" dev eth0
    ip -n "$P-node$i" link set eth0 up
    mkdir -p "$D/spool/node$i"
  done

  # munged: our own key and socket (root is fine for munge 0.5.15). It daemonizes once its
  # socket is listening.
  head -c 1024 /dev/urandom >"$D/munge/munge.key"
  chmod 600 "$D/munge/munge.key"
  munged --socket="$D/munge/munge.sock" --key-file="$D/munge/munge.key" \
    --pid-file="$D/run/munged.pid" --log-file="$D/log/munged.log" \
    --seed-file="$D/munge/munged.seed" || die "munged failed; see $D/log/munged.log"

  # Each daemon daemonizes and writes its pid file.
  in_ctl slurmctld || die "slurmctld failed; see $D/log/slurmctld.log"
  for ((i = 1; i <= n; i++)); do
    in_node "$i" slurmd -N "node$i" || die "slurmd on node$i failed; see $D/log/slurmd-node$i.log"
  done
  if ! wait_for "$UP_TIMEOUT" all_idle "$n"; then
    in_ctl sinfo -N >&2 || true
    die "the $n nodes were not idle after $UP_TIMEOUT s; logs in $D/log"
  fi
  up_ok=1
  echo "cluster $P up: $n nodes in $(seconds_since "$t0") s (state in $D)"
}

# --- the rest --------------------------------------------------------------------------------

cmd_status() {
  local f
  echo "namespaces: $(our_namespaces | tr '\n' ' ')"
  for f in "$D"/run/*.pid; do [ -e "$f" ] && echo "$(basename "$f" .pid): pid $(cat "$f")"; done
  if [ -e "/run/netns/$CTL_NS" ] && [ -e "$D/slurm.conf" ]; then
    in_ctl sinfo -N || true
    in_ctl squeue || true
  fi
}

cmd_link() {   # cmd_link up|down I
  node_arg "$2"
  ip -n "$CTL_NS" link set "vnode$2" "$1"
}

# Checks a running cluster of >= 3 nodes; stops at the first failure with a non-zero exit.
cmd_selftest() {
  local n t0 out jid i python
  n=$(node_count)
  ((n >= 3)) || die "selftest needs a cluster of at least 3 nodes (this one has $n)"
  [ -e "/run/netns/$CTL_NS" ] || die "the cluster is not up"
  sl() { timeout -k 5 "$1" "$0" exec "${@:2}"; }   # sl TIMEOUT CMD...: a Slurm client, bounded

  t0=$(now_ms)
  out=$(sl 30 srun -N "$n" -n "$n" hostname | sort | tr '\n' ' ')
  local want=""
  for ((i = 1; i <= n; i++)); do want+="node$i "; done
  [ "$out" = "$want" ] || die "srun -N $n -n $n hostname printed '$out', expected '$want'"
  echo "ok: srun -N $n -n $n hostname ran a task on each node ($(seconds_since "$t0") s)"

  python=$(command -v /usr/bin/python3 python3 | head -n 1 || true)
  if [ -n "$python" ]; then
    t0=$(now_ms)
    # A server step on node1 and, in the same allocation, a client step on node2 that
    # connects to it by name. --overlap lets the two steps share the allocation's CPUs.
    out=$(sl 60 salloc -N 2 -w node1,node2 bash -c '
      srun -N1 -n1 -w node1 --overlap "$0" -c "
import socket
s = socket.create_server((\"0.0.0.0\", 7311))
c, _ = s.accept()
c.sendall(socket.gethostname().encode())
" &
      srun -N1 -n1 -w node2 --overlap bash -c "
for try in \$(seq 100); do
  { exec 3<>/dev/tcp/node1/7311; } 2>/dev/null && break
  sleep 0.1
done
echo \"\$(hostname) reached \$(cat <&3)\""
      rc=$?; wait; exit $rc' "$python" 2>&1) || die "TCP from node2 to node1 failed: $out"
    [[ $out == *"node2 reached node1"* ]] || die "TCP from node2 to node1 by name: got '$out'"
    echo "ok: a step on node2 reached a TCP server step on node1 by name ($(seconds_since "$t0") s)"
  else
    echo "skipped: TCP between nodes (no python3 for the server)"
  fi

  t0=$(now_ms)
  out=$(sl 60 srun -l -n1 hostname : -n1 hostname | sort | tr '\n' ' ')
  [[ $out =~ ^0:\ node[0-9]+\ 1:\ node[0-9]+\ $ ]] || die "heterogeneous srun printed '$out'"
  echo "ok: heterogeneous srun -n1 : -n1 ran on $out($(seconds_since "$t0") s)"

  # Requeue of a batch job that has ended (with exit code 3): it runs again, on its own.
  local runs=$D/run/selftest-runs.$$
  jid=$(sl 10 sbatch --parsable -N1 -o /dev/null --wrap "echo run >> $runs; exit 3")
  wait_for 20 lines_are "$runs" 1 || die "batch job $jid never ran"
  wait_for 20 job_state_is "$jid" FAILED || die "batch job $jid did not end FAILED: $(job_line "$jid")"
  t0=$(now_ms)
  sl 10 scontrol requeue "$jid" || die "scontrol requeue $jid failed"
  wait_for $((CRED_EXPIRE + 30)) lines_are "$runs" 2 ||
    die "requeued job $jid did not run again: $(job_line "$jid")"
  rm -f "$runs"
  echo "ok: scontrol requeue of ended job $jid ran it again after $(seconds_since "$t0") s"

  # link-down cuts a node off the controller; link-up restores it.
  local probe="exec 3<>/dev/tcp/$CTL_IP/6817"
  "$0" node-exec "$n" timeout 3 bash -c "$probe" || die "node$n cannot reach slurmctld at $CTL_IP:6817"
  "$0" link-down "$n"
  ! "$0" node-exec "$n" timeout 2 bash -c "$probe" 2>/dev/null || die "node$n still reaches slurmctld after link-down"
  "$0" link-up "$n"
  wait_for 10 "$0" node-exec "$n" timeout 2 bash -c "$probe" || die "node$n cannot reach slurmctld after link-up"
  echo "ok: link-down/link-up $n cut node$n off the controller and back"
  echo "selftest passed"
}

lines_are() { [ "$(wc -l <"$1" 2>/dev/null)" = "$2" ]; }   # lines_are FILE N
job_line() { timeout 10 "$0" exec scontrol show job -o "$1" 2>&1 || true; }
job_state_is() { [[ $(job_line "$1") == *" JobState=$2 "* ]]; }

case "${1:-}" in
  up) cmd_up "${2:-}" ;;
  down) cmd_down ;;
  exec)
    shift
    (($# > 0)) || die "exec wants a command"
    [ -e "/run/netns/$CTL_NS" ] || die "the cluster $P is not up"
    ns_run "$CTL_NS" "$CTL_HOST" "$@" ;;
  node-exec)
    node_arg "${2:-}"
    (($# > 2)) || die "node-exec wants a node and a command"
    join_node_cgroup "$2"
    ns_run "$P-node$2" "node$2" "${@:3}" ;;
  link-down) cmd_link down "${2:-}" ;;
  link-up) cmd_link up "${2:-}" ;;
  shape) shift && cmd_shape "$@" ;;
  cut) cmd_cut "${2:-}" "${3:-}" ;;
  throttle) cmd_throttle "${2:-}" "${3:-}" ;;
  unthrottle) cmd_unthrottle "${2:-}" ;;
  status) cmd_status ;;
  check) cmd_check ;;
  selftest) cmd_selftest ;;
  *) usage ;;
esac
