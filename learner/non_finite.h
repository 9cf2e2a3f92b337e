// The learners' guard against divergence: a non-finite loss or gradient stops an update before
// any weight changes (the error type is torch-free, in core/non_finite_error.h).
#pragma once

#include <torch/types.h>

#include "core/non_finite_error.h"

namespace rlx {

// True when every element of `values` (any float tensor, on any device) is finite; one host sync.
inline bool all_finite(const torch::Tensor& values) { return torch::isfinite(values).all().item<bool>(); }

}  // namespace rlx
