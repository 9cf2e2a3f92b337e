// `rlx export`: a checkpoint's policy as one self-describing file (models/policy_file.h) that
// rlx::Policy (C++, no LibTorch) and python/rlx_policy.py (NumPy) run.
#pragma once

#include "algorithms/evaluation.h"
#include "models/policy_file.h"

namespace rlx {

// The policy file of a restored checkpoint: the network, weights and observation statistics
// its deterministic evaluation policy acts with, and where it came from. A multi-agent
// checkpoint's policy is the one `policy` names (its source says which, and its agents); a
// ConfigError when `policy` is missing or names none of them, or is given for a single-agent one.
PolicyFile export_policy(const RestoredAlgorithm& restored, const std::string& policy = "");

}  // namespace rlx
