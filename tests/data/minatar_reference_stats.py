#!/usr/bin/env python3
"""Random-policy statistics of the reference MinAtar games, for tests/envs/minatar_test.cc.

Runs the reference implementation (github.com/kenjyoung/MinAtar, GPL-3.0; imported from the path
given on the command line, never vendored here) with a policy that picks uniformly from each
game's minimal action set, sticky actions (0.1) and difficulty ramping on, as
minatar.Environment's defaults and the Gymnasium ids MinAtar/<Game>-v1. Records per game the
mean and sample standard deviation of the episode return and length, the mean reward per step
(total reward / total steps) and that ratio's standard error (delta method), as JSON.

It also records exact trajectories: the reference driven by a Python copy of rlx::Rng's stream
(RlxRng), so that the C++ games, given rlx::Rng with the same seeds, must reproduce every
observation, reward and terminal flag bit for bit (a SHA-256 over the whole run).

Usage (Debian's python3, which has NumPy):
  git --git-dir=<mirror of kenjyoung/MinAtar> archive HEAD | tar -x -C /tmp/minatar-ref
  /usr/bin/python3 tests/data/minatar_reference_stats.py /tmp/minatar-ref \
      --reference-commit <sha> --output tests/data/minatar-random-policy.json
"""
import argparse
import json
import math
import sys
import time

DEFAULT_EPISODES = {
    "breakout": 100000,
    "asterix": 100000,
    "freeway": 10000,  # every episode is 2,501 steps
    "seaquest": 100000,
    "space_invaders": 100000,
}


class RlxRng:
    """rlx::Rng (core/rng.h: xoshiro256++ seeded through splitmix64) in Python, with the calls of
    numpy's RandomState that the reference makes. Driving the reference with it gives the draws
    the C++ games get from rlx::Rng with the same seed, in the same order."""

    MASK = (1 << 64) - 1

    def __init__(self, seed):
        x = seed & self.MASK
        self.words = []
        for _ in range(4):
            x = (x + 0x9E3779B97F4A7C15) & self.MASK
            z = x
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & self.MASK
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & self.MASK
            self.words.append(z ^ (z >> 31))

    @classmethod
    def _rotl(cls, x, k):
        return ((x << k) | (x >> (64 - k))) & cls.MASK

    def next_u64(self):
        s = self.words
        result = (self._rotl((s[0] + s[3]) & self.MASK, 23) + s[0]) & self.MASK
        t = (s[1] << 17) & self.MASK
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = self._rotl(s[3], 45)
        return result

    def uniform(self):
        return (self.next_u64() >> 11) * 2.0 ** -53

    def uniform_int(self, n):
        return (self.next_u64() * n) >> 64

    def rand(self, size=None):
        import numpy as np
        return self.uniform() if size is None else np.array([self.uniform() for _ in range(size)])

    def randint(self, low, high=None, size=None):
        import numpy as np
        if high is None:
            low, high = 0, low
        if size is None:
            return low + self.uniform_int(high - low)
        return np.array([low + self.uniform_int(high - low) for _ in range(size)])


def run_trajectory(environment_class, game, steps, game_seed, policy_seed):
    """One long run over the full action set, the game's draws from RlxRng(game_seed) and the
    policy's (uniform_int(6) a step) from RlxRng(policy_seed). Hashes, per state, the observation
    bytes ([10, 10, C] HWC, 0 or 1), then per step the reward (int32, little-endian) and the
    terminal flag (one byte)."""
    import hashlib
    import numpy as np

    env = environment_class(game, sticky_action_prob=0.1, difficulty_ramping=True)
    rng = RlxRng(game_seed)
    env.random = rng
    env.env.random = rng
    policy = RlxRng(policy_seed)
    digest = hashlib.sha256()
    env.reset()
    digest.update(np.asarray(env.state(), dtype=np.uint8).tobytes())
    episodes, total_reward = 0, 0
    for _ in range(steps):
        reward, done = env.act(policy.uniform_int(6))
        digest.update(np.asarray(env.state(), dtype=np.uint8).tobytes())
        digest.update(int(reward).to_bytes(4, "little", signed=True) + bytes([1 if done else 0]))
        total_reward += int(reward)
        if done:
            episodes += 1
            env.reset()
            digest.update(np.asarray(env.state(), dtype=np.uint8).tobytes())
    return {"game_seed": game_seed, "policy_seed": policy_seed, "episodes": episodes,
            "total_reward": total_reward, "sha256": digest.hexdigest()}


