"""Envs built on real Gymnasium (0.29.1, from /work/shared/peers/setup.sh), for the hidden test
tests/envs/python_real_gymnasium_test.cc ("[.][gymnasium]", run by hand with Gymnasium on
PYTHONPATH; the suite has no Gymnasium). Importing this module needs gymnasium.
"""

import gymnasium
import numpy as np
from gymnasium import spaces

# Every leaf kind, nested, uint8 Boxes with full and narrow bounds.
SAMPLE_SPACE = spaces.Dict({
    "camera": spaces.Box(0, 255, (3, 4, 3), np.uint8),
    "ranged": spaces.Box(np.array([5, 0], dtype=np.uint8), np.array([10, 3], dtype=np.uint8), dtype=np.uint8),
    "level": spaces.Discrete(4, start=-2),
    "counts": spaces.MultiDiscrete([[3, 2], [4, 5]], start=[[0, -2], [1, 10]]),
    "bits": spaces.MultiBinary([2, 2]),
    "nested": spaces.Tuple((spaces.Box(-2, 2, (2,), np.float64),
                            spaces.Dict({"b": spaces.Discrete(2), "a": spaces.Box(-1, 1, (1,), np.float32)}))),
    "flags": spaces.Box(0, 1, (3,), dtype=bool),
    "steps": spaces.Box(0, 50, (), np.int64),
})


def rlx_flat(space, x):
    """gymnasium.spaces.flatten(space, x) with rlx's one difference: uint8 Box elements scaled to
    (x - low) / (high - low)."""
    if isinstance(space, (spaces.Tuple, spaces.Dict)):
        items = [(child, x[key]) for key, child in space.spaces.items()] if isinstance(space, spaces.Dict) \
            else list(zip(space.spaces, x))
        return np.concatenate([rlx_flat(child, item) for child, item in items])
    flat = spaces.flatten(space, x).astype(np.float64)
    if isinstance(space, spaces.Box) and space.dtype == np.uint8:
        low, high = space.low.ravel().astype(np.float64), space.high.ravel().astype(np.float64)
        flat = (flat - low) / (high - low)
    return flat


class RealSpaces(gymnasium.Env):
    """RLlib's convention with real spaces: Dict(action_mask, observations: Dict(expected, sample)).
    `sample` is a fresh sample of SAMPLE_SPACE each step and `expected` what rlx's model must read
    of it (rlx_flat). Asserts that each action is in the space and legal under the last mask."""

    def __init__(self):
        dim = spaces.flatdim(SAMPLE_SPACE)
        self.observation_space = spaces.Dict({
            "action_mask": spaces.MultiBinary(4),
            "observations": spaces.Dict({"expected": spaces.Box(-np.inf, np.inf, (dim,), np.float64), "sample": SAMPLE_SPACE}),
        })
        self.action_space = spaces.Discrete(4, start=1)
        self.sample_space = SAMPLE_SPACE

    def _obs(self):
        sample = self.sample_space.sample()
        self.mask = self.np_random.integers(0, 2, 4).astype(np.int8)
        self.mask[self.np_random.integers(4)] = 1
        return {"action_mask": self.mask, "observations": {"expected": rlx_flat(self.sample_space, sample), "sample": sample}}

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.sample_space.seed(seed)
        return self._obs(), {}

    def step(self, action):
        assert self.action_space.contains(action), repr(action)
        assert self.mask[action - 1] == 1, f"action {action} is masked: {self.mask}"
        return self._obs(), float(action), False, False, {}


class Sb3Masked(gymnasium.Env):
    """SB3's convention behind gymnasium.make's wrappers: MultiDiscrete actions with starts and
    action_masks(); asserts that each action is in the space and legal."""

    def __init__(self):
        self.observation_space = spaces.Box(-1, 1, (2,), np.float32)
        self.action_space = spaces.MultiDiscrete([3, 2], start=[1, -1])

    def action_masks(self):
        return self.mask.astype(bool)

    def _obs(self):
        self.mask = self.np_random.integers(0, 2, 5)
        self.mask[self.np_random.integers(3)] = 1
        self.mask[3 + self.np_random.integers(2)] = 1
        return self.np_random.uniform(-1, 1, 2).astype(np.float32)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        return self._obs(), {}

    def step(self, action):
        assert self.action_space.contains(action), repr(action)
        assert self.mask[action[0] - 1] and self.mask[3 + action[1] + 1], f"action {action} is masked: {self.mask}"
        return self._obs(), 1.0, False, False, {}


gymnasium.register(id="RlxTest/Sb3Masked-v0", entry_point=Sb3Masked, max_episode_steps=7)


def make_sb3_masked():
    return gymnasium.make("RlxTest/Sb3Masked-v0")


def make_blackjack():
    return gymnasium.make("Blackjack-v1")


def make_frozen_lake():
    return gymnasium.make("FrozenLake-v1")
