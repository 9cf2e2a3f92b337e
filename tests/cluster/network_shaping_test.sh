#!/usr/bin/env bash
# ctest cluster.network_shaping: the test cluster's realistic network and straggler host
# (lib.sh shape_link, cut_link, throttle_node), measured between node1 and node2 with
# net_probe.py: UDP probes to an echo on node2, and a TCP transfer. Each probe crosses node1's
# link and node2's link once each way, so with D ms on both links its RTT is 4 D. Shown: the
# RTT unshaped, with 5 ms on both links (20 ms), with +-2 ms of jitter; 1 % loss on node1's
# link (1.99 % of the probes: they cross it twice); a 3 s cut that silences the probes, which
# then come back; link-down on a shaped link; 20 MiB through a lossy, jittered link arriving
# intact; and a CPU-bound loop on a node throttled to 30 % running at 30 % of a CPU.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
probe_py=$(cd "$(dirname "$0")" && pwd)/net_probe.py

cluster_up 2
python=$(command -v /usr/bin/python3 python3 | head -n 1 || true)
[ -n "$python" ] || { echo "skipped: no python3 for the probes"; exit 77; }
cluster_work_dir

# An echo on node2 for the whole test (down ends it).
RLX_CLUSTER_TIMEOUT=170 node_exec 2 "$python" "$probe_py" udp-echo 7400 165 >echo.out 2>&1 &

