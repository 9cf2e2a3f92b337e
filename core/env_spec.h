// EnvSpec: what a registered environment is (id, spaces, time limit, reward threshold).
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

#include "core/space.h"

namespace rlx {

// Static description of an environment, modelled on Gymnasium's EnvSpec and EnvPool's specs.
struct EnvSpec {
  std::string id;                           // e.g. "CartPole-v1"
  Space observation_space;                  // any space (core/space.h)
  Space action_space;                       // Box (float32), Discrete, MultiDiscrete or MultiBinary
  bool action_mask = false;                 // each observation carries a mask of legal actions
                                            // (Discrete or MultiDiscrete actions; core/observation_layout.h)
  int max_episode_steps = 0;                // time limit; 0 means none
  std::optional<double> reward_threshold;   // return at which the task counts as solved

  // Throws std::invalid_argument naming the env and the space path when a space is malformed, the
  // action space is one rlx cannot act in (it acts in float32 Box, Discrete, MultiDiscrete and
  // MultiBinary spaces), an action mask goes with another action space, or the time limit is
  // negative.
  void validate() const {
    const std::string who = "environment '" + id + "': ";
    try {
      observation_space.validate("observation_space");
      action_space.validate("action_space");
    } catch (const std::invalid_argument& error) {
      throw std::invalid_argument(who + error.what());
    }
    const bool actable = action_space.is_float_box() || action_space.is_discrete() ||
                         action_space.is_multi_discrete() || action_space.is_multi_binary();
    if (!actable) {
      throw std::invalid_argument(who + "action_space " + action_space.to_string() +
                                  " is not supported: rlx acts in Box (float32), Discrete, MultiDiscrete and MultiBinary spaces");
    }
    if (action_mask && !action_space.is_discrete() && !action_space.is_multi_discrete()) {
      throw std::invalid_argument(who + "an action mask needs a Discrete or MultiDiscrete action space, not " +
                                  action_space.to_string());
    }
    if (max_episode_steps < 0) throw std::invalid_argument(who + "max_episode_steps is negative");
  }

  bool operator==(const EnvSpec& other) const {
    return id == other.id && observation_space == other.observation_space && action_space == other.action_space &&
           action_mask == other.action_mask &&
           max_episode_steps == other.max_episode_steps && reward_threshold == other.reward_threshold;
  }
  bool operator!=(const EnvSpec& other) const { return !(*this == other); }

  // One line for messages: "CartPole-v1: observations Box(...), actions Discrete(2), 500 steps".
  std::string to_string() const {
    std::string text = id + ": observations " + observation_space.to_string() + ", actions " + action_space.to_string() +
                       (action_mask ? " (masked)" : "") + ", " + (max_episode_steps > 0 ? std::to_string(max_episode_steps) + " steps" : "no time limit");
    if (reward_threshold) text += ", reward threshold " + std::to_string(*reward_threshold);
    return text;
  }
};

}  // namespace rlx
