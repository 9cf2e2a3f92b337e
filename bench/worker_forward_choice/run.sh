#!/usr/bin/env bash
# Measures how the rollout workers' torch-free forward for convolutions and recurrent cores
# should be built: hand kernels (models/product_block.h + im2col) vs oneDNN vs XNNPACK.
# Standalone: not part of the rlx build, nothing here is linked into rlx.
#
#   bench/worker_forward_choice/run.sh            (needs g++, libdnnl-dev, libxnnpack-dev,
#                                                 libpthreadpool-dev; Debian bookworm)
#
# Builds into a temp dir (build.sh), then prints key=value lines:
#   version / size lines; check lines (max |hand - library| of one forward's outputs);
#   time lines (microseconds per forward step, median of REPEATS repeats, pinned to CPU);
#   mem lines (RSS and PSS in kB after one forward, N_PROCS processes of the same program
#   alive at once: median over them); start lines (exec to exit of a trivial main, median of
#   START_RUNS); ratio lines (hand / library: above 1 means the library is faster or smaller).
# Timed batches wait for a quiet machine: 1-minute load below LOAD_MAX, polled every 30 s, for
# at most WAIT_MAX seconds over the whole run (then measured anyway; the line says gave_up=1).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
REPEATS=${REPEATS:-7}
N_PROCS=${N_PROCS:-8}
START_RUNS=${START_RUNS:-30}
CPU=${CPU:-1}
LOAD_MAX=${LOAD_MAX:-0.7}
WAIT_MAX=${WAIT_MAX:-2400}
MODELS=${MODELS:-"nature minatar lstm gru"}
BATCHES=${BATCHES:-"8 64"}
BACKENDS="hand hand_fma hand_t6 onednn xnnpack"
export OMP_NUM_THREADS=1  # the worker is single-threaded; libdnnl (Debian) uses OpenMP

tmp=$(mktemp -d /tmp/worker_forward_choice.XXXXXX)
holders=()
cleanup() {
  for p in "${holders[@]:-}"; do [[ -n "$p" ]] && kill "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

total_waited=0  # WAIT_MAX bounds the waiting of the whole run, not of each batch
wait_quiet() {  # $1: what is about to be timed
  local waited=0 load
  load=$(cut -d' ' -f1 /proc/loadavg)
  while awk -v l="$load" -v m="$LOAD_MAX" 'BEGIN { exit !(l >= m) }'; do
    if (( total_waited >= WAIT_MAX )); then
      echo "quiet what=$1 waited_s=$waited load1=$load gave_up=1"
      return
    fi
    sleep 30
    waited=$((waited + 30))
    total_waited=$((total_waited + 30))
    load=$(cut -d' ' -f1 /proc/loadavg)
  done
  echo "quiet what=$1 waited_s=$waited load1=$load gave_up=0"
}

echo "# building into $tmp"
"$here/build.sh" "$tmp" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
cd "$tmp"

# --- versions and sizes -------------------------------------------------------------------
for p in libdnnl2 libdnnl-dev libxnnpack0 libxnnpack-dev libpthreadpool0 libcpuinfo0; do
  echo "version package=$p version=$(dpkg-query -W -f='${Version}' "$p" 2>/dev/null || echo missing)"
done
echo "version cpu=\"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')\"" \
  "flags=$(grep -m1 -o -w -E 'avx512f|avx2|fma' /proc/cpuinfo | sort -u | tr '\n' ',' | sed 's/,$//')"
lib_size() { stat -L -c %s "$(ldconfig -p | awk -v n="$1" '$1 == n { print $NF; exit }')"; }
for so in libdnnl.so.2 libXNNPACK.so.0 libpthreadpool.so.0 libcpuinfo.so.0 libgomp.so.1 libOpenCL.so.1; do
  echo "size object=$so bytes=$(lib_size "$so")"
done
for b in fwd_hand fwd_hand_fma fwd_onednn fwd_xnnpack start_none start_onednn start_xnnpack; do
  echo "size object=$b bytes=$(stat -c %s "$b") stripped_bytes=$(stat -c %s "$b.stripped")" \
    "needed=$(readelf -d "$b" | awk '/NEEDED/ { gsub(/[][]/, "", $NF); printf "%s%s", sep, $NF; sep = "," }')"
done
# Everything a library-linked worker maps on top of the hand one (library + its own deps).
echo "size object=onednn_closure bytes=$(( $(lib_size libdnnl.so.2) + $(lib_size libgomp.so.1) + $(lib_size libOpenCL.so.1) ))"
echo "size object=xnnpack_closure bytes=$(( $(lib_size libXNNPACK.so.0) + $(lib_size libpthreadpool.so.0) + $(lib_size libcpuinfo.so.0) ))"

# --- numerical agreement ------------------------------------------------------------------
for m in $MODELS; do
  for k in $BATCHES; do
    for b in $BACKENDS; do ./fwd_$b dump "$m" "$k" "out_${b}_${m}_$k.bin"; done
    for b in hand_fma hand_t6 onednn xnnpack; do
      echo "check model=$m k=$k a=hand b=$b $(./compare "out_hand_${m}_$k.bin" "out_${b}_${m}_$k.bin")"
    done
    echo "check model=$m k=$k a=hand_fma b=xnnpack $(./compare "out_hand_fma_${m}_$k.bin" "out_xnnpack_${m}_$k.bin")"
  done
done
WFC_VERBOSE=1 ./fwd_onednn dump nature 64 /dev/null 2>&1 | sed 's/^/info /'
WFC_VERBOSE=1 ./fwd_onednn dump lstm 64 /dev/null 2>&1 | sed 's/^/info /'
WFC_VERBOSE=1 ./fwd_onednn dump gru 64 /dev/null 2>&1 | sed 's/^/info /'

# --- time per step --------------------------------------------------------------------------
declare -A us
for m in $MODELS; do
  wait_quiet "time_$m"
  for k in $BATCHES; do
    for b in $BACKENDS; do
      line=$(taskset -c "$CPU" ./fwd_$b bench "$m" "$k" "$REPEATS")
      echo "time $line load1=$(cut -d' ' -f1 /proc/loadavg)"
      us[$b,$m,$k]=$(sed -n 's/.*us_median=\([0-9.]*\).*/\1/p' <<<"$line")
    done
  done
done

# --- memory with N_PROCS processes alive --------------------------------------------------
declare -A pss rss
for m in nature minatar lstm; do
  for b in hand onednn xnnpack; do
    holders=()
    rm -f ready.*
    for i in $(seq 1 "$N_PROCS"); do
      ./fwd_$b hold "$m" 64 "ready.$i" &
      holders+=($!)
    done
    for _ in $(seq 1 600); do
      [[ $(ls ready.* 2>/dev/null | wc -l) -eq $N_PROCS ]] && break
      sleep 0.1
    done
    sleep 0.5
    vals=$(for p in "${holders[@]}"; do
      awk '/^Rss:/ { r = $2 } /^Pss:/ { p = $2 } /^Pss_Anon:/ { a = $2 } /^Pss_File:/ { f = $2 }
           END { print r, p, a, f }' "/proc/$p/smaps_rollup"
    done)
    for p in "${holders[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    holders=()
    med() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
    r=$(awk '{ print $1 }' <<<"$vals" | med); p=$(awk '{ print $2 }' <<<"$vals" | med)
    a=$(awk '{ print $3 }' <<<"$vals" | med); f=$(awk '{ print $4 }' <<<"$vals" | med)
    echo "mem backend=$b model=$m k=64 procs=$N_PROCS rss_kb=$r pss_kb=$p pss_anon_kb=$a pss_file_kb=$f"
    pss[$b,$m]=$p
    rss[$b,$m]=$r
  done
done

# --- process start ----------------------------------------------------------------------------
wait_quiet start
declare -A start
for s in start_none start_onednn start_onednn_init start_xnnpack start_xnnpack_init; do
  line=$(taskset -c "$CPU" ./spawn_time "$START_RUNS" "./$s")
  echo "start program=$s $line"
  start[$s]=$(sed -n 's/.*us_median=\([0-9.]*\).*/\1/p' <<<"$line")
done

# --- ratios hand / library ----------------------------------------------------------------------
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "nan" }'; }
for m in $MODELS; do
  for k in $BATCHES; do
    for lib in onednn xnnpack; do
      echo "ratio what=time model=$m k=$k hand/$lib=$(ratio "${us[hand,$m,$k]}" "${us[$lib,$m,$k]}")" \
        "hand_fma/$lib=$(ratio "${us[hand_fma,$m,$k]}" "${us[$lib,$m,$k]}")"
    done
  done
