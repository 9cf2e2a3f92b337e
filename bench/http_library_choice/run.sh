#!/usr/bin/env bash
# Picks the HTTP library for `rlx serve`: Boost.Beast vs cpp-httplib vs CivetWeb,
# each as a minimal POST /act server (JSON in, JSON out, nlohmann::json), under wrk.
# Standalone: not part of the rlx build, nothing here is linked into rlx.
#
#   bench/http_library_choice/run.sh     (Debian bookworm: g++, libboost1.74-dev,
#                                         libcpp-httplib-dev, libcivetweb-dev,
#                                         nlohmann-json3-dev, wrk, python3)
#
# Builds the three servers with g++ -O2 into a temp dir, then for ROUNDS rounds, for each
# concurrency (1, 64, 256), runs each library in turn (beast httplib civetweb beast ...)
# so all three see the same background load. Every measurement starts a fresh server on
# a fresh port, warms it for 1 s, then runs wrk for DURATION over 127.0.0.1:
#   c=1:        wrk -t1 -c1   --latency
#   c=64, 256:  wrk -t2 -cN   --latency
# Each measurement also records:
#   rss_kb, threads   VmRSS and Threads from /proc/PID/status halfway through (hwm_kb: VmHWM
#                     after the run)
#   unaccepted        connections in the listen socket's accept queue halfway through:
#                     accepted by the kernel, not yet by the server
#   stalled           the server's connections that received nothing for >= 1 s (ss's
#                     lastrcv), halfway through. wrk sends the next request as soon as a reply
#                     arrives, so each of these has waited >= 1 s for its reply (unaccepted,
#                     or queued behind busy worker threads)
#   listen_drops      the kernel's TcpExt ListenDrops over the run: connection attempts dropped
#                     because a listen queue was full (system-wide; this bench is what opens
#                     connections)
#   cpu_s             the server's CPU time (utime + stime) over the run
# wrk's percentiles only cover answered requests: a server that leaves connections waiting
# shows a low p50, so read it next to `stalled`. wrk also "corrects" them for coordinated
# omission (synthetic samples for every reply later than 2x the mean interval), which
# inflates p90/p99 and the mean; the same rule for all three.
# Prints a RUN line per measurement, then the medians: a table, one JSON line per library
# and concurrency (SUMMARY {...}), and ratios against Beast (RATIO {...}).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}          # seconds per measured wrk run
CONCURRENCIES=${CONCURRENCIES:-"1 64 256"}
LIBS=${LIBS:-"beast httplib civetweb"}
BUILD_DIR=${BUILD_DIR:-$(mktemp -d /tmp/http_library_choice.XXXXXX)}
SKIP_BUILD=${SKIP_BUILD:-0}      # 1: use the *_server binaries already in BUILD_DIR
PORT=${PORT:-$((20000 + RANDOM % 12000))}  # each server gets the next port: CivetWeb does not
                                 # set SO_REUSEADDR, so a port still in TIME_WAIT is refused
raw="$BUILD_DIR/runs.jsonl"
: > "$raw"

echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ) cores=$(nproc) load=$(cut -d' ' -f1-3 /proc/loadavg)"
echo "g++=$(g++ -dumpfullversion) wrk=$(dpkg-query -W -f='${Version}' wrk)" \
     "boost=$(dpkg-query -W -f='${Version}' libboost1.74-dev)" \
     "cpp-httplib=$(dpkg-query -W -f='${Version}' libcpp-httplib-dev)" \
     "civetweb=$(dpkg-query -W -f='${Version}' libcivetweb-dev)"

if [[ "$SKIP_BUILD" != 1 ]]; then
  echo "building into $BUILD_DIR"
  CXX="g++ -std=c++17 -O2 -Wall -Wextra -pthread"
  $CXX -o "$BUILD_DIR/beast_server" "$here/beast_server.cc" &
  $CXX $(pkg-config --cflags cpp-httplib) -o "$BUILD_DIR/httplib_server" \
       "$here/httplib_server.cc" -lcpp-httplib &
  $CXX -o "$BUILD_DIR/civetweb_server" "$here/civetweb_server.cc" -lcivetweb &
  for job in $(jobs -p); do wait "$job"; done   # a failed build stops the script
fi

server_pid=
cleanup() { [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null || true; }
trap cleanup EXIT

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }   # utime + stime
status_kb() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
listen_drops() {   # TcpExt ListenDrops: a header line of names, then a line of values
  awk '$1 == "TcpExt:" {if (!n) {for (i = 2; i <= NF; i++) if ($i == "ListenDrops") n = i}
                        else print $n}' /proc/net/netstat
}

