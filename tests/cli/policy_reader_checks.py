"""Checks of python/rlx_policy.py for tests/cli/policy_spaces_test.cc, run with Debian's Python.

    policy_reader_checks.py draws POLICY TRACE   stochastic masked actions: never an illegal one
    policy_reader_checks.py refusals DIR         prints the ValueError of each wrong call
    policy_reader_checks.py recurrent RECURRENT MEMORYLESS   the same for the state's calls

Prints a JSON summary (draws) or one line per refusal; exits 1 when a check fails.
"""

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from rlx_policy import Policy  # noqa: E402


def legal(action, policy, mask):
    """True when every element of the action (its space's values) is legal under the mask."""
    values = np.asarray(action).reshape(-1) - policy._starts
    at = 0
    for value, n in zip(values, policy.action_categories):
        if not mask[at + int(value)]:
            return False
        at += n
    return True


def draws(policy_path, trace_path):
    policy = Policy(policy_path, seed=5)
    total = illegal = masked_without_mask = 0
    with open(trace_path) as f:
        for line in f:
            step = json.loads(line)
            observation = policy.observation_space.unstore(step["obs"], step["obs_bytes"])
            mask = np.asarray(step["action_mask"]) != 0
            for _ in range(25):
                total += 1
                illegal += not legal(policy.act(observation, action_mask=step["action_mask"], deterministic=False),
                                     policy, mask)
                masked_without_mask += not legal(policy.act(observation, deterministic=False), policy, mask)
    print(json.dumps({"draws": total, "illegal": illegal, "masked_without_mask": masked_without_mask}))
    return 0


def refusals(folder):
    dict_policy = Policy(os.path.join(folder, "dict.rlxp"))
    multi = Policy(os.path.join(folder, "multi.rlxp"))
    binary = Policy(os.path.join(folder, "binary.rlxp"))
    grid = np.ones((2, 2, 2), dtype=np.uint8)
    good = {"level": 2, "grid": grid, "pos": np.zeros(2, dtype=np.float32)}
    assert dict_policy.act(good) in (2, 3, 4)
    calls = [
        lambda: dict_policy.act({"grid": grid, "pos": np.zeros(2)}),
        lambda: dict_policy.act(dict(good, grid=np.ones(7, dtype=np.uint8))),
        lambda: dict_policy.act(np.zeros(11, dtype=np.float32)),
        lambda: dict_policy.act(good, action_mask=[1] * 7),
        lambda: dict_policy.act(good, action_mask=[0, 0, 0]),
        lambda: multi.act({"cells": [0, 1], "x": [0.0, 0.0]}, action_mask=[1, 1, 1, 0, 0, 0, 0]),
        lambda: binary.act((np.zeros(3), grid), action_mask=[1, 1, 1]),
    ]
    return report(calls)


def recurrent(recurrent_path, memoryless_path):
    """A recurrent policy's stateless act and wrong state are refused; a memoryless policy acts
    with its empty state as without, and refuses a state (or a mask passed where the state goes)."""
    policy, plain = Policy(recurrent_path), Policy(memoryless_path)
    obs = np.zeros(4, dtype=np.float32)
    state = policy.initial_state()
    assert policy.recurrent and state.shape == (policy.state_size,) and not state.any()
    _, after = policy.act(obs, state)
    assert not state.any() and after.any(), "the state passed is left as it was, the one returned moved"
    assert not plain.recurrent and plain.initial_state().size == 0
    assert plain.act(obs, plain.initial_state())[0] == plain.act(obs)
    return report([lambda: policy.act(obs), lambda: policy.act(obs, np.zeros(3)),
                   lambda: plain.act(obs, [1, 1, 1, 1, 1])])


def report(calls):
    """Prints each call's ValueError; 1 when one raised none."""
    failed = 0
    for i, call in enumerate(calls):
        try:
            call()
        except ValueError as error:
            print("call %d: %s" % (i, error))
            continue
        print("call %d: no ValueError" % i)
        failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    if sys.argv[1] == "draws":
        sys.exit(draws(sys.argv[2], sys.argv[3]))
    if sys.argv[1] == "recurrent":
        sys.exit(recurrent(sys.argv[2], sys.argv[3]))
    sys.exit(refusals(sys.argv[2]))
