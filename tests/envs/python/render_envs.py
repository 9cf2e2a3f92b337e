"""Python envs that draw themselves, for the bridge's render tests (tests/envs/python_render_test.cc).

Painter follows Gymnasium: it draws only when constructed with render_mode="rgb_array" and states
its frame rate in metadata["render_fps"]. Its picture encodes what the test checks: pixel (x, y)
is (x, y, steps taken), 4 pixels high and 6 wide. None imports gymnasium.
"""

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


class _Walk:
    """obs = [steps taken]; any action."""

    def __init__(self):
        self.observation_space = Box(0.0, 100.0, (1,))
        self.action_space = Discrete(2)
        self.steps = 0

    def reset(self, seed=None, options=None):
        self.steps = 0
        return np.zeros(1, dtype=np.float32), {}

    def step(self, action):
        self.steps += 1
        return np.array([self.steps], dtype=np.float32), 0.0, False, False, {}


class Painter(_Walk):
    metadata = {"render_modes": ["rgb_array"], "render_fps": 12}

    def __init__(self, render_mode=None, strided=False):
        super().__init__()
        self.render_mode = render_mode
        self.strided = strided

    def render(self):
        if self.render_mode != "rgb_array":
            return None
        columns, rows = np.meshgrid(np.arange(6), np.arange(4))
        image = np.stack([columns, rows, np.full((4, 6), self.steps)], axis=-1).astype(np.uint8)
        if self.strided:  # every other column of a wider picture: a view with strides
            wide = np.zeros((4, 12, 3), dtype=np.uint8)
            wide[:, ::2] = image
            return wide[:, ::2]
        return image


class StridedPainter(Painter):
    def __init__(self, render_mode=None):
        super().__init__(render_mode, strided=True)


class Blind(_Walk):
    """No render method at all."""


class FloatPicture(_Walk):
    def render(self):
        return np.zeros((4, 6, 3), dtype=np.float32)


class GreyPicture(_Walk):
    def render(self):
        return np.zeros((4, 6), dtype=np.uint8)


class KwargsOnly(_Walk):
    """Takes **kwargs but no render_mode parameter: rlx does not pass one."""

    def __init__(self, **kwargs):
        super().__init__()
        self.kwargs = kwargs

    def render(self):
        return None


class BadFps(Painter):
    metadata = {"render_fps": "fast"}
