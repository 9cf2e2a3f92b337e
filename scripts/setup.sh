#!/usr/bin/env bash
# Installs the Debian bookworm packages rlx needs (only when some are missing), then
# configures and builds rlx into build/. Idempotent; run as root (or with sudo available).
#   scripts/setup.sh [--build-dir DIR] [--build-type TYPE] [--no-tests] [--no-build]
set -euo pipefail

cd "$(dirname "$0")/.."
build_dir=build
build_type=Release
build_tests=ON
do_build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir="$2"; shift 2 ;;
    --build-type) build_type="$2"; shift 2 ;;
    --no-tests) build_tests=OFF; shift ;;
    --no-build) do_build=0; shift ;;
    -h|--help) sed -n '2,5p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done

packages=(
  g++ cmake ninja-build ccache pkg-config git
  libtorch-dev libopenblas0-pthread
  libmujoco-dev libqhull-dev libopengl-dev libgl-dev
  libzmq3-dev cppzmq-dev zlib1g-dev
  libboost-program-options-dev libboost-dev  # libboost-dev: Beast and Asio headers (rlx serve)
  catch2 libgloo-dev libyaml-cpp-dev nlohmann-json3-dev libssl-dev
  libspdlog-dev libprotobuf-dev protobuf-compiler python3-protobuf
  libcairo2-dev libavcodec-dev libavformat-dev libavutil-dev libswscale-dev libgif-dev
  libegl-dev libegl-mesa0 libgl1-mesa-dri fonts-dejavu-core
  python3-dev pybind11-dev
  slurmctld slurmd slurm-client munge iproute2 python3 python3-numpy
  curl  # tests/cli/serve_command_test.cc: a user's curl against `rlx serve`
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
  [ "${status:0:2}" = "ii" ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  "${sudo_cmd[@]}" apt-get update -q
  # munge's and slurm's postinst start their system daemons through invoke-rc.d. rlx's
  # cluster tests run daemons of their own (tests/cluster/slurm_cluster.sh), so a system
  # munged would only be a stray process (and in a container it is started outside any init).
  # Unless the machine already has a policy-rc.d, one that refuses (exit 101) stands in for
  # the install and goes right after it, or on exit if the install fails.
  own_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    own_policy=1
    trap '"${sudo_cmd[@]}" rm -f /usr/sbin/policy-rc.d' EXIT
    printf '#!/bin/sh\n# written by rlx scripts/setup.sh for one apt-get install\nexit 101\n' |
      "${sudo_cmd[@]}" install -m 755 /dev/stdin /usr/sbin/policy-rc.d
  fi
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
  if [ "$own_policy" = 1 ]; then
    "${sudo_cmd[@]}" rm -f /usr/sbin/policy-rc.d
    trap - EXIT
  fi
else
  echo "setup: all ${#packages[@]} packages present"
fi

[ "$do_build" = 1 ] || exit 0
# ccache keys on paths relative to the checkout, so every clone (CI's too) shares its hits.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi
if [ -f "$build_dir/CMakeCache.txt" ]; then generator=(); fi
cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE="$build_type" -DRLX_BUILD_TESTS="$build_tests"
cmake --build "$build_dir" -j "$(nproc)"
echo "setup: built $build_dir/rlx"
