"""A Python env that does nothing (its step returns one prepared tuple), for
bench/python_env_overhead.sh: stepped by rlx and by a plain loop, the difference in time per
step is what the bridge itself costs, with no env work to hide it."""

import numpy as np


class _Box:
    shape = (4,)
    low = -1.0
    high = 1.0
    dtype = np.dtype("float32")


class _Discrete:
    n = 2


class NoopEnv:
    max_episode_steps = 100

    def __init__(self):
        self.observation_space = _Box()
        self.action_space = _Discrete()
        obs = np.zeros(4, dtype=np.float32)
        self._reset = (obs, {})
        self._step = (obs, 1.0, False, False, {})

    def reset(self, seed=None, options=None):
        return self._reset

    def step(self, action):
        return self._step
