// torch::optim::Adam's step for a learner whose parameters live in one flat float32 buffer (the
// DQN learner's): once the optimizer holds the buffer's state, the update is rlx's one Adam
// loop (native/dense_backprop.h's adam_step) over that state instead of torch's chain of tensor
// ops. The state and options stay torch's, so the optimizer's save()/load() and lr/eps edits
// keep working. Its rounding is torch's order of operations without FMA: it may differ from
// LibTorch's own CPU Adam in the last bits.
#pragma once

#include <torch/optim/adam.h>
#include <torch/types.h>

namespace rlx {

// One Adam step of `flat_params` ([P] float32, contiguous, on the CPU; the optimizer's only
// parameter) with gradient `flat_grad` ([P], the same layout). Runs optimizer.step() instead
// on the first step (which creates the state) and with amsgrad or weight decay.
void flat_adam_step(torch::optim::Adam& optimizer, const torch::Tensor& flat_params, const torch::Tensor& flat_grad);

}  // namespace rlx
