#!/usr/bin/env python3
"""Side-by-side reference for `rlx envs bench CartPole-v1`.

Gymnasium itself cannot be installed on these machines (no PyPI), so this is a
line-for-line port of Gymnasium 0.29.1's CartPoleEnv.step/reset plus its TimeLimit
wrapper (Python floats for the state, a float32 numpy observation per step, as Gymnasium
does) and steps it with random actions drawn up front. Prints `env_steps_per_s=<n>`
(median of --repeats runs). Needs python3-numpy.
"""
import argparse
import math
import random
import statistics
import time

import numpy as np


class CartPole:
    def __init__(self):
        self.gravity, self.masscart, self.masspole = 9.8, 1.0, 0.1
        self.total_mass = self.masspole + self.masscart
        self.length = 0.5
        self.polemass_length = self.masspole * self.length
        self.force_mag, self.tau = 10.0, 0.02
        self.theta_threshold_radians = 12 * 2 * math.pi / 360
        self.x_threshold = 2.4
        self.rng = np.random.default_rng(0)
        self.state = None
        self.elapsed = 0

    def reset(self):
        self.state = self.rng.uniform(low=-0.05, high=0.05, size=(4,))
        self.elapsed = 0
        return np.array(self.state, dtype=np.float32)

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = self.force_mag if action == 1 else -self.force_mag
        costheta, sintheta = math.cos(theta), math.sin(theta)
        temp = (force + self.polemass_length * theta_dot**2 * sintheta) / self.total_mass
        thetaacc = (self.gravity * sintheta - costheta * temp) / (
            self.length * (4.0 / 3.0 - self.masspole * costheta**2 / self.total_mass))
        xacc = temp - self.polemass_length * thetaacc * costheta / self.total_mass
        x = x + self.tau * x_dot
        x_dot = x_dot + self.tau * xacc
        theta = theta + self.tau * theta_dot
        theta_dot = theta_dot + self.tau * thetaacc
        self.state = (x, x_dot, theta, theta_dot)
        terminated = bool(x < -self.x_threshold or x > self.x_threshold
                          or theta < -self.theta_threshold_radians or theta > self.theta_threshold_radians)
        self.elapsed += 1
        truncated = self.elapsed >= 500
        return np.array(self.state, dtype=np.float32), 1.0, terminated, truncated, {}


def run(steps):
    env = CartPole()
    env.reset()
    actions = [random.randrange(2) for _ in range(4096)]
    start = time.perf_counter()
    for t in range(steps):
        _, _, terminated, truncated, _ = env.step(actions[t & 4095])
        if terminated or truncated:
            env.reset()
    return steps / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rates = []
    for r in range(args.repeats):
        rates.append(run(args.steps))
        print(f"impl=python_gymnasium_port repeat={r + 1} env_steps_per_s={rates[-1]:.0f}")
    print(f"env_steps_per_s={statistics.median(rates):.0f}")


if __name__ == "__main__":
    main()
