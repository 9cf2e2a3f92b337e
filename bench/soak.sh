#!/usr/bin/env bash
# The soak test (not in CI): `rlx tune` of bench/soak-appo.yaml (APPO, PBT, two trials of 2
# learner ranks each) with WORKERS rollout workers for DURATION seconds, while workers, learner
# ranks and the tuner are SIGKILLed on a schedule, the output filesystem fills up once and the
# learner ranks' link is cut once; then a report that nothing was lost (bench/soak.py says what
# each check is). One JSON line per check, then {"bench": "soak", ..., "nothing_lost": ...}.
#   bench/soak.sh [DURATION_S] [WORKERS] [DISK_MIB]     (defaults 7200 64 2048; root)
# The run lives in its own network namespace (its loopback is the link that is cut) and writes
# to a DISK_MIB tmpfs (the disk that fills). RLX (env) names the executable (default build/rlx);
# SOAK_KEEP=1 keeps the work folder. Exit status 0 when nothing was lost.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-7200} workers=${2:-64} disk_mib=${3:-2048}
rlx=$(realpath "${RLX:-build/rlx}")
[ "$(id -u)" = 0 ] || { echo "bench/soak.sh: run it as root (a network namespace and a tmpfs)" >&2; exit 2; }
work=$(mktemp -d /tmp/rlx-soak-XXXXXX)
ns=rlx-soak-$$
cleanup() {
  ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
  [ -n "${SOAK_KEEP:-}" ] && cp -a "$work/out" "$work/out.kept" 2>/dev/null
  umount "$work/out" 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
  [ -n "${SOAK_KEEP:-}" ] && echo "bench/soak.sh: kept $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/out"
mount -t tmpfs -o "size=${disk_mib}m" rlx-soak "$work/out"
ip netns add "$ns"
ip netns exec "$ns" ip link set lo up
sed "s/^    num_workers: .*/    num_workers: $(( workers / 2 ))/" bench/soak-appo.yaml >"$work/soak-appo.yaml"
ip netns exec "$ns" python3 bench/soak.py --rlx "$rlx" --experiment "$work/soak-appo.yaml" --out "$work/out" --work "$work" \
  --duration "$duration" --workers "$workers" ${SOAK_ARGS:-}
