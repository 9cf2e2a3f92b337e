#!/usr/bin/env bash
# Issue 37's side by side, in one run, on the namespaced Slurm cluster of tests/cluster (3 nodes,
# needs root, as the [cluster] tests):
#   bench/cluster_side_by_side.sh [RLX] [CAP_S] [OUT]
# 1. sync: learner_sync allreduce, parameter_server (max_staleness 4, the default) and
#    parameter_server without a bound (max_staleness 1000), with 2 learner ranks (node1, node2:
#    srun -N 2 -n 2) and 4 (2 on each: --ntasks-per-node 2), on three networks:
#    - "plain": the namespaces' veth links;
#    - "straggler": node2 throttled to STRAGGLER_PERCENT (default 20) % of one CPU, its ranks
#      sharing it (a CFS quota: a rank over it waits for the next 100 ms period);
#    - "5ms": both links delay every frame 5 ms each way, a 20 ms round trip between the nodes.
#    CartPole (experiments/cartpole-ppo.yaml, synchronous sampling, seed 0) to 475, each run
#    capped at CAP_S seconds of training (default 90; stop.time_total_s, exit 3 when it ends the
#    run); Hopper (experiments/hopper-ppo.yaml, seed 1, its 2,048-step batch from 2 envs of 1,024
#    steps: all-reduce shards by env) to 2,250 with 2 ranks, plain (cap 300 s) and on 5 ms links
#    (cap CAP_S).
# 2. elastic: CartPole with 3 elastic ranks, one on each node (seeds 0-2), uninterrupted, and
#    with node2's rank killed 1 s after the 3rd iteration's row and a replacement started on
#    node2 2 s later (`rlx learner --join-file`).
# 3. precision: fp32 against bf16: `rlx-torch bench learner` throughput (CartPole 64-64 and
#    1024-1024, Hopper 64-64); CartPole with 2 ranks across node1 and node2 (seeds 0-2); Hopper
#    with one learner on node1 (seed 1, cap 600 s).
# Output, also kept in OUT/lines.txt (OUT, default /tmp/rlx-cluster-bench, keeps every run's
# result.jsonl too):
#   "run ..."         one key=value line per run: srun's exit (0: target reached, 3: cap; a
#                     killed rank's 137), rank 0's stopped_by (episode_return_mean: the target),
#                     wall seconds from exec to exit, steps, updates/s and env steps/s over the
#                     run, the last return, and for the parameter server the staleness and how
#                     the steps were shared;
#   "curve ..."       steps and return every 5th iteration;
#   "ratio ..."       parameter server / all-reduce, killed / uninterrupted, bf16 / fp32;
#   "milestones ..."  the steps and seconds at which each run first reached a few returns
#                     (bench/curve_milestones.py).
# PARTS (default "sync hopper elastic precision") picks parts to run, RANKS (default "2 4") the
# sync part's numbers of ranks; a run of some parts adds its lines to lines.txt (a later run of
# a name wins in the ratios).
set -uo pipefail
source_dir=$(cd "$(dirname "$0")/.." && pwd)
RLX_BIN=$(realpath "${1:-$source_dir/build/rlx}")
cap=${2:-90}
straggler_percent=${STRAGGLER_PERCENT:-20}
parts=" ${PARTS:-sync hopper elastic precision} "
out_dir=$(realpath -m "${3:-/tmp/rlx-cluster-bench}")
export RLX_SLURM_PREFIX=rlxbench
source "$source_dir/tests/cluster/lib.sh"
mkdir -p "$out_dir"
[ -n "${PARTS:-}" ] || : >"$out_dir/lines.txt"   # a run of some parts adds to the last full run's lines
cluster_up 3
rlx_work_dir
say() { echo "$*" | tee -a "$out_dir/lines.txt"; }

