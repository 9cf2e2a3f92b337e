#!/usr/bin/env bash
# Worker fleets across hosts, on the namespace Slurm of tests/cluster (3 nodes on this machine):
#   1. throughput with the fleet's 4 workers on 1 host (node2) against 2 hosts (node2, node3),
#      the learner on node1 (CartPole PPO, fixed 15 s of training per run, alternating A/B runs);
#   2. rank 0's scatter: 2 learner ranks on node1 and node2, the fleet on node3; the share of an
#      iteration that learner/scatter_s takes.
# Prints one JSON object per line: each run's median env_steps_per_s (rows after the 3rd), then
# the medians over runs and their ratio, and the scatter share.
#   bench/slurm_fleet_hosts.sh [RUNS]      (RLX_BIN: the rlx binary, default build/rlx; root)
# Every "host" here shares this machine's cores: the 2-host figure shows what the network path
# costs or saves, not what a second machine's CPUs add.
set -euo pipefail
RLX_SOURCE_DIR=$(cd "$(dirname "$0")/.." && pwd)
export RLX_BIN=${RLX_BIN:-$RLX_SOURCE_DIR/build/rlx}
export RLX_SLURM_PREFIX=${RLX_SLURM_PREFIX:-rlxbench}
runs=${1:-3}
source "$RLX_SOURCE_DIR/tests/cluster/lib.sh"
cluster_up 3
rlx_work_dir
rlx_fleet_keys
RLX_CLUSTER_TIMEOUT=120
experiment=$RLX_SOURCE_DIR/experiments/cartpole-ppo.yaml
endless=(--set stop.episode_return_mean=1000000 --set stop.timesteps_total=100000000 --pause-at time_total_s=15)

# median_column CSV COLUMN: the median of COLUMN over the rows after the 3rd.
median_column() {
  python3 - "$1" "$2" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))[3:]
print(statistics.median(float(r[sys.argv[2]]) for r in rows))
PY
}

# fleet_run NAME LEARNER_NODES RANKS WORKER_NODES WORKERS_PER_NODE: one run; prints its median.
fleet_run() {
  local name=$1 trial=runs/cartpole-ppo/$1
  cluster_exec srun -w "$2" -N"$3" -n"$3" "$RLX_BIN" train "$experiment" --workers 0 --bind tcp://0.0.0.0:5555 \
    --auth-keys keys --trial-name "$name" --quiet "${endless[@]}" >"$name.out" 2>&1 &
  local learner=$!
  local nodes
  nodes=$(tr ',' '\n' <<<"$4" | wc -l)
  cluster_exec srun -w "$4" -N"$nodes" --ntasks-per-node="$5" "$RLX_BIN" worker --connect-file "$trial/endpoint" \
    --auth-keys keys/workers/fleet --learner-timeout 60 >"$name-workers.out" 2>&1 &
  local workers=$!
  wait "$learner" || true
  wait "$workers" || true
  [ -f "$trial/progress.csv" ] || fail "run $name wrote no progress.csv"
}

declare -a one two
for ((i = 1; i <= runs; i++)); do
  fleet_run "one-host-$i" node1 1 node2 4
  one+=("$(median_column "runs/cartpole-ppo/one-host-$i/progress.csv" env_steps_per_s)")
  echo "{\"run\": \"workers_on_1_host\", \"index\": $i, \"median_env_steps_per_s\": ${one[-1]}}"
  fleet_run "two-hosts-$i" node1 1 node2,node3 2
  two+=("$(median_column "runs/cartpole-ppo/two-hosts-$i/progress.csv" env_steps_per_s)")
  echo "{\"run\": \"workers_on_2_hosts\", \"index\": $i, \"median_env_steps_per_s\": ${two[-1]}}"
done
python3 - "${one[*]}" "${two[*]}" <<'PY'
import json, statistics, sys
one = statistics.median(map(float, sys.argv[1].split()))
two = statistics.median(map(float, sys.argv[2].split()))
print(json.dumps({"summary": "fleet_hosts", "workers_on_1_host_steps_per_s": one,
                  "workers_on_2_hosts_steps_per_s": two, "ratio_2_over_1": two / one}))
PY

fleet_run scatter node1,node2 2 node3 4
trial=runs/cartpole-ppo/scatter
scatter=$(median_column "$trial/progress.csv" learner/scatter_s)
iteration=$(median_column "$trial/progress.csv" time_this_iter_s)
steps=$(median_column "$trial/progress.csv" env_steps_per_s)
python3 -c "import json,sys; s,i,t=map(float,sys.argv[1:]); print(json.dumps({'summary': 'scatter_to_other_host', \
'median_scatter_s': s, 'median_iteration_s': i, 'scatter_share': s / i, 'median_env_steps_per_s': t}))" \
  "$scatter" "$iteration" "$steps"
