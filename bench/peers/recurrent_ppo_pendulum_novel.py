#!/usr/bin/python3
# The same-machine peer of experiments/pendulum-novel-ppo.yaml (docs/results.md): SB3-contrib's
# RecurrentPPO with RL Zoo's ppo_lstm.yml settings for PendulumNoVel-v1. Not part of rlx: it needs
# Stable-Baselines3 2.3.2 and Gymnasium 0.29.1 from ../shared/peers/setup.sh, plus sb3-contrib
# v2.3.0's sb3_contrib/ package on PYTHONPATH (from a snapshot of
# github:Stable-Baselines-Team/stable-baselines3-contrib), and Debian's python3-torch.
#   . $PEERS/env.sh && PYTHONPATH=$SB3_CONTRIB:$PYTHONPATH /usr/bin/python3 bench/peers/recurrent_ppo_pendulum_novel.py SEED
"""RecurrentPPO (sb3-contrib v2.3.0, SB3 2.3.2) on PendulumNoVel-v1 with RL Zoo ppo_lstm.yml settings.

Usage: recurrent_ppo_pendulum_novel.py SEED [TOTAL_TIMESTEPS]
PendulumNoVel-v1 = Pendulum-v1 with obs[2] (angular velocity) multiplied by 0 (RL Zoo MaskVelocityWrapper).
Prints one RESULT line (JSON).
"""
import json
import sys
import time

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
import stable_baselines3 as sb3
import sb3_contrib
from sb3_contrib import RecurrentPPO
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize


class MaskVelocityWrapper(gym.ObservationWrapper):
    """As rl_zoo3.wrappers.MaskVelocityWrapper for Pendulum-v1: velocity index 2 masked."""

    def __init__(self, env):
        super().__init__(env)
        self.mask = np.ones_like(env.observation_space.sample())
        self.mask[np.array([2])] = 0.0

    def observation(self, observation):
        return observation * self.mask


def make_no_vel(**kwargs):
    return MaskVelocityWrapper(gym.make("Pendulum-v1", **kwargs))


gym.register(id="PendulumNoVel-v1", entry_point=make_no_vel)

GAMMA = 0.9


def main():
    seed = int(sys.argv[1])
    total = int(float(sys.argv[2])) if len(sys.argv) > 2 else 100_000
    torch.set_num_threads(1)

    t0 = time.time()
    # RL Zoo: make_vec_env (Monitor inside), DummyVecEnv, seed=seed; then VecNormalize(gamma=algo gamma)
    env = make_vec_env("PendulumNoVel-v1", n_envs=4, seed=seed, vec_env_cls=DummyVecEnv)
    env = VecNormalize(env, gamma=GAMMA)

    model = RecurrentPPO(
        "MlpLstmPolicy",
        env,
        n_steps=1024,
        gae_lambda=0.95,
        gamma=GAMMA,
        n_epochs=10,
        ent_coef=0.0,
        learning_rate=1e-3,
        clip_range=0.2,
        use_sde=True,
        sde_sample_freq=4,
        policy_kwargs=dict(
            ortho_init=False,
            activation_fn=nn.ReLU,
            lstm_hidden_size=64,
            enable_critic_lstm=True,
            net_arch=dict(pi=[64], vf=[64]),
        ),
        seed=seed,
        verbose=0,
        device="cpu",
    )
    model.learn(total_timesteps=total)
    train_wall = time.time() - t0
    ep_r = [e["r"] for e in model.ep_info_buffer]
    train_mean = float(np.mean(ep_r)) if ep_r else float("nan")

    # Deterministic evaluation: fresh env, frozen normalisation statistics.
    t1 = time.time()
    eval_env = make_vec_env("PendulumNoVel-v1", n_envs=1, seed=seed + 10_000, vec_env_cls=DummyVecEnv)
    eval_env = VecNormalize(eval_env, gamma=GAMMA, training=False, norm_reward=False)
    eval_env.obs_rms = env.obs_rms.copy()
    eval_env.ret_rms = env.ret_rms.copy()
    n_eval = 100
    returns = []
    obs = eval_env.reset()
    lstm_states = None
    episode_starts = np.ones((1,), dtype=bool)
    cur = 0.0
    while len(returns) < n_eval:
        action, lstm_states = model.predict(obs, state=lstm_states, episode_start=episode_starts,
                                            deterministic=True)
        obs, rew, done, info = eval_env.step(action)
        cur += float(rew[0])  # norm_reward=False: raw reward
        episode_starts = done
        if done[0]:
            # cross-check with Monitor's raw episode return
            mon = info[0].get("episode", {}).get("r")
            returns.append(float(mon) if mon is not None else cur)
            cur = 0.0
    eval_wall = time.time() - t1

    res = dict(
        seed=seed,
        total_timesteps=total,
        num_timesteps=int(model.num_timesteps),
        train_ep_return_mean_last100=train_mean,
        train_episodes_in_buffer=len(ep_r),
        eval_episodes=n_eval,
        eval_mean=float(np.mean(returns)),
        eval_std=float(np.std(returns)),
        train_wall_s=round(train_wall, 1),
        eval_wall_s=round(eval_wall, 1),
        sb3=sb3.__version__,
        sb3_contrib=sb3_contrib.__version__,
        gymnasium=gym.__version__,
        torch=torch.__version__,
        numpy=np.__version__,
    )
    print("RESULT " + json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