# report NAME TRIAL EXIT WALL: the run's line and its curve, its result.jsonl kept in OUT.
report() {
  local name=$1 trial=$2
  cp "$trial/result.jsonl" "$out_dir/$name.jsonl" 2>/dev/null || { say "run $name exit=$3 wall_s=$4 no_results=1"; return; }
  python3 - "$trial/result.jsonl" "$name" "$3" "$4" <<'PY' | tee -a "$out_dir/lines.txt"
import json, os, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
final = os.path.join(os.path.dirname(sys.argv[1]), "result.json")
stopped_by = json.load(open(final)).get("stopped_by", "none") if os.path.exists(final) else "none"
name, status, wall = sys.argv[2], sys.argv[3], float(sys.argv[4])
last = rows[-1]
l = last["learner"]
t = last["time_total_s"]
line = (f"run {name} exit={status} stopped_by={stopped_by} wall_s={wall:.1f} steps={last['timesteps_total']} iterations={len(rows)}"
        f" updates_per_s={len(rows) / t:.2f} env_steps_per_s={last['timesteps_total'] / t:.0f}"
        f" return={last['episode_return_mean']:.1f}")
if "tasks_per_rank" in l:
    shares = [sum(r["learner"]["tasks_per_rank"][k] for r in rows) for k in range(len(l["tasks_per_rank"]))]
    mean = sum(r["learner"]["staleness_mean"] for r in rows) / len(rows)
    line += (f" staleness_mean={mean:.2f} staleness_max={max(r['learner']['staleness_max'] for r in rows)}"
             f" steps_per_rank={','.join(map(str, shares))} held_back={sum(r['learner']['held_back'] for r in rows)}")
for key in ("generation", "ranks_lost", "ranks_joined", "updates_redone", "regroup_s"):
    if key in l:
        line += f" {key}={l[key]}"
print(line)
for r in rows[4::5] + ([] if len(rows) % 5 == 0 else [last]):
    print(f"curve {name} iteration={r['training_iteration']} steps={r['timesteps_total']}"
          f" return={r['episode_return_mean']:.1f} time_s={r['time_total_s']:.1f}")
PY
}

# train NAME NODES RANKS EXPERIMENT CAP [rlx train options]: one run on the cluster, reported.
train() {
  local name=$1 nodes=$2 ranks=$3 experiment=$4 run_cap=$5 start status=0
  shift 5
  start=$(date +%s.%N)
  RLX_CLUSTER_TIMEOUT=$((run_cap + 120)) cluster_exec srun --label -N "$nodes" -n "$ranks" \
    --ntasks-per-node=$(((ranks + nodes - 1) / nodes)) --kill-on-bad-exit=0 \
    "$RLX_BIN" train "$source_dir/experiments/$experiment.yaml" --workers 0 --output runs --trial-name "$name" -q \
    --set stop.time_total_s="$run_cap" "$@" >"$name.out" 2>&1 || status=$?
  report "$name" "runs/$experiment/$name" "$status" "$(echo "$(date +%s.%N) - $start" | bc)"
}

# network plain|straggler|5ms: the links and node2 as that setting has them.
network() {
  unthrottle_node 2
  shape_link 1 off >/dev/null
  shape_link 2 off >/dev/null
  case $1 in
    straggler) throttle_node 2 "$straggler_percent" ;;
    5ms) shape_link 1 --delay-ms 5 >/dev/null && shape_link 2 --delay-ms 5 >/dev/null ;;
  esac
}

# sync_runs EXPERIMENT SEED NETWORK RANKS CAP [rlx train options]: the three strategies on one setting.
sync_runs() {
  local experiment=$1 seed=$2 net=$3 ranks=$4 run_cap=$5 sync
  shift 5
  network "$net"
  for sync in allreduce parameter_server parameter_server_unbounded; do
    local options=(--seed "$seed" --set learner_sync="${sync%_unbounded}" "$@")
    [ "$sync" != parameter_server_unbounded ] || options+=(--set max_staleness=1000)
    train "$experiment-$net-$ranks-$sync" 2 "$ranks" "$experiment" "$run_cap" "${options[@]}"
  done
}

# ---- 1. all-reduce against the parameter server ----
if [[ $parts == *" sync "* ]]; then
  for net in plain straggler 5ms; do
    for ranks in ${RANKS:-2 4}; do sync_runs cartpole-ppo 0 "$net" "$ranks" "$cap"; done
  done
fi
if [[ $parts == *" hopper "* ]]; then
  hopper_envs=(--set num_envs_per_worker=2 --set rollout_fragment_length=1024)
  sync_runs hopper-ppo 1 plain 2 300 "${hopper_envs[@]}"
  sync_runs hopper-ppo 1 5ms 2 "$cap" "${hopper_envs[@]}"
fi
network plain

