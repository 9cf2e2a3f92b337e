// `rlx export`: a checkpoint's policy as one self-describing file (models/policy_file.h) that
// rlx::Policy (C++, no LibTorch) and python/rlx_policy.py (NumPy) run.
#pragma once

#include "algorithms/evaluation.h"
#include "models/policy_file.h"

namespace rlx {

// The policy file of a restored checkpoint: the network, weights and observation statistics
// its deterministic evaluation policy acts with, and where it came from.
PolicyFile export_policy(const RestoredAlgorithm& restored);

}  // namespace rlx
