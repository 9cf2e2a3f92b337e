// PolicyModelConfig: what the policy and Q networks are built from (torch-free, so workers,
// the CLI and configs can name a model without pulling in LibTorch); models/network_layout.h
// turns it into layers and a flat parameter layout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/env_spec.h"
#include "core/space.h"

namespace rlx {

// Observation normalisation, the same on workers and learners:
// clip((obs - mean) / sqrt(var + kObsNormEpsilon), -kObsNormClip, kObsNormClip).
constexpr double kObsNormEpsilon = 1e-8;
constexpr double kObsNormClip = 10.0;

// Network shape for ActorCritic (PPO) and QNetwork (DQN). Fields a model does not use are ignored.
struct PolicyModelConfig {
  int64_t obs_size = 0;                      // O: flat observation size
  Space action_space;                        // Discrete(n) or Box (flattened to A = prod(shape))
  std::vector<int64_t> hidden_sizes{64, 64}; // hidden layer widths; empty means a linear model
  std::string activation = "tanh";           // "tanh" or "relu"
  bool shared_trunk = false;                 // ActorCritic: one trunk for policy and value heads
  double log_std_init = 0.0;                 // ActorCritic with Box actions: initial log-std
  bool ortho_init = true;                    // ActorCritic: orthogonal weights with PPO's gains, zero
                                             // biases; false: PyTorch's nn.Linear default (SB3's ortho_init)
  bool dueling = false;                      // QNetwork: value + advantage - mean(advantage) heads

  // A config with obs_size and action_space taken from an env spec, other fields default.
  static PolicyModelConfig for_env(const EnvSpec& spec);

  // Number of policy outputs: n logits for Discrete, A means for Box.
  int64_t policy_output_size() const;

  // Throws std::invalid_argument naming what is wrong (size, space, hidden width, activation).
  void validate() const;
};

}  // namespace rlx
