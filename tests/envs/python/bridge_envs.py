"""Python envs for rlx's bridge tests (tests/envs/python_env_test.cc, tests/cli/python_env_cli_test.cc).

Each env makes what crossed the bridge visible in its observations: the seed reset() got, the
action step() got, values of a given dtype. None imports gymnasium.
"""

import os

import numpy as np


class Box:
    def __init__(self, low, high, shape, dtype=np.float32):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.low = low
        self.high = high


class Discrete:
    def __init__(self, n, start=0):
        self.n = n
        self.start = start


class SeedEcho:
    """obs = [seed given to reset (-1 for None), resets so far, steps this episode, last action]."""

    max_episode_steps = 5

    def __init__(self, offset=0.0):
        self.offset = float(offset)
        self.observation_space = Box(-np.inf, np.inf, (4,))
        self.action_space = Discrete(3, start=-1)
        self.resets = 0
        self.steps = 0

    def _obs(self, seed, action):
        return np.array([seed, self.resets, self.steps, action + self.offset], dtype=np.float32)

    def reset(self, seed=None, options=None):
        self.resets += 1
        self.steps = 0
        self.seed_seen = -1 if seed is None else seed
        return self._obs(self.seed_seen, 0), {}

    def step(self, action):
        self.steps += 1
        return self._obs(self.seed_seen, action), 0.5 * action, False, False, {"note": "info is ignored"}


class _DtypeEcho:
    """Observations of one dtype: values that float32 can hold exactly, plus one it rounds."""

    dtype = np.float32

    def __init__(self):
        self.observation_space = Box(-1e13, 1e13, (3,), dtype=self.dtype)
        self.action_space = Box(np.array([-2.0, -2.0]), np.array([2.0, 2.0]), (2,), dtype=np.float32)

    def reset(self, seed=None, options=None):
        return np.array([1, -2, 2**40 + 1], dtype=self.dtype), {}

    def step(self, action):
        # The action comes back: a NumPy array of the Box's dtype and shape.
        assert isinstance(action, np.ndarray) and action.dtype == np.float32 and action.shape == (2,), repr(action)
        obs = np.array([action[0] * 4, action[1] * 4, 7], dtype=self.dtype)
        return obs, float(action.sum()), False, False, {}


class Float32Echo(_DtypeEcho):
    dtype = np.float32


class Float64Echo(_DtypeEcho):
    dtype = np.float64


class Int64Echo(_DtypeEcho):
    dtype = np.int64


class Float64Actions:
    """A Box of float64 actions, 2-D observations, a strided (non-contiguous) observation array."""

    def __init__(self):
        self.observation_space = Box(-10, 10, (2, 3), dtype=np.float64)
        self.action_space = Box(-1.0, 1.0, (1,), dtype=np.float64)
        self.grid = np.arange(12, dtype=np.float64).reshape(2, 6)

    def reset(self, seed=None, options=None):
        return self.grid[:, ::2], {}  # strides (48, 16): every other column

    def step(self, action):
        assert action.dtype == np.float64, action.dtype
        return np.full((2, 3), action[0], dtype=np.float64), 0.0, False, False, {}


class ListObservations:
    """Observations as plain lists and rewards as NumPy scalars: no arrays needed."""

    def __init__(self):
        self.observation_space = Box([-1.0, -1.0], [1.0, 1.0], (2,))
        self.action_space = Discrete(2)

    def reset(self, seed=None, options=None):
        return [0.25, -0.5], {}

    def step(self, action):
        return (0.75, float(action)), np.float32(2.5), np.bool_(action == 1), False, {}


class SelfTruncating:
    """Truncates its own episodes after 3 steps (no max_episode_steps for rlx)."""

    def __init__(self):
        self.observation_space = Box(-1.0, 1.0, (1,))
        self.action_space = Discrete(2)
        self.t = 0

    def reset(self, seed=None, options=None):
        self.t = 0
        return np.zeros(1, dtype=np.float32), {}

    def step(self, action):
        self.t += 1
        return np.zeros(1, dtype=np.float32), 1.0, False, self.t >= 3, {}


class RaisesInStep:
    """Raises on the step given (env_config: at_step); with once_file, only in the first process."""

    def __init__(self, at_step=3, once_file=None):
        self.at_step = at_step
        self.once_file = once_file
        self.observation_space = Box(-1.0, 1.0, (4,))
        self.action_space = Discrete(2)
        self.t = 0

    def reset(self, seed=None, options=None):
        return np.zeros(4, dtype=np.float32), {}

    def step(self, action):
        self.t += 1
        if self.t == self.at_step and self._armed():
            self._explode(action)
        return np.zeros(4, dtype=np.float32), 1.0, False, self.t % 50 == 0, {}

    def _armed(self):
        if self.once_file is None:
            return True
        try:  # created atomically: of processes racing to it, exactly one raises
            marker = os.open(self.once_file, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return False
        os.write(marker, str(os.getpid()).encode())
        os.close(marker)
        return True

    def _explode(self, action):
        raise RuntimeError(f"the env broke at step {self.t} (action {action})")


class OldGymApi:
    """step() returns Gym's old 4-tuple."""

    def __init__(self):
        self.observation_space = Box(-1.0, 1.0, (4,))
        self.action_space = Discrete(2)

    def reset(self, seed=None, options=None):
        return np.zeros(4, dtype=np.float32), {}

    def step(self, action):
        return np.zeros(4, dtype=np.float32), 1.0, False, {}


class WrongShape:
    """step() returns 3 observation values where the space has 4."""

    def __init__(self):
        self.observation_space = Box(-1.0, 1.0, (4,))
        self.action_space = Discrete(2)

    def reset(self, seed=None, options=None):
        return np.zeros(4, dtype=np.float32), {}

    def step(self, action):
        return np.zeros(3, dtype=np.float32), 1.0, False, False, {}


class StringObservation:
    def __init__(self):
        self.observation_space = Box(-1.0, 1.0, (2,))
        self.action_space = Discrete(2)

    def reset(self, seed=None, options=None):
        return ["a", "b"], {}

    def step(self, action):
        return [0.0, 0.0], 1.0, False, False, {}


class _Methods:
    """reset and step, for the envs whose spaces are the point."""

    def reset(self, seed=None, options=None):
        return np.zeros(2, dtype=np.float32), {}

    def step(self, action):
        return np.zeros(2, dtype=np.float32), 0.0, False, False, {}


class DiscreteObservations(_Methods):
    def __init__(self):
        self.observation_space = Discrete(5)
        self.action_space = Discrete(2)


class TupleActions(_Methods):
    def __init__(self):
        self.observation_space = Box(-1.0, 1.0, (2,))
        self.action_space = ("not", "a", "space")


class RaisesInInit:
    def __init__(self, **kwargs):
        raise ValueError(f"bad env_config {sorted(kwargs)}")
