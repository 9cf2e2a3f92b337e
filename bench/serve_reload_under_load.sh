#!/usr/bin/env bash
# `rlx serve TRIAL` swapping in the trial's next checkpoints while `rlx bench serve` keeps 64
# connections busy: the issue's "a reload under load loses no request". Trains CartPole PPO with a
# checkpoint every 10 iterations, holds back its last two checkpoints, serves the trial (watched
# every 200 ms), and lands the held checkpoints (atomic renames, as `rlx train` writes them) 3 s and
# 6 s into a 10 s closed-loop run. Prints the load's JSON summary, the server's reload counters and
# its exit status (0: SIGTERM drained it).
#   bench/serve_reload_under_load.sh [SECONDS] [CONCURRENCY] [PROTOCOL]
set -euo pipefail
seconds=${1:-10} concurrency=${2:-64} protocol=${3:-http-binary}
cd "$(dirname "$0")/.."
rlx=build/rlx
work=$(mktemp -d /tmp/rlx-serve-reload-XXXXXX)
server_pid=""
trap '[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"' EXIT

"$rlx" train experiments/cartpole-ppo.yaml --workers 0 --seed 0 --set checkpoint_freq=10 \
  --set stop.timesteps_total=62000 --trial-name t --output "$work/runs" -q >&2 || [ $? -eq 3 ]
trial=$work/runs/cartpole-ppo/t
mapfile -t checkpoints < <(ls -d "$trial"/checkpoints/checkpoint_*)
held=("${checkpoints[@]: -2}")
mkdir "$work/held"
for c in "${held[@]}"; do mv "$c" "$work/held/"; done
echo "serving $(ls "$trial/checkpoints" | tail -1); held back: ${held[*]##*/}" >&2

"$rlx" serve "$trial" --port 0 --ready-file "$work/ready.json" --watch-interval-ms 200 > "$work/serve.log" 2>&1 &
server_pid=$!
for _ in $(seq 600); do [ -s "$work/ready.json" ] && break; sleep 0.1; done
port=$(python3 -c "import json; print(json.load(open('$work/ready.json'))['http_port'])")

"$rlx" bench serve --connect "127.0.0.1:$port" t --protocols "$protocol" --concurrency "$concurrency" \
  --seconds "$seconds" --warmup 0 --repeats 1 > "$work/load.jsonl" &
load_pid=$!
sleep 3; mv "$work/held/${held[0]##*/}" "$trial/checkpoints/"; echo "landed ${held[0]##*/}" >&2
sleep 3; mv "$work/held/${held[1]##*/}" "$trial/checkpoints/"; echo "landed ${held[1]##*/}" >&2
wait "$load_pid"
grep -v '"summary"' "$work/load.jsonl" | tail -1
curl -s "127.0.0.1:$port/metrics" | grep -E '^rlx_serve_(reloads_total|model_version|responses_total)'
kill -TERM "$server_pid"
status=0
wait "$server_pid" || status=$?
server_pid=""
echo "rlx serve exit status after SIGTERM: $status"
tail -2 "$work/serve.log"
