#!/usr/bin/env python3
"""Learning curves as milestones: for each run's result.jsonl kept in a directory, the env steps
(and training seconds) at which episode_return_mean first reached each of a few returns.

    python3 bench/curve_milestones.py DIR [PREFIX]

One line per run whose file name starts with PREFIX (default: every *.jsonl):
"milestones NAME 100=STEPS/SECONDSs 200=... ", with "-" for a return never reached. The returns
are 100..475 for CartPole runs and 500..2250 for Hopper runs (by the name)."""
import json
import os
import sys


def milestones(rows, returns):
    out = []
    for target in returns:
        hit = next((r for r in rows if r["episode_return_mean"] >= target), None)
        out.append(f"{target}=" + (f"{hit['timesteps_total']}/{hit['time_total_s']:.1f}s" if hit else "-"))
    return " ".join(out)


def main():
    directory = sys.argv[1]
    prefix = sys.argv[2] if len(sys.argv) > 2 else ""
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".jsonl") or not name.startswith(prefix):
            continue
        with open(os.path.join(directory, name)) as f:
            rows = [json.loads(line) for line in f if line.strip()]
        returns = (500, 1000, 1500, 2000, 2250) if "hopper" in name else (100, 200, 300, 400, 475)
        print(f"milestones {name[:-len('.jsonl')]} {milestones(rows, returns)}")


if __name__ == "__main__":
    main()
