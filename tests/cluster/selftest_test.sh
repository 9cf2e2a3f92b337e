#!/usr/bin/env bash
# ctest cluster.selftest: the Slurm test cluster itself works and leaves nothing behind.
# Three nodes; slurm_cluster.sh selftest checks srun across all nodes, TCP between steps on
# two nodes by hostname, a heterogeneous job, requeue of an ended batch job and
# link-down/up. Then lib.sh's job helpers see a batch job's state and exit code, and after
# `down` no namespace, process, mount or file of the cluster is left.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

command -v ip >/dev/null || { echo "skipped: ip not found (scripts/setup.sh installs iproute2)"; exit 77; }
links_before=$(ip -o link | awk -F': ' '{print $2}' | sort)
cluster_up 3

timeout -k 5 150 "$RLX_CLUSTER" selftest || fail "slurm_cluster.sh selftest failed"

# The lib.sh helpers the other cluster tests use: a batch job's state and exit code.
jid=$(cluster_exec sbatch --parsable -N 1 -o /dev/null --wrap 'sleep 1; exit 5')
wait_job_state "$jid" RUNNING 20 || fail "batch job $jid did not start"
wait_job_state "$jid" FAILED 20 || fail "batch job $jid did not end FAILED"
[ "$(job_exit_code "$jid")" = 5 ] || fail "batch job $jid: job_exit_code says $(job_exit_code "$jid"), not 5"
jid=$(cluster_exec sbatch --parsable -N 2 -o /dev/null --wrap 'srun true')
wait_job_state "$jid" COMPLETED 20 || fail "2-node batch job $jid did not complete"
[ "$(job_exit_code "$jid")" = 0 ] || fail "batch job $jid: job_exit_code says $(job_exit_code "$jid"), not 0"
echo "ok: lib.sh sees batch jobs run, and their exit codes (5 and 0)"

# A running step is killed by down, too.
cluster_exec sbatch -N 3 -o /dev/null --wrap 'srun sleep 300' >/dev/null
cluster_down
links_after=$(ip -o link | awk -F': ' '{print $2}' | sort)
[ "$links_before" = "$links_after" ] ||
  fail "the root namespace's links changed: $(diff <(echo "$links_before") <(echo "$links_after") | tr '\n' ' ')"
echo "ok: down left no namespace, process, mount, link or file behind"
