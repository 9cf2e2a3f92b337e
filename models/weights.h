// Weights: what a learner ships to workers, a policy's flat parameters (in the order of
// models/network_layout.h) and its observation normalizer. Torch-free; the wire form is in
// transport/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rlx {

// Learner -> workers: a policy's flat parameters and its observation normalizer.
struct Weights {
  uint64_t policy_version = 0;    // header policy_version
  std::vector<float> params;      // [P] in the policy's fixed parameter order
  std::vector<double> obs_mean;   // [O] empty when the policy normalizes nothing
  std::vector<double> obs_var;    // [O]
  double obs_count = 0;           // samples behind mean/var
  std::optional<double> epsilon;  // epsilon-greedy workers: the exploration rate to use now
  int32_t policy_index = -1;      // multi-agent: the policy (its index in the run's map) these are for; -1: one agent
  std::string scripted;           // multi-agent: a frozen policy plays this scripted rule instead (params empty)
};

}  // namespace rlx
