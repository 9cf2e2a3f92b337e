#!/bin/bash
# A replacement learner rank for a running elastic rlx job (train-hetjob.sbatch with --set
# elastic=true): one task in a new step of that job, which runs `rlx learner --join-file
# TRIAL/learner_endpoint`. Rank 0 takes it in at its next iteration boundary, with the current
# weights and optimizer state, and it learns until the run ends.
#
#   deploy/slurm/rejoin-learner.sh JOBID [NODE] >rejoin-JOBID.out 2>&1 &
#
# NODE: a node of the job, of either component (default: one of the learner component's, as
# Slurm picks). A node that failed has left a --no-kill job for good; pass another (an error
# lists the job's nodes). The step shares its node's CPUs (and GPUs) with the job's other steps
# (--overlap), so pick a node with room: a spare one, or the lost rank's once it is back.
#
# The trial is the one the job trains: OUTPUT/*/TRIAL/learner_endpoint under the job's working
# directory, with OUTPUT and TRIAL as train-hetjob.sbatch sets them (RLX_OUTPUT, RLX_TRIAL, else
# runs and slurm-<experiment file>), so submit and rejoin with the same environment, or set
# RLX_JOIN_FILE. RLX is the rlx binary (default: rlx on PATH); RLX_SRUN_OPTIONS adds srun
# options (e.g. "--gpus-per-task=1" for a GPU learner; add --device nothing: rank 0 decides).
# Exit status: the rank's (0 once the run ended), or 2 when the job or its trial is not found.
set -euo pipefail

me=$(basename "$0")
die() { echo "$me: $*" >&2; exit 2; }
(($# >= 1 && $# <= 2)) || die "usage: $me JOBID [NODE]"
JOBID=$1
NODE=${2:-}
[[ $JOBID =~ ^[0-9]+$ ]] || die "JOBID '$JOBID': want the job's number (squeue --me)"
RLX=${RLX:-rlx}

# One record a component: "OFFSET STATE NODELIST WORKDIR", and the batch command (the experiment
# file is its first argument).
info=$(scontrol show job "$JOBID" 2>&1) || die "no job $JOBID: $info"
records=$(awk '
  /^JobId=/ { offset = 0; if (match($0, /HetJobOffset=[0-9]+/)) offset = substr($0, RSTART + 13, RLENGTH - 13) }
  /^ +JobState=/ { split($1, f, "="); state = f[2] }
  /^ +NodeList=/ { split($1, f, "="); nodes = f[2] }
  /^ +Command=/ && command == "" { command = substr($0, index($0, "=") + 1) }
  /^ +WorkDir=/ { print offset, state, nodes, substr($0, index($0, "=") + 1) }
  END { print "command", command }' <<<"$info")
read -r _ state _ workdir <<<"$(head -n 1 <<<"$records")"
[ "$state" = RUNNING ] || die "job $JOBID is $state, not RUNNING"

group=0
if [ -n "$NODE" ]; then
  group=
  all=
  while read -r offset _ nodes _; do
    [ "$offset" != command ] || continue
    hosts=$(scontrol show hostnames "$nodes" | tr '\n' ' ')
    all+="$hosts"
    [[ " $hosts" != *" $NODE "* ]] || group=$offset
  done <<<"$records"
  [ -n "$group" ] || die "$NODE is not a node of job $JOBID (a failed node leaves a --no-kill job); its nodes: $all"
fi

join_file=${RLX_JOIN_FILE:-}
if [ -z "$join_file" ]; then
  read -r _ _ experiment _ <<<"$(grep '^command ' <<<"$records")"
  output=${RLX_OUTPUT:-runs}
  [[ $output == /* ]] || output=$workdir/$output
  trial=${RLX_TRIAL:-slurm-$(basename "${experiment:-?}" .yaml)}
  shopt -s nullglob
  found=("$output"/*/"$trial"/learner_endpoint)
  ((${#found[@]} == 1)) || die "want one $output/*/$trial/learner_endpoint, found ${#found[@]}" \
    "(is the run elastic, and has rank 0 started? RLX_TRIAL and RLX_OUTPUT as at sbatch, or RLX_JOIN_FILE)"
  join_file=${found[0]}
fi
[ -s "$join_file" ] || die "$join_file is missing or empty: rank 0 of an elastic run writes it"

echo "$me: job $JOBID, component $group${NODE:+, node $NODE}: rlx learner --join-file $join_file ($(cat "$join_file"))" >&2
# shellcheck disable=SC2086  # RLX_SRUN_OPTIONS: words
exec srun --jobid="$JOBID" --het-group="$group" --nodes=1 --ntasks=1 ${NODE:+--nodelist="$NODE"} --overlap \
  --job-name=rlx-rejoin --chdir="$workdir" ${RLX_SRUN_OPTIONS:-} "$RLX" learner --join-file "$join_file"
