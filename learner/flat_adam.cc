#include "learner/flat_adam.h"

#include <c10/util/string_utils.h>

#include <tuple>

#include "native/dense_backprop.h"

namespace rlx {

void flat_adam_step(torch::optim::Adam& optimizer, const torch::Tensor& flat_params, const torch::Tensor& flat_grad) {
  // torch::optim::Adam's update of the one flat parameter, in one loop over its own state (so
  // save()/load() and the options stay torch's); its first step creates that state.
  auto& state = optimizer.state();
  const auto found = state.find(c10::guts::to_string(flat_params.unsafeGetTensorImpl()));
  const auto& options = static_cast<const torch::optim::AdamOptions&>(optimizer.param_groups()[0].options());
  if (found == state.end() || options.amsgrad() || options.weight_decay() != 0.0) {
    optimizer.step();
    return;
  }
  auto& s = static_cast<torch::optim::AdamParamState&>(*found->second);
  s.step(s.step() + 1);
  adam_step(flat_params.data_ptr<float>(), flat_grad.data_ptr<float>(), s.exp_avg().data_ptr<float>(),
            s.exp_avg_sq().data_ptr<float>(), flat_params.numel(), s.step(), options.lr(), options.eps(),
            std::get<0>(options.betas()), std::get<1>(options.betas()));
}

}  // namespace rlx