def run_game(environment_class, game, episodes, seed):
    import numpy as np

    env = environment_class(game, sticky_action_prob=0.1, difficulty_ramping=True)
    env.seed(seed)
    policy = np.random.RandomState(seed + 1)
    actions = env.minimal_action_set()
    returns, lengths = [], []
    for _ in range(episodes):
        env.reset()
        total, steps, done = 0.0, 0, False
        while not done:
            reward, done = env.act(actions[policy.randint(len(actions))])
            total += reward
            steps += 1
        returns.append(total)
        lengths.append(steps)
    returns = np.asarray(returns, dtype=np.float64)
    lengths = np.asarray(lengths, dtype=np.float64)
    rate = returns.sum() / lengths.sum()
    # Delta method: the ratio of sums has standard error sd(R - rate * L) / (mean(L) sqrt(n)).
    residual = returns - rate * lengths
    rate_stderr = residual.std(ddof=1) / (lengths.mean() * math.sqrt(episodes))
    return {
        "episodes": episodes,
        "steps": int(lengths.sum()),
        "return_mean": float(returns.mean()),
        "return_std": float(returns.std(ddof=1)),
        "length_mean": float(lengths.mean()),
        "length_std": float(lengths.std(ddof=1)),
        "reward_per_step": float(rate),
        "reward_per_step_stderr": float(rate_stderr),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("minatar_path", help="directory holding the reference's minatar/ package")
    parser.add_argument("--reference-commit", default="unknown", help="the reference's git commit, recorded")
    parser.add_argument("--episodes", type=int, help="episodes per game (default: per game, see DEFAULT_EPISODES)")
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument("--games", nargs="+", default=list(DEFAULT_EPISODES))
    parser.add_argument("--trajectory-steps", type=int, default=30000, help="steps of each game's exact trajectory")
    parser.add_argument("--output", help="JSON file to write (default: stdout)")
    args = parser.parse_args()

    sys.path.insert(0, args.minatar_path)
    import numpy as np
    from minatar import Environment

    games = {}
    for index, game in enumerate(args.games):
        episodes = args.episodes or DEFAULT_EPISODES[game]
        start = time.time()
        games[game] = run_game(Environment, game, episodes, args.seed + 1000 * index)
        print(f"{game}: {games[game]} ({time.time() - start:.0f} s)", file=sys.stderr)

    trajectories = {}
    for index, game in enumerate(args.games):
        trajectories[game] = run_trajectory(Environment, game, args.trajectory_steps, 100 + index, 200 + index)
        print(f"{game} trajectory: {trajectories[game]}", file=sys.stderr)

    result = {
        "description": "Reference MinAtar under a uniformly random policy over the minimal action set, "
                       "sticky_action_prob 0.1, difficulty ramping on; std is the sample standard deviation.",
        "command": " ".join(["/usr/bin/python3", "tests/data/minatar_reference_stats.py"] + sys.argv[1:]),
        "script": "tests/data/minatar_reference_stats.py",
        "reference": {"repository": "https://github.com/kenjyoung/MinAtar", "commit": args.reference_commit},
        "numpy": np.__version__,
        "seed": args.seed,
        "sticky_action_prob": 0.1,
        "difficulty_ramping": True,
        "games": games,
        "trajectories": {
            "description": "Exact runs: the reference driven by rlx::Rng's stream (RlxRng in the script), "
                           "the game's draws from game_seed, the policy's (uniform_int(6) over the full action "
                           "set) from policy_seed, sticky actions and ramping on; sha256 over every state's "
                           "observation bytes and every step's int32 reward and terminal byte.",
            "steps": args.trajectory_steps,
            "games": trajectories,
        },
    }
    text = json.dumps(result, indent=2) + "\n"
    if args.output:
        with open(args.output, "w") as out:
            out.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
