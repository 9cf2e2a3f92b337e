// EnvSpec: what a registered environment is (id, spaces, time limit, reward threshold).
#pragma once

#include <optional>
#include <string>

#include "core/space.h"

namespace rlx {

// Static description of an environment, modelled on Gymnasium's EnvSpec and EnvPool's specs.
struct EnvSpec {
  std::string id;                           // e.g. "CartPole-v1"
  Space observation_space;                  // always a Box
  Space action_space;                       // Box or Discrete
  int max_episode_steps = 0;                // time limit; 0 means none
  std::optional<double> reward_threshold;   // return at which the task counts as solved

  bool operator==(const EnvSpec& other) const {
    return id == other.id && observation_space == other.observation_space && action_space == other.action_space &&
           max_episode_steps == other.max_episode_steps && reward_threshold == other.reward_threshold;
  }
  bool operator!=(const EnvSpec& other) const { return !(*this == other); }

  // One line for messages: "CartPole-v1: observations Box(...), actions Discrete(2), 500 steps".
  std::string to_string() const {
    std::string text = id + ": observations " + observation_space.to_string() + ", actions " + action_space.to_string() +
                       ", " + (max_episode_steps > 0 ? std::to_string(max_episode_steps) + " steps" : "no time limit");
    if (reward_threshold) text += ", reward threshold " + std::to_string(*reward_threshold);
    return text;
  }
};

}  // namespace rlx
