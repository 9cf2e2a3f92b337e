#!/usr/bin/env bash
# build.sh OUT_DIR: builds the measurement programs into OUT_DIR with g++ -O3 -std=c++17 (the
# flags models/network_kernel.cc gets: -fno-trapping-math, no -march: instruction sets come
# from target_clones, see clones.h). Needs libdnnl-dev and libxnnpack-dev (+ libpthreadpool-dev).
set -euo pipefail
out=${1:?usage: build.sh OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
mkdir -p "$out"
CXX=${CXX:-g++}
flags=(-O3 -std=c++17 -fno-trapping-math -Wno-psabi -Wall -Wextra -I"$repo")
cd "$here"
$CXX "${flags[@]}" -c cell_math.cc -o "$out/cell_math.o"
$CXX "${flags[@]}" main.cc hand.cc "$out/cell_math.o" -o "$out/fwd_hand"
$CXX "${flags[@]}" -DWFC_FMA main.cc hand.cc "$out/cell_math.o" -o "$out/fwd_hand_fma"
$CXX "${flags[@]}" -DWFC_TILE6 main.cc hand.cc "$out/cell_math.o" -o "$out/fwd_hand_t6"
$CXX "${flags[@]}" main.cc onednn.cc -ldnnl -o "$out/fwd_onednn"
$CXX "${flags[@]}" main.cc xnnpack.cc "$out/cell_math.o" -lXNNPACK -lpthreadpool -o "$out/fwd_xnnpack"
$CXX "${flags[@]}" compare.cc -o "$out/compare"
$CXX "${flags[@]}" spawn_time.cc -o "$out/spawn_time"
$CXX -O2 start_none.cc -o "$out/start_none"
$CXX -O2 start_onednn.cc -ldnnl -o "$out/start_onednn"
$CXX -O2 -DWFC_INIT start_onednn.cc -ldnnl -o "$out/start_onednn_init"
$CXX -O2 start_xnnpack.cc -lXNNPACK -lpthreadpool -o "$out/start_xnnpack"
$CXX -O2 -DWFC_INIT start_xnnpack.cc -lXNNPACK -lpthreadpool -o "$out/start_xnnpack_init"
for b in fwd_hand fwd_hand_fma fwd_hand_t6 fwd_onednn fwd_xnnpack start_none start_onednn start_xnnpack; do
  cp "$out/$b" "$out/$b.stripped" && strip "$out/$b.stripped"
done