done
for m in nature minatar lstm; do
  for lib in onednn xnnpack; do
    echo "ratio what=mem model=$m k=64 pss hand/$lib=$(ratio "${pss[hand,$m]}" "${pss[$lib,$m]}")" \
      "rss hand/$lib=$(ratio "${rss[hand,$m]}" "${rss[$lib,$m]}")"
  done
done
for lib in onednn onednn_init xnnpack xnnpack_init; do
  echo "ratio what=start none/$lib=$(ratio "${start[start_none]}" "${start[start_$lib]}")"
done

# --- side-by-side table ---------------------------------------------------------------------------
echo
printf '%-8s %3s %12s %12s %12s %12s %12s %10s %10s\n' model K hand_us hand_fma_us hand_t6_us onednn_us xnnpack_us hand/onednn hand/xnn
for m in $MODELS; do
  for k in $BATCHES; do
    printf '%-8s %3s %12s %12s %12s %12s %12s %10s %10s\n' "$m" "$k" "${us[hand,$m,$k]}" "${us[hand_fma,$m,$k]}" \
      "${us[hand_t6,$m,$k]}" \
      "${us[onednn,$m,$k]}" "${us[xnnpack,$m,$k]}" "$(ratio "${us[hand,$m,$k]}" "${us[onednn,$m,$k]}")" \
      "$(ratio "${us[hand,$m,$k]}" "${us[xnnpack,$m,$k]}")"
  done
done
printf '%-8s %10s %10s %10s %10s %10s %10s\n' model hand_pss onednn_pss xnn_pss hand_rss onednn_rss xnn_rss
for m in nature minatar lstm; do
  printf '%-8s %10s %10s %10s %10s %10s %10s\n' "$m" "${pss[hand,$m]}" "${pss[onednn,$m]}" "${pss[xnnpack,$m]}" \
    "${rss[hand,$m]}" "${rss[onednn,$m]}" "${rss[xnnpack,$m]}"
done
