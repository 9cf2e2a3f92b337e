// rlx::Policy: a trained policy exported by `rlx export CHECKPOINT -o policy.rlxp`, run inside
// your own program. Needs no LibTorch, ZeroMQ or MuJoCo: link rlx::policy (find_package(rlx)).
//
//   rlx::Policy policy("policy.rlxp");
//   rlx::PolicyAction action = policy.act(observation, /*deterministic=*/true);
//   // Discrete actions: action.index; Box actions: action.values (clipped to the Box's bounds).
//
// The file carries the network (its layers and weights) and the observation normalisation of
// training, so act() takes raw observations, exactly as the environment gives them, and
// returns what rlx's own evaluation (`rlx evaluate`) would send to the environment.
// python/rlx_policy.py reads the same files with NumPy alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace rlx {

// A policy file that cannot be used: missing, truncated, damaged (checksum), of another format
// version, or describing a network this build does not know. The message names the file.
class PolicyFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One action: `index` for Discrete action spaces, `values` (action_size() floats) for Box.
struct PolicyAction {
  int64_t index = 0;
  std::vector<float> values;
};

// An exported policy, loaded and ready to act. Not thread-safe: give each thread its own.
class Policy {
 public:
  // Reads and checks the file; throws PolicyFileError naming the file and what is wrong. seed
  // starts the generator that stochastic act() draws from.
  explicit Policy(const std::string& path, uint64_t seed = 0);
  ~Policy();
  Policy(Policy&&) noexcept;
  Policy& operator=(Policy&&) noexcept;

  // The action for one raw observation of observation_size() floats: argmax / mean (Q-networks:
  // greedy) when deterministic, else a draw from the policy (Q-networks: epsilon-greedy with the
  // exploration rate training ended with). Throws std::invalid_argument on a wrong size.
  PolicyAction act(const std::vector<float>& observation, bool deterministic = true);
  PolicyAction act(const float* observation, size_t size, bool deterministic = true);

  // Floats per observation.
  int64_t observation_size() const;
  // True for a Discrete action space (act() fills index), false for a Box (act() fills values).
  bool discrete_actions() const;
  // Discrete: the number of actions; Box: the number of floats per action.
  int64_t action_size() const;
  // Box: the bounds act() clips to (empty for Discrete).
  const std::vector<float>& action_low() const;
  const std::vector<float>& action_high() const;
  // Where the policy came from: the env id and algorithm it was trained with.
  const std::string& env_id() const;
  const std::string& algorithm() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rlx
