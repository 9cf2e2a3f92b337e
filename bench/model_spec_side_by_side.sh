#!/usr/bin/env bash
# Issue 32's before/after in one run: two rlx builds side by side, interleaved, medians.
#   bench/model_spec_side_by_side.sh BEFORE_RLX AFTER_RLX [REPEATS]
# BEFORE_RLX: an rlx executable of the build before model specs (ce5bdc7), AFTER_RLX: this
# build's `rlx` (each finds its own rlx-torch beside it). Runs, REPEATS times each and
# alternating builds: `rlx bench learner --native` (LibTorch vs native PPO updates, 64x64),
# `rlx bench sampling --env CartPole-v1` (raw, local and worker-process sampling) and
# `rlx bench startup` (exec-to-exit times, worker memory). Prints one line per figure:
#   bench.key before=MEDIAN after=MEDIAN after_over_before=RATIO
set -euo pipefail
before=$1 after=$2 repeats=${3:-5}
work=$(mktemp -d /tmp/rlx-model-spec-XXXXXX)
trap 'rm -rf "$work"' EXIT

for r in $(seq "$repeats"); do
  for side in before after; do
    rlx=${!side}
    "$rlx" bench learner --native --updates 5 >>"$work/$side.learner" 2>/dev/null
    "$rlx" bench sampling --env CartPole-v1 --seconds 2 >>"$work/$side.sampling" 2>/dev/null
    "$rlx" bench startup --repeats 3 >>"$work/$side.startup" 2>/dev/null
  done
done

python3 - "$work" <<'PY'
import json, statistics, sys
work = sys.argv[1]

def figures(side, bench):
    values = {}
    for line in open(f"{work}/{side}.{bench}"):
        line = line.strip()
        if line.startswith("{"):
            for key, value in json.loads(line).items():
                if key.endswith("_ms") or key == "ratio":
                    values.setdefault(key, []).append(float(value))
            continue
        words = dict(word.partition("=")[::2] for word in line.split() if "=" in word)
        prefix = words.pop("command", "")  # per-command timings: "command=NAME repeat=R ms=..."
        prefix = prefix + "." if prefix else ""
        for key, value in words.items():
            if key in ("repeat", "env"):
                continue
            try:
                values.setdefault(prefix + key, []).append(float(value))
            except ValueError:
                pass
    return {key: statistics.median(v) for key, v in values.items()}

for bench in ("learner", "sampling", "startup"):
    b, a = figures("before", bench), figures("after", bench)
    for key in sorted(set(b) & set(a)):
        ratio = a[key] / b[key] if b[key] else float("nan")
        print(f"{bench}.{key} before={b[key]:.6g} after={a[key]:.6g} after_over_before={ratio:.3f}")
PY
