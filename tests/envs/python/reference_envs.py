"""One env per space of tests/data/gymnasium-spaces.json, for
tests/envs/python_gymnasium_reference_test.cc: the space rebuilt with fake_spaces.py (no gymnasium
needed), and as observations the values Gymnasium sampled, in order (the reset's first, then one
per step, round and round). The class of case NAME is reference_envs.NAME.
"""

import json
import os

import numpy as np

from fake_spaces import Box, Dict, Discrete, MultiBinary, MultiDiscrete, Tuple

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "gymnasium-spaces.json")


def build(description):
    """A fake_spaces space from gymnasium_spaces_reference.py's description."""
    kind = description["type"]
    if kind == "Box":
        shape = tuple(description["shape"])
        dtype = np.dtype(description["dtype"])
        low = np.array(description["low"], dtype=dtype).reshape(shape)
        high = np.array(description["high"], dtype=dtype).reshape(shape)
        return Box(low, high, shape, dtype)
    if kind == "Discrete":
        return Discrete(description["n"], start=description["start"])
    if kind == "MultiDiscrete":
        return MultiDiscrete(description["nvec"], start=description["start"])
    if kind == "MultiBinary":
        return MultiBinary(description["n"])
    if kind == "Tuple":
        return Tuple(build(child) for child in description["spaces"])
    if kind == "Dict":
        return Dict(list(zip(description["keys"], map(build, description["spaces"]))))
    raise ValueError(f"unknown space type {kind}")


def convert(space, value):
    """A sample as Gymnasium gives it: NumPy arrays of the space's dtype, ints, tuples and dicts."""
    if isinstance(space, Tuple):
        return tuple(convert(child, item) for child, item in zip(space.spaces, value))
    if isinstance(space, Dict):
        return {key: convert(child, item) for (key, child), item in zip(space.spaces.items(), value)}
    if isinstance(space, Discrete):
        return np.int64(value)
    return np.array(value, dtype=space.dtype).reshape(space.shape)


class _Replay:
    case = None

    def __init__(self):
        with open(DATA) as data:
            record = json.load(data)["cases"][self.case]
        self.observation_space = build(record["space"])
        self.action_space = Discrete(2)
        self.samples = [convert(self.observation_space, value) for value in record["samples"]]
        self.t = 0

    def reset(self, seed=None, options=None):
        self.t = 0
        return self.samples[0], {}

    def step(self, action):
        self.t += 1
        return self.samples[self.t % len(self.samples)], 0.0, False, False, {}


with open(DATA) as _data:
    for _name in json.load(_data)["cases"]:
        globals()[_name] = type(_name, (_Replay,), {"case": _name})
