#!/usr/bin/env python3
"""Gymnasium's own flattening of sampled values of a handful of spaces, for
tests/envs/python_gymnasium_reference_test.cc.

Builds real Gymnasium spaces (a Dict of uint8 Boxes, a Discrete with start, MultiDiscrete with a
2-D nvec and starts, MultiBinary, a nested Tuple, bool and int64 Boxes), samples values with a
fixed seed, and records per space: a description the test's Python env rebuilds it from without
gymnasium (tests/envs/python/reference_envs.py), the samples, gymnasium.spaces.flatten of each and
gymnasium.spaces.flatdim. It also records where the uint8 Box leaves lie in the flat vector, with
their bounds, found by walking the space with flatdim: rlx's model input differs from Gymnasium's
there alone, scaling those elements to (x - low) / (high - low) (core/observation_layout.h).

Usage (Gymnasium 0.29.1 from /work/shared/peers/setup.sh, on Debian's python3):
  . $PEERS/env.sh && /usr/bin/python3 tests/data/gymnasium_spaces_reference.py \
      --output tests/data/gymnasium-spaces.json
"""
import argparse
import json
import sys

import gymnasium
import numpy as np
from gymnasium import spaces

SEED = 20261203
SAMPLES = 4


def cases():
    """name -> space; the names become class names of reference_envs.py."""
    return {
        "dict_of_uint8_boxes": spaces.Dict({
            "image": spaces.Box(0, 255, (2, 3, 2), np.uint8),
            "ranged": spaces.Box(np.array([10, 0, 5], dtype=np.uint8), np.array([200, 1, 9], dtype=np.uint8), dtype=np.uint8),
            "level": spaces.Discrete(4, start=-1),
            "position": spaces.Box(-1, 1, (2,), np.float32),
        }),
        "discrete_with_start": spaces.Discrete(5, start=3),
        "multi_discrete": spaces.MultiDiscrete([[3, 2], [4, 5]], start=[[0, -2], [1, 10]]),
        "multi_binary": spaces.MultiBinary([2, 3]),
        "nested_tuple": spaces.Tuple((
            spaces.Discrete(3),
            spaces.Tuple((spaces.Box(-5, 5, (2,), np.float64), spaces.MultiBinary(2))),
            spaces.Dict({"b": spaces.MultiDiscrete([2, 3]), "a": spaces.Box(0, 255, (2,), np.uint8)}),
        )),
        "bool_and_int_boxes": spaces.Tuple((spaces.Box(0, 1, (3,), dtype=bool), spaces.Box(-100, 100, (2,), np.int64))),
    }


def describe(space):
    """The space as JSON, enough for reference_envs.py to rebuild it with fake_spaces.py."""
    if isinstance(space, spaces.Box):
        return {"type": "Box", "shape": list(space.shape), "dtype": space.dtype.name,
                "low": space.low.ravel().tolist(), "high": space.high.ravel().tolist()}
    if isinstance(space, spaces.Discrete):
        return {"type": "Discrete", "n": int(space.n), "start": int(space.start)}
    if isinstance(space, spaces.MultiDiscrete):
        return {"type": "MultiDiscrete", "nvec": space.nvec.tolist(), "start": space.start.tolist()}
    if isinstance(space, spaces.MultiBinary):
        return {"type": "MultiBinary", "n": list(space.shape)}
    if isinstance(space, spaces.Tuple):
        return {"type": "Tuple", "spaces": [describe(child) for child in space.spaces]}
    if isinstance(space, spaces.Dict):
        return {"type": "Dict", "keys": list(space.spaces), "spaces": [describe(child) for child in space.spaces.values()]}
    raise TypeError(f"no description for {space}")


def value(space, x):
    """A sample as JSON: arrays as nested lists, Tuples as lists, Dicts as lists in key order."""
    if isinstance(space, spaces.Tuple):
        return [value(child, item) for child, item in zip(space.spaces, x)]
    if isinstance(space, spaces.Dict):
        return [value(child, x[key]) for key, child in space.spaces.items()]
    return np.asarray(x).tolist()


def uint8_leaves(space, offset=0):
    """[{flat_offset, low, high}] of the uint8 Boxes in space, found with Gymnasium's flatdim."""
    if isinstance(space, (spaces.Tuple, spaces.Dict)):
        children = space.spaces.values() if isinstance(space, spaces.Dict) else space.spaces
        leaves = []
        for child in children:
            leaves += uint8_leaves(child, offset)
            offset += spaces.flatdim(child)
        return leaves
    if isinstance(space, spaces.Box) and space.dtype == np.uint8:
        return [{"flat_offset": offset, "low": space.low.ravel().tolist(), "high": space.high.ravel().tolist()}]
    return []


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    records = {}
    for index, (name, space) in enumerate(cases().items()):
        space.seed(SEED + index)
        samples = [space.sample() for _ in range(SAMPLES)]
        records[name] = {
            "gymnasium": str(space),
            "space": describe(space),
            "samples": [value(space, x) for x in samples],
            "flat": [spaces.flatten(space, x).astype(np.float64).tolist() for x in samples],
            "flatdim": spaces.flatdim(space),
            "uint8_leaves": uint8_leaves(space),
        }
    result = {
        "description": "gymnasium.spaces.flatten of sampled values; uint8_leaves: where rlx's model input scales "
                       "elements to (x - low) / (high - low) and Gymnasium keeps them raw",
        "command": "/usr/bin/python3 tests/data/gymnasium_spaces_reference.py --output tests/data/gymnasium-spaces.json "
                   "(PYTHONPATH from /work/shared/peers/setup.sh's env.sh)",
        "script": "tests/data/gymnasium_spaces_reference.py",
        "gymnasium": gymnasium.__version__,
        "numpy": np.__version__,
        "seed": SEED,
        "cases": records,
    }
    with open(args.output, "w") as out:
        json.dump(result, out, indent=1)
        out.write("\n")
    print(f"wrote {args.output}: {len(records)} spaces, {SAMPLES} samples each", file=sys.stderr)


if __name__ == "__main__":
    main()