# ---- 2. elastic: one of 3 ranks killed and replaced, against an uninterrupted run ----
[[ $parts == *" elastic "* ]] || seeds_elastic=""
for seed in ${seeds_elastic-0 1 2}; do
  for side in uninterrupted killed; do
    name=elastic-$side-$seed trial=runs/cartpole-ppo/elastic-$side-$seed
    start=$(date +%s.%N)
    RLX_CLUSTER_TIMEOUT=200 cluster_exec srun --label -N 3 -n 3 --kill-on-bad-exit=0 "$RLX_BIN" train \
      "$source_dir/experiments/cartpole-ppo.yaml" --workers 0 --seed "$seed" --output runs --trial-name "$name" -q \
      --set elastic=true --set min_learners=1 --set learner_timeout_s=20 >"$name.out" 2>&1 &
    run=$!
    if [ "$side" = killed ]; then
      wait_for_rows "$trial/progress.csv" 3 120 && sleep 1
      kill -9 $(node_pids 2 rlx-torch) 2>/dev/null
      sleep 2
      RLX_CLUSTER_TIMEOUT=200 node_exec 2 "$RLX_BIN" learner --join-file "$PWD/$trial/learner_endpoint" >"$name.join" 2>&1 &
    fi
    status=0
    wait "$run" || status=$?
    [ "$side" = uninterrupted ] || wait $! 2>/dev/null
    report "$name" "$trial" "$status" "$(echo "$(date +%s.%N) - $start" | bc)"
  done
done

# ---- 3. fp32 against bf16 ----
[[ $parts == *" precision "* ]] || precision_cases=""
for hidden in ${precision_cases-64,64 1024,1024}; do
  node_exec 1 "${RLX_BIN}-torch" bench learner --learners 1 --precision fp32,bf16 --hidden "$hidden" --repeats 5 2>&1 |
    sed "s/^/bench hidden=$hidden /" | tee -a "$out_dir/lines.txt"
done
if [[ $parts == *" precision "* ]]; then
  node_exec 1 "${RLX_BIN}-torch" bench learner --learners 1 --precision fp32,bf16 --env Hopper-v4 --hidden 64,64 --repeats 5 2>&1 |
    sed "s/^/bench env=Hopper-v4 hidden=64,64 /" | tee -a "$out_dir/lines.txt"
fi
for seed in ${precision_cases-0 1 2}; do
  for precision in fp32 bf16; do
    train "precision-cartpole-$precision-$seed" 2 2 cartpole-ppo 300 --seed "$seed" --set precision="$precision"
  done
done
for precision in ${precision_cases-fp32 bf16}; do
  train "precision-hopper-$precision" 1 1 hopper-ppo 600 --seed 1 --set learner_backend=torch --set precision="$precision"
done

# ---- ratios ----
python3 - "$out_dir/lines.txt" <<'PY' | tee -a "$out_dir/lines.txt"
import re, sys
runs = {}
for line in open(sys.argv[1]):
    if line.startswith("run "):
        name, *pairs = line.split()[1:]
        runs[name] = dict(p.split("=", 1) for p in pairs if "=" in p)
def ratio(a, b, key):
    if a in runs and b in runs and key in runs[a] and key in runs[b]:
        print(f"ratio {a}/{b} {key}={float(runs[a][key]) / float(runs[b][key]):.3f}")
for experiment, settings in (("cartpole-ppo", [(n, r) for n in ("plain", "straggler", "5ms") for r in (2, 4)]),
                             ("hopper-ppo", [("plain", 2), ("5ms", 2)])):
    for net, ranks in settings:
        base = f"{experiment}-{net}-{ranks}-allreduce"
        for sync in ("parameter_server", "parameter_server_unbounded"):
            ratio(f"{experiment}-{net}-{ranks}-{sync}", base, "updates_per_s")
            ratio(f"{experiment}-{net}-{ranks}-{sync}", base, "wall_s")
for seed in (0, 1, 2):
    ratio(f"elastic-killed-{seed}", f"elastic-uninterrupted-{seed}", "wall_s")
    ratio(f"elastic-killed-{seed}", f"elastic-uninterrupted-{seed}", "steps")
    ratio(f"precision-cartpole-bf16-{seed}", f"precision-cartpole-fp32-{seed}", "wall_s")
    ratio(f"precision-cartpole-bf16-{seed}", f"precision-cartpole-fp32-{seed}", "steps")
ratio("precision-hopper-bf16", "precision-hopper-fp32", "wall_s")
ratio("precision-hopper-bf16", "precision-hopper-fp32", "steps")
PY
python3 "$source_dir/bench/curve_milestones.py" "$out_dir" | tee -a "$out_dir/lines.txt"
cluster_down
