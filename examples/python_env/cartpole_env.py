"""CartPole as a Gymnasium-style Python environment, for rlx's Python env bridge.

The dynamics are Gymnasium's CartPole-v1 (classic Euler integration, failure at 12 degrees or
2.4 units), written to Gymnasium's API without importing gymnasium: rlx reads envs by duck
typing, so any class with these attributes and methods trains.

    rlx train examples/python_env/cartpole-ppo.yaml

The spaces are small stand-ins for gymnasium.spaces.Box and Discrete with the attributes rlx
reads (shape, low, high, dtype; n). A real gymnasium.Env subclass works the same way.

render() draws Gymnasium's picture with NumPy when the env is constructed with
render_mode="rgb_array", which rlx does when it films it:

    rlx evaluate runs/cartpole-python-ppo/TRIAL/checkpoints/checkpoint_000005 --record cartpole.mp4
"""

import math

import numpy as np


class Box:
    """The attributes of gymnasium.spaces.Box that rlx reads."""

    def __init__(self, low, high, shape=None, dtype=np.float32):
        self.dtype = np.dtype(dtype)
        self.shape = tuple(shape) if shape is not None else np.shape(low)
        self.low = np.broadcast_to(np.asarray(low, dtype=self.dtype), self.shape)
        self.high = np.broadcast_to(np.asarray(high, dtype=self.dtype), self.shape)


class Discrete:
    """The attributes of gymnasium.spaces.Discrete that rlx reads."""

    def __init__(self, n, start=0):
        self.n = int(n)
        self.start = int(start)
        self.shape = ()


class CartPoleEnv:
    """Gymnasium's CartPole-v1: push the cart left (0) or right (1) to keep the pole upright."""

    # rlx truncates episodes at this many steps (Gymnasium's TimeLimit for CartPole-v1).
    max_episode_steps = 500
    reward_threshold = 475.0
    # render_fps: a video plays 50 frames a second, one a step (tau = 0.02 s).
    metadata = {"render_modes": ["rgb_array"], "render_fps": 50}

    # The picture, in pixels, as Gymnasium's CartPole draws it.
    screen_width = 600
    screen_height = 400

    def __init__(self, gravity=9.8, force_mag=10.0, render_mode=None):
        self.gravity = float(gravity)
        self.masscart = 1.0
        self.masspole = 0.1
        self.total_mass = self.masspole + self.masscart
        self.length = 0.5  # half the pole's length
        self.polemass_length = self.masspole * self.length
        self.force_mag = float(force_mag)
        self.tau = 0.02
        self.theta_threshold_radians = 12 * 2 * math.pi / 360
        self.x_threshold = 2.4
        high = np.array([self.x_threshold * 2, np.inf, self.theta_threshold_radians * 2, np.inf], dtype=np.float32)
        self.observation_space = Box(-high, high, dtype=np.float32)
        self.action_space = Discrete(2)
        self.np_random = np.random.default_rng()
        self.state = None
        self.render_mode = render_mode
        # Every pixel's column and row, for the drawing.
        self._columns, self._rows = np.meshgrid(np.arange(self.screen_width), np.arange(self.screen_height))

    def reset(self, seed=None, options=None):
        if seed is not None:
            self.np_random = np.random.default_rng(seed)
        self.state = self.np_random.uniform(low=-0.05, high=0.05, size=(4,))
        return np.array(self.state, dtype=np.float32), {}

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = self.force_mag if action == 1 else -self.force_mag
        costheta = math.cos(theta)
        sintheta = math.sin(theta)
        temp = (force + self.polemass_length * theta_dot * theta_dot * sintheta) / self.total_mass
        thetaacc = (self.gravity * sintheta - costheta * temp) / (
            self.length * (4.0 / 3.0 - self.masspole * costheta * costheta / self.total_mass))
        xacc = temp - self.polemass_length * thetaacc * costheta / self.total_mass
        x = x + self.tau * x_dot
        x_dot = x_dot + self.tau * xacc
        theta = theta + self.tau * theta_dot
        theta_dot = theta_dot + self.tau * thetaacc
        self.state = (x, x_dot, theta, theta_dot)
        terminated = bool(x < -self.x_threshold or x > self.x_threshold or
                          theta < -self.theta_threshold_radians or theta > self.theta_threshold_radians)
        return np.array(self.state, dtype=np.float32), 1.0, terminated, False, {}

    def render(self):
        """Gymnasium's picture of the cart and pole: a (400, 600, 3) uint8 array; None unless the
        env was constructed with render_mode="rgb_array" (or before the first reset)."""
        if self.render_mode != "rgb_array" or self.state is None:
            return None
        x, _, theta, _ = self.state
        scale = self.screen_width / (self.x_threshold * 2)
        pole_width, pole_length = 10.0, scale * (2 * self.length)
        cart_width, cart_height = 50.0, 30.0
        track_row = self.screen_height - 100  # rows count from the top
        cart_column = x * scale + self.screen_width / 2.0
        axle_row = track_row - cart_height / 4.0

        image = np.full((self.screen_height, self.screen_width, 3), 255, dtype=np.uint8)
        image[track_row, :] = 0
        columns, rows = self._columns, self._rows
        cart = (np.abs(columns - cart_column) <= cart_width / 2) & (np.abs(rows - track_row) <= cart_height / 2)
        image[cart] = 0
        # The pole: a rectangle from the axle along (sin theta, -cos theta) in (column, row).
        along = (columns - cart_column) * math.sin(theta) - (rows - axle_row) * math.cos(theta)
        across = (columns - cart_column) * math.cos(theta) + (rows - axle_row) * math.sin(theta)
        pole = (along >= -pole_width / 2) & (along <= pole_length - pole_width / 2) & (np.abs(across) <= pole_width / 2)
        image[pole] = (202, 152, 101)
        axle = (columns - cart_column) ** 2 + (rows - axle_row) ** 2 <= (pole_width / 2) ** 2
        image[axle] = (129, 132, 203)
        return image

    def close(self):
        pass
