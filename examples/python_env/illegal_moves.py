"""Toy/IllegalMoves-v0 as a Gymnasium-style Python environment: a masked Discrete env, with the
mask given by SB3's convention (an action_masks() method, as sb3-contrib's MaskablePPO reads it).

The twin of rlx's built-in Toy/IllegalMoves-v0 (envs/toy/illegal_moves.h): the same spaces, time
limit, reward threshold and rules (the random draws are NumPy's, so the boards differ). A board of
9 cells shows a value in [0, 1] per cell; each step a random 2 to 6 of the cells are legal. The
illegal cells are bait, their values drawn from [0.5, 1) against [0, 1) for the legal ones, so the
highest value is most often illegal, and only action_masks() says which cells are legal. A legal
move pays its cell's value and deals a new board; an illegal one pays -10 and terminates. Episodes
are truncated after 10 moves. Optimal play (the highest-valued legal cell) returns 7.81 on average,
a random legal cell 5.0.

    rlx envs info python:illegal_moves:IllegalMovesEnv --python-path examples/python_env
    rlx envs rollout python:illegal_moves:IllegalMovesEnv --python-path examples/python_env --seed 1

In an experiment file: env: python:illegal_moves:IllegalMovesEnv, with python_path naming this
directory. The spaces are small stand-ins for gymnasium.spaces.Box and Discrete with the
attributes rlx reads; gymnasium need not be installed.
"""

import numpy as np


class Box:
    """The attributes of gymnasium.spaces.Box that rlx reads."""

    def __init__(self, low, high, shape, dtype=np.float32):
        self.dtype = np.dtype(dtype)
        self.shape = tuple(shape)
        self.low = np.full(self.shape, low, dtype=self.dtype)
        self.high = np.full(self.shape, high, dtype=self.dtype)


class Discrete:
    """The attributes of gymnasium.spaces.Discrete that rlx reads."""

    def __init__(self, n, start=0):
        self.n = int(n)
        self.start = int(start)
        self.shape = ()


class IllegalMovesEnv:
    """Take the most valuable legal cell of a 3 x 3 board; an illegal cell costs 10 and ends the episode."""

    cells = 9
    min_legal, max_legal = 2, 6
    bait_low = 0.5  # illegal cells' values: uniform in [bait_low, 1)
    illegal_reward = -10.0
    # rlx truncates episodes at this many steps; step() says so too, for use without rlx.
    max_episode_steps = 10
    reward_threshold = 7.5

    def __init__(self):
        self.observation_space = Box(0.0, 1.0, (self.cells,), np.float32)
        self.action_space = Discrete(self.cells)
        self.np_random = np.random.default_rng()
        self.values = np.zeros(self.cells, dtype=np.float32)
        self.legal = np.zeros(self.cells, dtype=bool)
        self.steps = 0

    def _deal(self):
        legal = self.np_random.integers(self.min_legal, self.max_legal + 1)
        self.legal = np.zeros(self.cells, dtype=bool)
        self.legal[self.np_random.choice(self.cells, size=legal, replace=False)] = True
        u = self.np_random.random(self.cells)
        self.values = np.where(self.legal, u, self.bait_low + (1.0 - self.bait_low) * u).astype(np.float32)

    def reset(self, seed=None, options=None):
        if seed is not None:
            self.np_random = np.random.default_rng(seed)
        self.steps = 0
        self._deal()
        return self.values.copy(), {}

    def step(self, action):
        cell = int(action)
        if not 0 <= cell < self.cells:
            raise ValueError(f"action must be a cell in [0, {self.cells - 1}], got {cell}")
        self.steps += 1
        if not self.legal[cell]:
            return self.values.copy(), self.illegal_reward, True, False, {}
        reward = float(self.values[cell])
        self._deal()
        return self.values.copy(), reward, False, self.steps >= self.max_episode_steps, {}

    def action_masks(self):
        """SB3's convention: one bool per action, True where the cell is legal."""
        return self.legal.copy()

    def close(self):
        pass
