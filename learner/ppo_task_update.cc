// PpoLearner's update as numbered tasks, for the parameter-server strategy
// (learner/parameter_server.h): every rank prepares the whole batch alike, computes the gradients
// of the tasks the server hands it at the weights the server sends, and the server's learner
// applies them one by one.
#include <cmath>
#include <cstring>

#include "learner/gradient_clip.h"
#include "learner/non_finite.h"
#include "learner/ppo_learner.h"
#include "learner/tensor_copies.h"
#include "native/ppo_update_steps.h"

namespace rlx {

namespace {


}  // namespace

int64_t PpoLearner::begin_tasks(const std::vector<SampleBatch>& batches, int64_t timesteps_done) {
  if (model_config_.recurrent()) throw std::invalid_argument("learner_sync: parameter_server trains no recurrent model");
  if (scaler_.enabled()) throw std::invalid_argument("learner_sync: parameter_server does not train in precision fp16");
  check_batches(batches);
  if (config_.kl_coeff > 0.0 && num_updates_ % config_.target_update_frequency == 0) refresh_target();
  auto tasks = std::make_unique<TaskUpdate>();
  // The driver scaled the rewards of the whole batch (its scaler is the run's); prepare must not again.
  struct Prescaled {
    bool& flag;
    explicit Prescaled(bool& f) : flag(f) { flag = true; }
    ~Prescaled() { flag = false; }
  } prescaled(rewards_prescaled_);
  tasks->data = prepare(batches, /*update_statistics=*/true);
  tasks->metrics = scheduled_metrics(timesteps_done, tasks->data, tasks->data.num_samples);
  tasks->options = loss_options(tasks->metrics.clip_param);
  optimizer_->param_groups()[0].options().set_lr(tasks->metrics.lr);
  minibatches_.start(seed_, num_updates_, tasks->data.num_samples, config_.minibatch_size);
  tasks->minibatches = minibatches_.num_minibatches();
  for (int epoch = 0; epoch < config_.num_epochs; ++epoch) tasks->orders.push_back(minibatches_.next_epoch());
  reattach_gradients();
  tasks_ = std::move(tasks);
  return static_cast<int64_t>(config_.num_epochs) * tasks_->minibatches;
}

void PpoLearner::task_gradient(int64_t task, const std::vector<float>& params, std::vector<float>& gradient,
                               std::vector<float>& statistics) {
  if (!tasks_) throw std::logic_error("PpoLearner::task_gradient before begin_tasks");
  const int64_t total = static_cast<int64_t>(tasks_->orders.size()) * tasks_->minibatches;
  if (task < 0 || task >= total) throw std::invalid_argument("task " + std::to_string(task) + " outside 0.." + std::to_string(total - 1));
  if (static_cast<int64_t>(params.size()) != flat_params_.numel()) {
    throw std::invalid_argument("weights of " + std::to_string(params.size()) + " values for a model of " +
                                std::to_string(flat_params_.numel()));
  }
  {
    torch::NoGradGuard no_grad;
    flat_params_.copy_(torch::from_blob(const_cast<float*>(params.data()), {flat_params_.numel()}, torch::kFloat));
  }
  const std::vector<int64_t>& order = tasks_->orders[static_cast<size_t>(task / tasks_->minibatches)];
  const int64_t index = task % tasks_->minibatches;
  const int64_t start = minibatches_.minibatch_start(index);
  const int64_t size = minibatches_.minibatch_size(index);
  const TrainBatch rows = rows_in_order(tasks_->data, std::vector<int64_t>(order.begin() + start, order.begin() + start + size));
  const torch::Tensor stats =
      minibatch_gradients(rows.obs, rows.actions, rows.masks, rows.columns, rows.target_policy, tasks_->options)
          .to(torch::kCPU, torch::kFloat)
          .contiguous();
  statistics.assign(stats.data_ptr<float>(), stats.data_ptr<float>() + stats.numel());
  const torch::Tensor grads = flat_grads_.to(torch::kCPU).contiguous();
  gradient.assign(grads.data_ptr<float>(), grads.data_ptr<float>() + grads.numel());
}

void PpoLearner::apply_task_gradient(const std::vector<float>& gradient) {
  if (!tasks_) throw std::logic_error("PpoLearner::apply_task_gradient before begin_tasks");
  if (static_cast<int64_t>(gradient.size()) != flat_grads_.numel()) {
    throw std::invalid_argument("a gradient of " + std::to_string(gradient.size()) + " values for a model of " +
                                std::to_string(flat_grads_.numel()));
  }
  torch::NoGradGuard no_grad;
  flat_grads_.copy_(torch::from_blob(const_cast<float*>(gradient.data()), {flat_grads_.numel()}, torch::kFloat));
  const double norm = flat_grads_.norm().item<double>();
  if (!std::isfinite(norm)) {
    throw ppo_non_finite_error(num_updates_, 0, 0, norm, 0.0, 0.0);
  }
  tasks_->grad_norm_sum += norm;
  if (config_.grad_clip > 0.0) flat_grads_.mul_(clip_scale(norm, config_.grad_clip));
  optimizer_->step();
}

PpoUpdateMetrics PpoLearner::end_tasks(const std::vector<double>& statistic_sums, int64_t steps) {
  if (!tasks_) throw std::logic_error("PpoLearner::end_tasks before begin_tasks");
  PpoUpdateMetrics metrics = tasks_->metrics;
  if (steps > 0) {
    if (statistic_sums.size() != static_cast<size_t>(PpoLossStat::kCount)) {
      throw std::invalid_argument("end_tasks: " + std::to_string(statistic_sums.size()) + " statistics, expected " +
                                  std::to_string(PpoLossStat::kCount));
    }
    set_ppo_step_means(statistic_sums.data(), tasks_->grad_norm_sum, steps, metrics);
  }
  tasks_.reset();
  ++num_updates_;
  return metrics;
}

std::vector<float> PpoLearner::flat_parameters() const {
  const torch::Tensor params = flat_params_.detach().to(torch::kCPU).contiguous();
  return std::vector<float>(params.data_ptr<float>(), params.data_ptr<float>() + params.numel());
}

}  // namespace rlx
