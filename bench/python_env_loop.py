"""The plain-Python side of bench/python_env_overhead.sh: a Gymnasium-style env stepped in a
Python loop, with random actions drawn ahead of time (so the loop is the env's cost alone) and a
reset wherever an episode ends, as `rlx envs bench` does. One line per repeat, then the median:
    env=ID envs=1 repeat=R env_steps=N seconds=S env_steps_per_s=X
    env=ID envs=1 median env_steps_per_s=X
"""

import argparse
import importlib
import json
import statistics
import sys
import time

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("env", help="MODULE:CLASS, e.g. cartpole_env:CartPoleEnv")
    parser.add_argument("--python-path", action="append", default=[], help="directory for sys.path (repeatable)")
    parser.add_argument("--env-config", default="{}", help="the constructor's keyword arguments as JSON")
    parser.add_argument("--steps", type=int, default=200000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sys.path[:0] = args.python_path
    module_name, class_name = args.env.split(":")
    env = getattr(importlib.import_module(module_name), class_name)(**json.loads(args.env_config))
    n = getattr(env.action_space, "n", None)
    if n is None:
        sys.exit("python_env_loop.py steps Discrete-action envs only")
    start_action = getattr(env.action_space, "start", 0)
    rng = np.random.default_rng(args.seed)
    limit = getattr(env, "max_episode_steps", 0) or 0
    rates = []
    for repeat in range(args.repeats):
        actions = (rng.integers(0, n, size=args.steps) + start_action).tolist()
        env.reset(seed=args.seed + repeat)
        t = 0
        begin = time.perf_counter()
        for action in actions:
            _, _, terminated, truncated, _ = env.step(action)
            t += 1
            if terminated or truncated or t == limit:
                env.reset()
                t = 0
        seconds = time.perf_counter() - begin
        rates.append(args.steps / seconds)
        print(f"env=python:{args.env} envs=1 repeat={repeat + 1} env_steps={args.steps} seconds={seconds:.4f} "
              f"env_steps_per_s={rates[-1]:.0f}")
    print(f"env=python:{args.env} envs=1 median env_steps_per_s={statistics.median(rates):.0f}")


if __name__ == "__main__":
    main()
