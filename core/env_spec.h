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
};

}  // namespace rlx