# measure LIB CONC ROUND: one fresh server, one warm-up, one measured wrk run.
measure() {
  local lib=$1 conc=$2 round=$3
  PORT=$((PORT + 1))
  local url="http://127.0.0.1:$PORT/act"
  "$BUILD_DIR/${lib}_server" "$PORT" > "$BUILD_DIR/${lib}.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 100); do
    curl -s -o /dev/null -X POST -d '{"observation":[0]}' "$url" && break
    sleep 0.05
  done
  kill -0 "$server_pid" 2>/dev/null || { echo "$lib did not start:"; cat "$BUILD_DIR/${lib}.log"; exit 1; }
  local threads=$(( conc == 1 ? 1 : 2 ))
  local wrk_args=(-t"$threads" -c"$conc" --latency -s "$here/post_act.lua" "$url")
  wrk -d1s "${wrk_args[@]}" > /dev/null        # warm-up, discarded

  local load ticks0 ticks1 drops0 drops1 rss nthreads hwm backlog stalled out
  load=$(cut -d' ' -f1 /proc/loadavg)
  ticks0=$(cpu_ticks "$server_pid")
  drops0=$(listen_drops)
  wrk -d"${DURATION}s" "${wrk_args[@]}" > "$BUILD_DIR/wrk.out" &
  local wrk_pid=$!
  sleep "$(awk -v d="$DURATION" 'BEGIN {print d / 2}')"
  rss=$(status_kb "$server_pid" VmRSS)
  nthreads=$(status_kb "$server_pid" Threads)
  backlog=$(ss -Hltn "sport = :$PORT" | awk '{print $2; exit}')
  stalled=$(ss -Htin state established "sport = :$PORT" |
            awk '{for (i = 1; i <= NF; i++) if ($i ~ /^lastrcv:/ && substr($i, 9) + 0 >= 1000) n++}
                 END {print n + 0}')
  wait "$wrk_pid"
  ticks1=$(cpu_ticks "$server_pid")
  drops1=$(listen_drops)
  hwm=$(status_kb "$server_pid" VmHWM)
  kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=

  out=$(sed -n 's/^WRKJSON //p' "$BUILD_DIR/wrk.out")
  [[ -n "$out" ]] || { echo "no wrk result for $lib c=$conc"; cat "$BUILD_DIR/wrk.out"; exit 1; }
  local line="{\"lib\":\"$lib\",\"conc\":$conc,\"round\":$round,\"load1\":$load,"
  line+="\"rss_kb\":$rss,\"hwm_kb\":$hwm,\"threads\":$nthreads,\"unaccepted\":${backlog:-0},\"stalled\":$stalled,"
  line+="\"listen_drops\":$((drops1 - drops0)),"
  line+="\"cpu_s\":$(awk -v t=$((ticks1 - ticks0)) -v hz="$(getconf CLK_TCK)" 'BEGIN {print t / hz}'),"
  line+="${out#\{}"
  echo "$line" >> "$raw"
  echo "RUN $line"
}

for round in $(seq "$ROUNDS"); do
  for conc in $CONCURRENCIES; do
    for lib in $LIBS; do
      measure "$lib" "$conc" "$round"
    done
  done
done

python3 - "$raw" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
libs = list(dict.fromkeys(r["lib"] for r in runs))
concs = sorted({r["conc"] for r in runs})
keys = ["rps", "mean_us", "p50_us", "p90_us", "p99_us", "max_us", "rss_kb", "hwm_kb",
        "threads", "unaccepted", "stalled", "listen_drops", "cpu_s", "load1"]
med = {}
for lib in libs:
    for c in concs:
        rs = [r for r in runs if r["lib"] == lib and r["conc"] == c]
        if not rs:
            continue
        m = {k: statistics.median(r[k] for r in rs) for k in keys}
        m["cpu_us_per_req"] = statistics.median(
            1e6 * r["cpu_s"] / max(r["requests"], 1) for r in rs)
        m["errors"] = sum(r[k] for r in rs for k in r if k.startswith("err_"))
        m["runs"] = len(rs)
        med[lib, c] = m

print("\nmedians over rounds (latency in us; stalled, unaccepted, RSS, threads: mid-run; "
      "drops: ListenDrops over the run; CPU us per request):")
print(f"{'lib':15} {'conc':>4} {'req/s':>7} {'p50':>6} {'p90':>6} {'p99':>7} {'stall':>5} "
      f"{'unacc':>5} {'drops':>5} {'rss_kB':>6} {'hwm_kB':>6} {'thr':>4} {'cpu/req':>7} "
      f"{'errs':>4} {'load1':>5}")
for (lib, c), m in med.items():
    print(f"{lib:15} {c:>4} {m['rps']:>7.0f} {m['p50_us']:>6.0f} {m['p90_us']:>6.0f} "
          f"{m['p99_us']:>7.0f} {m['stalled']:>5.0f} {m['unaccepted']:>5.0f} "
          f"{m['listen_drops']:>5.0f} "
          f"{m['rss_kb']:>6.0f} {m['hwm_kb']:>6.0f} {m['threads']:>4.0f} "
          f"{m['cpu_us_per_req']:>7.1f} {m['errors']:>4} {m['load1']:>5.2f}")
print()
for (lib, c), m in med.items():
    print("SUMMARY " + json.dumps({"lib": lib, "conc": c,
                                   **{k: round(v, 2) for k, v in m.items()}}))
if "beast" in libs:
    print()
    for (lib, c), m in med.items():
        b = med.get(("beast", c))
        if lib == "beast" or b is None:
            continue
        ratio = lambda k: round(m[k] / b[k], 2) if b[k] else None
        print("RATIO " + json.dumps({"lib": lib, "vs": "beast", "conc": c,
                                     "rps": ratio("rps"), "p50_us": ratio("p50_us"),
                                     "p99_us": ratio("p99_us"), "rss_kb": ratio("rss_kb"),
                                     "cpu_us_per_req": ratio("cpu_us_per_req")}))
PY
echo "raw runs: $raw"
