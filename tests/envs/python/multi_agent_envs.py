"""Multi-agent Python envs for rlx's bridge tests (tests/envs/python/python_multi_agent_env_test.cc).

TurnGame follows PettingZoo's Parallel API (observation_space(agent), action masks in the
observation's dict); RllibPair follows RLlib's MultiAgentEnv (spaces in dicts, "__all__", an
agent id that is not a string). None imports pettingzoo, ray or gymnasium.
"""

import numpy as np

from bridge_envs import Box, Discrete


class Dict:
    def __init__(self, spaces):
        self.spaces = dict(spaces)


class TurnGame:
    """Two players take turns; each sees [its turns so far, the last action played] and may not
    repeat the other's last action (masked). After 4 turns p0 wins (+1) and p1 loses (-1)."""

    possible_agents = ["p0", "p1"]

    def __init__(self):
        self.agents = []

    def observation_space(self, agent):
        return Dict({"observation": Box(-10, 10, (2,)), "action_mask": Box(0, 1, (3,), dtype=np.int8)})

    def action_space(self, agent):
        return Discrete(3)

    def _obs(self, agent, last):
        mask = np.ones(3, dtype=np.int8)
        if last >= 0:
            mask[last] = 0
        return {"observation": np.array([self.turns[agent], last], dtype=np.float32), "action_mask": mask}

    def reset(self, seed=None, options=None):
        self.agents = list(self.possible_agents)
        self.turns = {"p0": 0, "p1": 0}
        self.seed_seen = seed
        return {"p0": self._obs("p0", -1)}, {"p0": {}}

    def step(self, actions):
        (mover, action), = actions.items()
        self.turns[mover] += 1
        other = "p1" if mover == "p0" else "p0"
        total = sum(self.turns.values())
        if total == 4:
            self.agents = []
            return ({a: self._obs(a, action) for a in self.possible_agents}, {"p0": 1.0, "p1": -1.0},
                    {"p0": True, "p1": True}, {"p0": False, "p1": False}, {})
        return {other: self._obs(other, action)}, {mover: 0.0}, {mover: False}, {mover: False}, {}


class RllibPair:
    """Agent "arm" observes Box(1) and acts in a float64 Box(2); agent 7 (an int id) observes a
    Discrete(5) and acts in Discrete(2). Both act each step; "__all__" truncates after 3 steps.
    Rewards: arm gets the sum of its action, 7 gets its action."""

    def __init__(self, unknown_reward=False, bad_shape=False):
        self.possible_agents = ["arm", 7]
        self.observation_spaces = {"arm": Box(-100, 100, (1,)), 7: Discrete(5)}
        self.action_spaces = {"arm": Box(-1, 1, (2,), dtype=np.float64), 7: Discrete(2)}
        self.unknown_reward = unknown_reward
        self.bad_shape = bad_shape

    def reset(self, seed=None, options=None):
        self.t = 0
        return {"arm": np.array([seed if seed is not None else -1], dtype=np.float32), 7: 0}, {}

    def step(self, actions):
        self.t += 1
        arm = actions["arm"]
        assert isinstance(arm, np.ndarray) and arm.dtype == np.float64 and arm.shape == (2,), arm
        rewards = {"arm": float(arm.sum()), 7: float(actions[7])}
        if self.unknown_reward:
            rewards["ghost"] = 1.0
        arm_obs = np.zeros(2 if self.bad_shape else 1, dtype=np.float32) + self.t
        done = self.t == 3
        return ({"arm": arm_obs, 7: self.t}, rewards, {"__all__": False}, {"__all__": done}, {})


class GhostRewardPair(RllibPair):
    """Pays a reward to "ghost", an agent it does not have."""

    def __init__(self):
        super().__init__(unknown_reward=True)


class BadShapePair(RllibPair):
    """Observes "arm" in 2 floats where its space has 1."""

    def __init__(self):
        super().__init__(bad_shape=True)


class TurnGameGoesBad(TurnGame):
    """TurnGame until its 200th step, after which it also pays a reward to "ghost", an agent it
    does not have (a bug that shows up mid-run)."""

    def __init__(self):
        super().__init__()
        self.steps = 0

    def step(self, actions):
        self.steps += 1
        observations, rewards, terminations, truncations, infos = super().step(actions)
        if self.steps >= 200:
            rewards["ghost"] = 1.0
        return observations, rewards, terminations, truncations, infos
