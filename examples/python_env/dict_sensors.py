"""Toy/DictSensors-v0 as a Gymnasium-style Python environment: a Dict observation and a
MultiDiscrete action, where a policy must read every key to reach the best return.

The twin of rlx's built-in Toy/DictSensors-v0 (envs/toy/dict_sensors.h): the same spaces, time
limit, reward threshold and rules (the random draws are NumPy's). Each step shows a fresh
observation:

    goal      Discrete(4)                     which value action[0] must take
    grid      Box(0, 1, (3, 3, 1), uint8)     exactly one row full (the lit row); the others have at most 2 cells on
    position  Box(-1, 1, (2,), float32)       uniform in [-1, 1)^2

and pays +1 when action[0] == goal and +1 when action[1] == (lit row + number of positive
coordinates of position) mod 3, over episodes truncated after 8 steps. Reading all three keys
returns 16; ignoring the goal returns 10 on average, the grid 10.67, the position 12; random
actions 4.67. The keys are in sorted order, so gymnasium.spaces.Dict of a plain dict (which sorts
them) gives the same space.

    rlx envs info python:dict_sensors:DictSensorsEnv --python-path examples/python_env

In an experiment file: env: python:dict_sensors:DictSensorsEnv, with python_path naming this
directory. The spaces are small stand-ins for gymnasium.spaces with the attributes rlx reads.
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


class MultiDiscrete:
    """The attributes of gymnasium.spaces.MultiDiscrete that rlx reads."""

    def __init__(self, nvec):
        self.nvec = np.array(nvec, dtype=np.int64)
        self.start = np.zeros_like(self.nvec)
        self.shape = self.nvec.shape
        self.dtype = np.dtype(np.int64)


class Dict:
    """gymnasium.spaces.Dict's `spaces`, in the order given (a list of (key, space) pairs)."""

    def __init__(self, spaces):
        self.spaces = dict(spaces)


class DictSensorsEnv:
    """Name the goal, and the row the grid lights shifted by the position's positive coordinates."""

    goals = 4
    rows = 3
    # rlx truncates episodes at this many steps; step() says so too, for use without rlx.
    max_episode_steps = 8
    reward_threshold = 15.0

    def __init__(self):
        self.observation_space = Dict([
            ("goal", Discrete(self.goals)),
            ("grid", Box(0, 1, (self.rows, self.rows, 1), np.uint8)),
            ("position", Box(-1.0, 1.0, (2,), np.float32)),
        ])
        self.action_space = MultiDiscrete([self.goals, self.rows])
        self.np_random = np.random.default_rng()
        self.steps = 0
        self.goal, self.lit_row = 0, 0
        self.grid = np.zeros((self.rows, self.rows, 1), dtype=np.uint8)
        self.position = np.zeros(2, dtype=np.float32)

    def _draw(self):
        rng = self.np_random
        self.goal = int(rng.integers(self.goals))
        self.position = rng.uniform(-1.0, 1.0, size=2).astype(np.float32)
        self.lit_row = int(rng.integers(self.rows))
        grid = (rng.random((self.rows, self.rows)) < 0.5).astype(np.uint8)
        grid[self.lit_row] = 1
        for r in range(self.rows):
            if r != self.lit_row and grid[r].all():
                grid[r, rng.integers(self.rows)] = 0  # the lit row stays the only full one
        self.grid = grid.reshape(self.rows, self.rows, 1)

    def _obs(self):
        return {"goal": self.goal, "grid": self.grid.copy(), "position": self.position.copy()}

    def target(self):
        """What action[1] must be: (lit row + positive coordinates of position) mod 3."""
        return (self.lit_row + int(np.sum(self.position > 0))) % self.rows

    def reset(self, seed=None, options=None):
        if seed is not None:
            self.np_random = np.random.default_rng(seed)
        self.steps = 0
        self._draw()
        return self._obs(), {}

    def step(self, action):
        pick, row = (int(a) for a in np.asarray(action).reshape(-1))
        if not (0 <= pick < self.goals and 0 <= row < self.rows):
            raise ValueError(f"action must be in MultiDiscrete([{self.goals} {self.rows}]), got {action}")
        reward = float(pick == self.goal) + float(row == self.target())
        self.steps += 1
        self._draw()
        return self._obs(), reward, False, self.steps >= self.max_episode_steps, {}

    def close(self):
        pass
