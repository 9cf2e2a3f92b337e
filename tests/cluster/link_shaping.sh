# shellcheck shell=bash
# tests/cluster/link_shaping.sh: slurm_cluster.sh's shape, cut, throttle and unthrottle, sourced
# by it (it uses P, D, CTL_NS, die, node_arg, wait_for, alive, none_alive and kill_and_wait
# from there).
#
# Node I's link is the veth pair vnodeI (on the controller's bridge br0) <-> eth0 (in the node).
# `shape` gives it a delay, a jitter and a loss, the same each way, with one of two shapers:
#  - netem, where the kernel has sch_netem: a root qdisc on vnodeI shapes what goes to the node,
#    one on the node's eth0 what comes from it;
#  - rlx_link_emulator (link_emulator.cc) otherwise: this machine's kernel, and CI's, have no
#    sch_netem. On first use vnodeI leaves the bridge, a new veth pair enodeI <-> bnodeI joins it
#    by bnodeI, and the emulator forwards frames between vnodeI and enodeI:
#
#        node's eth0 <-> vnodeI <-[rlx_link_emulator]-> enodeI <-> bnodeI <-> br0
#
#    It runs in the controller's namespace, so that `down` ends it with everything else there,
#    logs to DIR/log/link-nodeI.log (its counts when it ends), and takes new settings through
#    DIR/run/link-nodeI.ctl and a SIGHUP (it deletes the file once they apply).
# RLX_SLURM_SHAPER=netem|rlx_link_emulator picks one; otherwise netem is tried once per cluster.
# Either way, link-down/link-up still unplug vnodeI, and a frame between two shaped nodes
# crosses both links: their delays add up.
# SC2015 and SC2016 as in slurm_cluster.sh: `A && B || die` is meant, and single-quoted scripts
# are expanded by the shell that runs them.
# shellcheck disable=SC2015,SC2016

# The emulator binary: RLX_LINK_EMULATOR (ctest sets it), else the one in the checkout's build/.
link_emulator() {
  echo "${RLX_LINK_EMULATOR:-$(cd "$(dirname "$0")/../.." && pwd)/build/tests/cluster/rlx_link_emulator}"
}

shaper() {   # netem or rlx_link_emulator
  if [ -n "${RLX_SLURM_SHAPER:-}" ]; then
    [[ $RLX_SLURM_SHAPER =~ ^(netem|rlx_link_emulator)$ ]] ||
      die "RLX_SLURM_SHAPER='$RLX_SLURM_SHAPER': want netem or rlx_link_emulator"
    echo "$RLX_SLURM_SHAPER"
  elif [ -s "$D/run/shaper" ]; then
    cat "$D/run/shaper"
  elif tc -n "$CTL_NS" qdisc add dev lo root netem delay 0ms 2>/dev/null; then
    tc -n "$CTL_NS" qdisc del dev lo root
    echo netem | tee "$D/run/shaper"
  else   # "Specified qdisc kind is unknown"
    echo rlx_link_emulator | tee "$D/run/shaper"
  fi
}

# parse_shape ARGS...: shape's options, checked, into SHAPE (the emulator's syntax, every
# setting named: a new shape replaces the old one) and NETEM (tc's).
parse_shape() {
  local delay=0 jitter=0 loss=0 seed=
  while (($# > 0)); do
    case $1 in
      --delay-ms | --jitter-ms | --loss | --seed) (($# >= 2)) || die "shape: $1 wants a value" ;;
      *) die "shape: unknown option '$1' (want --delay-ms MS, --jitter-ms MS, --loss PERCENT, --seed N, or off)" ;;
    esac
    [[ $2 =~ ^[0-9]+(\.[0-9]+)?%?$ ]] || die "shape: $1 '$2': want a number (ms; for --loss, percent)"
    case $1 in
      --delay-ms) delay=$2 ;;
      --jitter-ms) jitter=$2 ;;
      --loss) loss=${2%\%} ;;
      --seed) seed=$2 ;;
    esac
    shift 2
  done
  awk -v l="$loss" 'BEGIN {exit !(l <= 100)}' || die "shape: --loss $loss: want a percent, at most 100"
  [[ $seed =~ ^[0-9]*$ ]] || die "shape: --seed '$seed': want a whole number"
  SHAPE=(--delay-ms "$delay" --jitter-ms "$jitter" --loss "$loss")
  [ -z "$seed" ] || SHAPE+=(--seed "$seed")
  NETEM=(delay "${delay}ms" "${jitter}ms" loss "$loss%")   # netem has no seed before iproute2 6.7
}

netem_apply() {   # netem_apply I NETEM_ARGS...: on both ends of node I's link
  local i=$1
  shift
  tc -n "$CTL_NS" qdisc replace dev "vnode$i" root netem "$@" &&
    tc -n "$P-node$i" qdisc replace dev eth0 root netem "$@" ||
    die "tc qdisc replace ... netem $* failed on node$i's link"
}

emu_pid() {   # emu_pid I: prints the pid of node I's emulator; fails if none is running
  local pid
  pid=$(cat "$D/run/link-node$1.pid" 2>/dev/null) && alive "$pid" && echo "$pid"
}