# probe NAME COUNT GAP_MS: COUNT UDP probes from node1 to node2's echo, GAP_MS apart (NAME.json)
probe() { node_exec 1 "$python" "$probe_py" udp-probe node2 7400 "$2" "$3" >"$1.json"; }
rtt() { json "$1.json" "round(j['rtt_ms']['$2'], 3)"; }   # rtt NAME min|median|stdev|max
# within WHAT VALUE LO HI: VALUE is in [LO, HI], or the test fails saying so
within() { awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN {exit !(v >= lo && v <= hi)}' || fail "$1 = $2, want $3..$4"; }

probe plain 200 5
within "unshaped: median RTT (ms)" "$(rtt plain median)" 0 5
echo "ok: unshaped RTT node1 <-> node2: median $(rtt plain median) ms"
echo "FIGURE rtt_ms_unshaped $(rtt plain median)"

# 5 ms on each link: a probe crosses four times. Nothing leaves early, so 20 ms is a floor.
shaper=$(shape_link 1 --delay-ms 5 | cut -d: -f1)
shape_link 2 --delay-ms 5 >/dev/null
echo "ok: the links are shaped by $shaper"
probe delay 100 10
within "5 ms each way on both links: least RTT (ms)" "$(rtt delay min)" 19.95 23
within "5 ms each way on both links: median RTT (ms)" "$(rtt delay median)" 20 25
echo "ok: 5 ms on both links: RTT min $(rtt delay min), median $(rtt delay median) ms (4 x 5 = 20)"
echo "FIGURE rtt_ms_delay_5ms_both_links $(rtt delay median)"

# +-2 ms, uniform, on each of the four crossings: RTT 20 +- 8 ms, standard deviation
# sqrt(4 x 4^2 / 12) = 2.31 ms. Each link's numbers are its own (seeded by its names).
shape_link 1 --delay-ms 5 --jitter-ms 2 --seed 1 >/dev/null
shape_link 2 --delay-ms 5 --jitter-ms 2 --seed 1 >/dev/null
probe jitter 300 10
within "jitter 2 ms: RTT standard deviation (ms)" "$(rtt jitter stdev)" 1.6 3.2
within "jitter 2 ms: median RTT (ms)" "$(rtt jitter median)" 18.5 23.5
within "jitter 2 ms: least RTT (ms)" "$(rtt jitter min)" 11.95 20
echo "ok: 5 +- 2 ms on both links: RTT $(rtt jitter min)..$(rtt jitter max), median $(rtt jitter median), stdev $(rtt jitter stdev) ms"
echo "FIGURE rtt_ms_jitter_2ms_stdev $(rtt jitter stdev)"

# 1 % loss on node1's link only: a probe or its answer is lost with 1 - 0.99^2 = 1.99 %. Of
# 2000 probes that is 39.8 lost, standard deviation 6.2; the band is +-4 of them.
shape_link 2 off >/dev/null
shape_link 1 --loss 1 --seed 7 >/dev/null
probe loss 2000 2
lost=$(json loss.json 'j["lost_pct"]')
within "1 % loss on node1's link: probes lost (%)" "$lost" 0.75 3.25
echo "ok: 1 % loss on node1's link: $lost % of 2000 probes lost (1.99 % expected)"
echo "FIGURE loss_pct_probes_1pct_link $lost"

# A 3 s cut 1.5 s into 6 s of probes, 10 ms apart: 300 lost, then the rest answered.
shape_link 1 off >/dev/null
probe cut 600 10 &
probing=$!
sleep 1.5
t0=$(date +%s%N)
cut_link 1 3 >/dev/null
took_ms=$((($(date +%s%N) - t0) / 1000000))
((took_ms < 2000)) || fail "cut_link took $took_ms ms to return, not at once"
wait "$probing" || fail "the probes during the cut failed: $(cat cut.json)"
silence=$(json cut.json 'round(j["longest_silence_ms"])')
within "3 s cut: longest silence (ms)" "$silence" 2950 3700
within "3 s cut: probes lost" "$(json cut.json 'j["sent"] - j["received"]')" 270 340
within "3 s cut: probes answered after it" "$(json cut.json 'j["answered_after_silence"]')" 120 300
echo "ok: a 3 s cut silenced node1 for $silence ms, then $(json cut.json 'j["answered_after_silence"]') probes were answered"
echo "FIGURE cut_3s_silence_ms $silence"

# link-down and link-up still unplug a shaped link (node1's is shaped since the cut).
reach_ctl() { node_exec 1 timeout 2 bash -c "exec 3<>/dev/tcp/${RLX_SLURM_PREFIX}ctl/6817"; }
reach_ctl || fail "node1 cannot reach slurmctld before link-down"
"$RLX_CLUSTER" link-down 1
! reach_ctl 2>/dev/null || fail "node1 still reaches slurmctld after link-down of its shaped link"
"$RLX_CLUSTER" link-up 1
for _ in $(seq 10); do if reach_ctl 2>/dev/null; then break; fi; sleep 0.5; done
reach_ctl || fail "node1 cannot reach slurmctld after link-up of its shaped link"
echo "ok: link-down/link-up unplug and replug a shaped link"

# 20 MiB from node2 to node1 through 2 +- 0.5 ms and 0.1 % loss: TCP's big segments (GSO)
# cross the emulator as MTU-sized frames, each lost on its own.
shape_link 1 --delay-ms 2 --jitter-ms 0.5 --loss 0.1 --seed 3 >/dev/null
node_exec 1 "$python" "$probe_py" tcp-sink 7401 50 >sink.json &
sink=$!
node_exec 2 "$python" "$probe_py" tcp-source node1 7401 20 1 >source.json || fail "the TCP source failed"
wait "$sink" || fail "the TCP sink failed"
[ "$(json sink.json 'j["sha256"]')" = "$(json source.json 'j["sha256"]')" ] ||
  fail "20 MiB through the shaped link arrived changed: $(cat sink.json) vs $(cat source.json)"
rate=$(json sink.json 'round(j["mb_per_s"], 1)')
within "TCP through 2 ms and 0.1 % loss: MB/s" "$rate" 2 100000
echo "ok: 20 MiB arrived intact through 2 +- 0.5 ms and 0.1 % loss at $rate MB/s"
echo "FIGURE tcp_mb_per_s_2ms_0.1pct_loss $rate"
shape_link 1 off >/dev/null   # the emulator ends and logs its counts
if [ "$shaper" = rlx_link_emulator ]; then
  counts=$(tail -n 2 "$RLX_SLURM_DIR/log/link-node1.log")
  dropped=$(grep -o 'loss [0-9]*' <<<"$counts" | awk '{s += $2} END {print s + 0}')
  split=$(grep -o 'TCP super-frames split into [0-9]*' <<<"$counts" | awk '{s += $NF} END {print s + 0}')
  ((dropped > 0 && split > 0)) || fail "the emulator's counts show no loss or no split frames: $counts"
  echo "ok: the emulator dropped $dropped frames at random and made $split frames of TCP super-frames"
  echo "FIGURE emulator_frames_lost_0.1pct $dropped"
fi

# A straggler: node1 at 30 % of a CPU. srun's task starts after the throttle, under slurmd.
throttle_node 1 30 >/dev/null
cluster_exec srun -w node1 cat /proc/self/cgroup | grep -q "rlx-$RLX_SLURM_PREFIX-node1" ||
  fail "a task srun started on node1 is not in its cgroup: $(cluster_exec srun -w node1 cat /proc/self/cgroup)"
cluster_exec srun -w node1 "$python" "$probe_py" spin 3 >slow.json
cluster_exec srun -w node2 "$python" "$probe_py" spin 3 >fast.json
share=$(json slow.json 'round(j["cpu_share"], 3)')
# The throttled loop's speed against a whole CPU's (the other loop's speed per CPU second:
# other work on this machine may slow the unthrottled loop too).
speed=$("$python" -c 'import json; s, f = (json.load(open(n)) for n in ("slow.json", "fast.json"));
print(round(s["loops_per_s"] / (f["loops_per_s"] / f["cpu_share"]), 3))')
ratio=$("$python" -c 'import json; s, f = (json.load(open(n)) for n in ("slow.json", "fast.json"));
print(round(s["loops_per_s"] / f["loops_per_s"], 3))')
# 30 % is a ceiling; other work on the machine may leave the loop less.
within "throttled to 30 %: the loop's share of a CPU" "$share" 0.15 0.32
within "throttled to 30 %: the loop's speed against a whole CPU's" "$speed" 0.15 0.36
echo "ok: on node1 throttled to 30 %, a CPU-bound loop ran at $speed of a CPU's speed, on $share of a CPU" \
  "($ratio of node2's loop, on $(json fast.json 'round(j["cpu_share"], 3)'))"
echo "FIGURE throttled_30pct_speed $speed"
unthrottle_node 1 >/dev/null
if cluster_exec srun -w node1 cat /proc/self/cgroup | grep -q "rlx-$RLX_SLURM_PREFIX-node1"; then
  fail "a task on node1 is still throttled after unthrottle_node"
fi
throttle_node 2 50 >/dev/null   # for down to remove
cluster_down
echo "ok: down left nothing (emulators, links, cgroups)"