ready_lines() {   # ready_lines LOG: how many times an emulator logged "ready" there
  local n
  n=$(grep -sc ' ready: ' "$1") || true
  echo "${n:-0}"
}
more_ready() { (($(ready_lines "$1") > $2)); }   # more_ready LOG N: more than N

emu_start() {   # emu_start I OPTIONS...: rewire node I's link through a new emulator
  local i=$1 exe log=$D/log/link-node$1.log ready
  shift
  exe=$(link_emulator)
  [ -x "$exe" ] || die "no rlx_link_emulator at $exe: build it (ninja -C build rlx_link_emulator) or set RLX_LINK_EMULATOR"
  ip -n "$CTL_NS" link del "enode$i" 2>/dev/null || true   # an emulator that died left it
  ip -n "$CTL_NS" link add "enode$i" type veth peer name "bnode$i"
  ip -n "$CTL_NS" link set "bnode$i" master br0 up
  ip -n "$CTL_NS" link set "enode$i" up
  ready=$(ready_lines "$log")
  # nsenter execs the emulator, so $! is its pid; SLURM_CONF in its environment shows it to
  # lib.sh's cluster_leftovers. All of its output goes to the log: a caller's $(...) returns.
  SLURM_CONF=$D/slurm.conf nsenter --net="/run/netns/$CTL_NS" "$exe" "$@" --control "$D/run/link-node$i.ctl" \
    "vnode$i" "enode$i" </dev/null >>"$log" 2>&1 &
  echo $! >"$D/run/link-node$i.pid"
  wait_for 5 more_ready "$log" "$ready" ||
    die "rlx_link_emulator for node$i did not start: $(tail -n 3 "$log")"
  ip -n "$CTL_NS" link set "vnode$i" nomaster   # from now on only the emulator joins it to br0
}

emu_control() {   # emu_control I OPTIONS...: new settings for node I's emulator, applied on return
  local i=$1 ctl=$D/run/link-node$1.ctl pid
  shift
  pid=$(emu_pid "$i") || die "node$i's rlx_link_emulator is not running (see $D/log/link-node$i.log)"
  rm -f "$ctl.rejected"
  echo "$*" >"$ctl.tmp" && mv "$ctl.tmp" "$ctl"
  kill -HUP "$pid"
  wait_for 5 test ! -e "$ctl" || die "node$i's rlx_link_emulator did not take $ctl within 5 s"
  [ ! -e "$ctl.rejected" ] || die "node$i's rlx_link_emulator rejected '$*': $(tail -n 1 "$D/log/link-node$i.log")"
}

stop_pids() {   # stop_pids PID...: SIGTERM (the emulator prints its counts), SIGKILL after 3 s
  (($# > 0)) || return 0
  kill -TERM "$@" 2>/dev/null || true
  wait_for 3 none_alive "$@" || kill_and_wait "$@"
}

emu_stop() {   # emu_stop I: node I's link back on the bridge, as `up` made it
  local i=$1
  # shellcheck disable=SC2046
  stop_pids $(emu_pid "$i" || true)
  rm -f "$D/run/link-node$i".{pid,ctl,ctl.rejected}
  ip -n "$CTL_NS" link del "enode$i" 2>/dev/null || true   # and its peer bnodeI
  ip -n "$CTL_NS" link set "vnode$i" master br0
}

shaped_by() { cut -d' ' -f1 "$D/run/shape-node$1" 2>/dev/null; }   # shaped_by I: its shaper, if any

cmd_shape() {   # cmd_shape I off | cmd_shape I [OPTIONS...]
  local i=${1:-} kind
  node_arg "$i"
  shift
  if [ "${1:-}" = off ]; then
    (($# == 1)) || die "shape $i off takes nothing more"
    case $(shaped_by "$i") in
      netem)
        tc -n "$CTL_NS" qdisc del dev "vnode$i" root 2>/dev/null || true
        tc -n "$P-node$i" qdisc del dev eth0 root 2>/dev/null || true ;;
      rlx_link_emulator) emu_stop "$i" ;;
    esac
    rm -f "$D/run/shape-node$i"
    echo "off: node$i's link is not shaped"
    return
  fi
  parse_shape "$@"
  kind=$(shaped_by "$i") || true
  [ -n "$kind" ] || kind=$(shaper)
  if [ "$kind" = netem ]; then
    netem_apply "$i" "${NETEM[@]}"
  elif emu_pid "$i" >/dev/null; then
    emu_control "$i" "${SHAPE[@]}"
  else
    emu_start "$i" "${SHAPE[@]}"
  fi
  echo "$kind ${SHAPE[*]}" >"$D/run/shape-node$i"
  echo "$kind: node$i's link, each way: ${SHAPE[*]}"
}

cmd_cut() {   # cmd_cut I SECONDS: node I's link drops everything for SECONDS, from now
  local i=${1:-} seconds=${2:-} self
  node_arg "$i"
  [[ $seconds =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "cut wants a node and seconds, e.g. cut 2 3 (not '$seconds')"
  [ -n "$(shaped_by "$i")" ] || cmd_shape "$i" >/dev/null   # an unshaped link: put a shaper in
  if [ "$(shaped_by "$i")" = rlx_link_emulator ]; then
    emu_control "$i" --cut-ms "$(awk -v s="$seconds" 'BEGIN {printf "%d", s * 1000}')"
  else
    netem_apply "$i" loss 100%
    # The restore waits in the controller's namespace, so that a `down` before it ends it. It
    # applies the link's shape as it is then (none after a `shape I off`).
    self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
    SLURM_CONF=$D/slurm.conf nsenter --net="/run/netns/$CTL_NS" sh -c \
      'sleep "$1" && [ -e "$2" ] && exec "$3" shape "$4" $(cut -d" " -f2- "$2")' \
      sh "$seconds" "$D/run/shape-node$i" "$self" "$i" </dev/null >>"$D/log/link-node$i.log" 2>&1 &
  fi
  echo "$(shaped_by "$i"): node$i's link cut for $seconds s"
}

# --- a straggler host ------------------------------------------------------------------------
# throttle I PERCENT: node I's processes get at most PERCENT % of one CPU between them (CFS
# bandwidth control: a cpu cgroup whose quota is PERCENT ms of every 100 ms). Every process in
# the node's network namespace (slurmd, its slurmstepd's and job tasks) moves into it, and the
# ones slurmd starts later are born in it: a child starts in its parent's cgroup, and this
# slurmd moves no task anywhere (proctrack/linuxproc, task/none). node-exec joins it too.
# cgroup v1's cpu controller where it is mounted (this machine, CI), else cgroup v2's.

cpu_cgroup_root() {
  local root
  if [ -e /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then echo /sys/fs/cgroup/cpu && return; fi
  for root in /sys/fs/cgroup /sys/fs/cgroup/unified; do
    grep -qw cpu "$root/cgroup.controllers" 2>/dev/null && echo "$root" && return
  done
  return 1
}

node_cgroup() { echo "$(cpu_cgroup_root 2>/dev/null || echo /nonexistent)/rlx-$P-node$1"; }

join_node_cgroup() {   # join_node_cgroup I: this shell (and what it execs) into node I's, if any
  local cg
  cg=$(node_cgroup "$1")
  [ ! -d "$cg" ] || echo $$ >"$cg/cgroup.procs"
}

cmd_throttle() {
  local i=${1:-} percent=${2:-} root cg pid
  node_arg "$i"
  [[ $percent =~ ^[1-9][0-9]*$ ]] && ((percent <= 100 * $(nproc))) ||
    die "throttle wants a node and a percent of one CPU, 1..$((100 * $(nproc))) (not '$percent')"
  root=$(cpu_cgroup_root) || die "no cpu cgroup controller (v1 at /sys/fs/cgroup/cpu, or cgroup v2's)"
  cg=$root/rlx-$P-node$i
  mkdir -p "$cg"
  if [ -e "$cg/cpu.cfs_quota_us" ]; then
    echo 100000 >"$cg/cpu.cfs_period_us"
    echo $((percent * 1000)) >"$cg/cpu.cfs_quota_us"
  else
    grep -qw cpu "$root/cgroup.subtree_control" || echo +cpu >"$root/cgroup.subtree_control"
    echo "$((percent * 1000)) 100000" >"$cg/cpu.max"
  fi
  for pid in $(ip netns pids "$P-node$i"); do
    echo "$pid" >"$cg/cgroup.procs" 2>/dev/null || true   # (gone since)
  done
  echo "node$i: its processes get at most $percent % of one CPU ($cg)"
}

try_release() {   # try_release DIR: its processes to the parent cgroup, DIR removed; fails if not yet
  local pid
  while read -r pid; do
    echo "$pid" >"$(dirname "$1")/cgroup.procs" 2>/dev/null || true
  done <"$1/cgroup.procs"
  rmdir "$1" 2>/dev/null
}
release_cgroup() {   # slurmd may fork while its processes move: try again, for 5 s at most
  wait_for 5 try_release "$1" || die "cannot remove cgroup $1: $(tr '\n' ' ' <"$1/cgroup.procs" 2>/dev/null)"
}

cmd_unthrottle() {
  local cg
  node_arg "${1:-}"
  cg=$(node_cgroup "$1")
  [ ! -d "$cg" ] || release_cgroup "$cg"
  echo "node$1: not throttled"
}

# shaping_down: before `down` kills the namespaces: the emulators end (printing their counts in
# their logs); after it, the cgroups go.
shaping_down() {
  local f pids=()
  for f in "$D"/run/link-node*.pid; do
    [ -e "$f" ] && pids+=("$(cat "$f")")
  done
  stop_pids "${pids[@]}"
}
throttle_down() {
  local cg
  for cg in "$(cpu_cgroup_root 2>/dev/null || echo /nonexistent)/rlx-$P-node"*; do
    [ ! -d "$cg" ] || release_cgroup "$cg"
  done
}
