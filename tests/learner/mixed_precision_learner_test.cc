// The learners with precision bf16 on the CPU (learner/mixed_precision.h): the forward runs in
// bfloat16 under autocast while weights, gradients, Adam's state and the data-parallel gradient
// all-reduce stay float32; and fp16 with its loss scale on CUDA ([gpu], skipped without one).
#include "tests/learner/ppo_test_util.h"

#include <torch/cuda.h>

#include <atomic>
#include <cmath>
#include <mutex>
#include <set>
#include <vector>

#include "learner/data_parallel.h"
#include "learner/dqn_learner.h"
#include "learner/torch_layers.h"
#include "models/layer_kinds.h"
#include "tests/learner/data_parallel_test_util.h"
#include "tests/learner/learner_test_configs.h"

namespace rlx {
namespace {

using rlx_test::model_config_for;
using rlx_test::Sampler;

// A layer kind that passes its input through and notes the dtype it saw, with gradients on (a
// minibatch step) or off (the update's values and targets).
constexpr const char* kProbeLayer = "dtype_probe";
constexpr const char* kProbeEncoder = "mlp_dtype_probe";
std::atomic<int> g_training_dtype{-1}, g_no_grad_dtype{-1};

ModelSpec probed_model() {
  static std::once_flag once;
  std::call_once(once, [] {
    LayerKind probe;
    probe.output_size = [](const LayerSpec& layer) { return layer.in; };
    probe.parameters = [](const LayerSpec&) { return std::vector<std::pair<std::string, std::vector<int64_t>>>{}; };
    probe.initialize = [](const LayerSpec&, float* const*, Rng&) {};
    probe.forward = [](const LayerSpec& layer, const float* const*, const float* x, int64_t rows, float* y) {
      std::copy(x, x + rows * layer.in, y);
    };
    register_layer_kind(kProbeLayer, probe);
    register_encoder_kind(kProbeEncoder, [](const ModelSpec& spec) {
      std::vector<EncoderLayer> layers;
      for (int64_t width : spec.hidden_sizes) layers.push_back({kDenseLayer, width, parse_activation(spec.activation)});
      layers.push_back({kProbeLayer, 0, Activation::kNone});
      return layers;
    });
    register_torch_layer(kProbeLayer, [](const LayerSpec&, const std::vector<torch::Tensor>&, const torch::Tensor& x) {
      (torch::GradMode::is_enabled() ? g_training_dtype : g_no_grad_dtype) = static_cast<int>(x.scalar_type());
      return x;
    });
  });
  ModelSpec spec = model_config_for("CartPole-v1", {32, 32});
  spec.encoder = kProbeEncoder;
  return spec;
}

// Two CartPole fragments of 4 envs x 64 steps from the model's untrained policy.
std::vector<SampleBatch> cartpole_fragments(const ModelSpec& model) {
  Sampler sampler("CartPole-v1", model, 4, 64, 3);
  return sampler.collect(2);
}

PpoConfig small_ppo(const char* precision) {
  PpoConfig config = test::ppo_test_config();
  config.num_epochs = 2;
  config.minibatch_size = 128;
  config.entropy_coeff = 0.01;
  config.precision = precision;
  return config;
}

DqnConfig small_dqn(const char* precision) {
  DqnConfig config = test::dqn_test_config();
  config.lr = 1e-3;
  config.learning_starts = 0;
  config.total_timesteps = 10000;
  config.precision = precision;
  return config;
}

// max |a - b| over max |b|.
double relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double diff = 0.0, ref = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(a[i]) - b[i]));
    ref = std::max(ref, std::abs(static_cast<double>(b[i])));
  }
  return diff / ref;
}

// A low-precision result against fp32's: different (else no low precision ran), by less than
// `bound` of the reference's largest element (else more than rounding differs).
void check_rounded_like(const std::vector<float>& low, const std::vector<float>& reference, double bound) {
  const double difference = relative_difference(low, reference);
  INFO("differs from fp32's by " << difference << " of its largest element");
  CHECK(difference > 0.0);
  CHECK(difference < bound);
}

// The parameters' change from `start` to `end`, per scalar.
std::vector<float> change(const std::vector<float>& start, const std::vector<float>& end) {
  std::vector<float> out(start.size());
  for (size_t i = 0; i < start.size(); ++i) out[i] = end[i] - start[i];
  return out;
}

// Every parameter, its gradient and Adam's state are float32.
void check_float32_state(torch::nn::Module& model, torch::optim::Adam& optimizer) {
  for (const torch::Tensor& p : model.parameters()) {
    CHECK(p.scalar_type() == torch::kFloat);
    REQUIRE(p.grad().defined());
    CHECK(p.grad().scalar_type() == torch::kFloat);
  }
  REQUIRE_FALSE(optimizer.state().empty());
  for (const auto& entry : optimizer.state()) {
    const auto& adam = static_cast<const torch::optim::AdamParamState&>(*entry.second);
    CHECK(adam.exp_avg().scalar_type() == torch::kFloat);
    CHECK(adam.exp_avg_sq().scalar_type() == torch::kFloat);
  }
}

TEST_CASE("PpoLearner in bf16: a layer inside the network sees bfloat16 in the minibatch steps, float32 in the targets pass",
          "[learner][precision]") {
  set_inference_threads(1);
  const ModelSpec model = probed_model();
  const std::vector<SampleBatch> batches = cartpole_fragments(model);
  for (const char* precision : {"fp32", "bf16"}) {
    INFO(precision);
    g_training_dtype = g_no_grad_dtype = -1;
    PpoLearner learner(model, small_ppo(precision), 1);
    learner.update(batches, 0);
    const auto expected = precision == std::string("bf16") ? torch::kBFloat16 : torch::kFloat;
    CHECK(g_training_dtype == static_cast<int>(expected));
    CHECK(g_no_grad_dtype == static_cast<int>(torch::kFloat));
    check_float32_state(learner.model(), learner.optimizer());
  }
}

TEST_CASE("PpoLearner in bf16 on the CPU: autograd's update, close to fp32's, with float32 weights, gradients and Adam",
          "[learner][precision]") {
  set_inference_threads(1);
  const ModelSpec model = model_config_for("CartPole-v1", {64, 64});
  const std::vector<SampleBatch> batches = cartpole_fragments(model);
  PpoLearner fp32(model, small_ppo("fp32"), 1);
  const std::vector<float> start = fp32.model().flat_parameters();
  const PpoUpdateMetrics m32 = fp32.update(batches, 0);
  PpoLearner bf16(model, small_ppo("bf16"), 1);
  const PpoUpdateMetrics m16 = bf16.update(batches, 0);
  PpoConfig autograd = small_ppo("bf16");
  autograd.analytic_gradients = false;
  PpoLearner bf16_autograd(model, autograd, 1);
  bf16_autograd.update(batches, 0);

  // analytic_gradients does not apply in bf16: both learners took autograd's gradients.
  CHECK(rlx_test::same_parameters(bf16, bf16_autograd));
  check_float32_state(bf16.model(), bf16.optimizer());
  CHECK(m16.skipped_steps == 0);
  CHECK(m16.loss_scale == 0.0);
  CHECK(m16.num_minibatch_steps == m32.num_minibatch_steps);
  // bfloat16 keeps 8 bits of mantissa: the update differs from fp32's, by a few percent at most.
  check_rounded_like(change(start, bf16.model().flat_parameters()), change(start, fp32.model().flat_parameters()), 0.1);
  CHECK(m16.policy_loss == Approx(m32.policy_loss).margin(0.01));
  CHECK(m16.vf_loss == Approx(m32.vf_loss).epsilon(0.05));
  CHECK(m16.entropy == Approx(m32.entropy).epsilon(0.01));
  // evaluate() computes the loss in bf16 too: near, not equal.
  const PpoUpdateMetrics e16 = bf16.evaluate(batches, 0);
  PpoLearner same_weights(model, small_ppo("fp32"), 1);
  same_weights.model().load_flat_parameters(bf16.model().flat_parameters().data(), bf16.model().num_parameters());
  same_weights.load_state_json(bf16.state_json());
  const PpoUpdateMetrics e32 = same_weights.evaluate(batches, 0);
  CHECK(e16.vf_loss != e32.vf_loss);
  CHECK(e16.vf_loss == Approx(e32.vf_loss).epsilon(0.05));
  CHECK_FALSE(bf16.state_json().contains("loss_scaler"));  // no scale to keep in bf16
}

TEST_CASE("recurrent PpoLearner in bf16: LSTM and GRU cores train on sequences close to fp32", "[learner][precision][recurrent]") {
  set_inference_threads(1);
  for (const char* core : {"lstm", "gru"}) {
    INFO(core);
    ModelSpec model = model_config_for("CartPole-v1", {16});
    model.core = core;
    model.core_size = 8;
    Sampler sampler("CartPole-v1", model, 4, 32, 5);
    const std::vector<SampleBatch> batches = sampler.collect(2);
    PpoConfig config = small_ppo("bf16");
    config.max_seq_len = 8;
    config.minibatch_size = 64;
    PpoLearner bf16(model, config, 3);
    const std::vector<float> start = bf16.model().flat_parameters();
    const PpoUpdateMetrics before = bf16.evaluate(batches, 0);
    const PpoUpdateMetrics m16 = bf16.update(batches, 0);
    CHECK(m16.num_minibatch_steps == 2 * 4);
    CHECK(bf16.evaluate(batches, 0).vf_loss < before.vf_loss);
    check_float32_state(bf16.model(), bf16.optimizer());
    config.precision = "fp32";
    PpoLearner fp32(model, config, 3);
    fp32.update(batches, 0);
    check_rounded_like(change(start, bf16.model().flat_parameters()), change(start, fp32.model().flat_parameters()), 0.1);
  }
}

TEST_CASE("Data-parallel PPO and DQN in bf16: the gradient all-reduce sees float32", "[learner][precision][dp]") {
  set_inference_threads(1);
  const ModelSpec model = model_config_for("CartPole-v1", {32, 32});
  Sampler sampler("CartPole-v1", model, 2, 64, 7);
  const std::vector<SampleBatch> batches = sampler.collect(4);  // 4 fragments of 128
  std::set<int> seen[2];
  // Records the dtypes data_parallel.cc's gradient hook is given, then sums as it does.
  const auto recording = [&seen](int rank, std::function<void(std::vector<torch::Tensor>&)> reduce) {
    return [&seen, rank, reduce](std::vector<torch::Tensor>& grads) {
      for (const torch::Tensor& g : grads) seen[rank].insert(static_cast<int>(g.scalar_type()));
      reduce(grads);
    };
  };
  const PpoConfig config = small_ppo("bf16");
  PpoLearner single(model, config, 11);
  single.update(batches, 0);
  std::vector<std::unique_ptr<PpoLearner>> ppo;
  for (int r = 0; r < 2; ++r) ppo.push_back(std::make_unique<PpoLearner>(model, config, 11));
  rlx_test::run_ranks(2, [&](int rank, Communicator& comm) {
    PpoLearner& learner = *ppo[static_cast<size_t>(rank)];
    PpoDataParallelHooks hooks = make_ppo_hooks(comm, comm);
    hooks.allreduce_gradients = recording(rank, hooks.allreduce_gradients);
    learner.set_data_parallel_hooks(hooks);
    PpoShard shard;
    shard.global_samples = 512;
    std::vector<SampleBatch> mine;
    for (int f = 2 * rank; f < 2 * rank + 2; ++f) {
      mine.push_back(batches[static_cast<size_t>(f)]);
      shard.fragment_offsets.push_back(128 * f);
    }
    learner.update(mine, 0, &shard);
  });
  for (int rank = 0; rank < 2; ++rank) {
    INFO("PPO rank " << rank);
    CHECK(seen[rank] == std::set<int>{static_cast<int>(torch::kFloat)});
    // The shards' bf16 rounding is the whole batch's row for row; the sums differ by float rounding.
    CHECK(relative_difference(ppo[static_cast<size_t>(rank)]->model().flat_parameters(),
                              single.model().flat_parameters()) < 1e-3);
    seen[rank].clear();
  }

  DqnConfig dqn = small_dqn("bf16");
  dqn.buffer_size = 4000;
  std::vector<std::unique_ptr<DqnLearner>> dqn_ranks;  // built here: construction seeds torch's global generator
  for (int r = 0; r < 2; ++r) dqn_ranks.push_back(std::make_unique<DqnLearner>(model, dqn, 3));
  rlx_test::run_ranks(2, [&](int rank, Communicator& comm) {
    DqnLearner& learner = *dqn_ranks[static_cast<size_t>(rank)];
    DqnDataParallelHooks hooks = make_dqn_hooks(comm, comm);
    hooks.allreduce_gradients = recording(rank, hooks.allreduce_gradients);
    learner.set_data_parallel_hooks(hooks);
    for (int f = rank; f < 4; f += 2) learner.add(batches[static_cast<size_t>(f)]);
    learner.train(2, 0);
  });
  for (int rank = 0; rank < 2; ++rank) CHECK(seen[rank] == std::set<int>{static_cast<int>(torch::kFloat)});
}

TEST_CASE("DqnLearner in bf16 on the CPU: autograd's steps, close to fp32's, with float32 weights, gradients and Adam",
          "[learner][precision]") {
  set_inference_threads(1);
  const ModelSpec model = model_config_for("CartPole-v1", {64, 64});
  const std::vector<SampleBatch> batches = cartpole_fragments(model);
  const DqnConfig config = small_dqn("bf16");
  DqnLearner fp32(model, small_dqn("fp32"), 4);
  fp32.use_hand_written_gradients(false);  // the same gradient code, in float32
  DqnLearner bf16(model, config, 4);
  CHECK_FALSE(bf16.hand_written_gradients());
  CHECK_THROWS_WITH(bf16.use_hand_written_gradients(true), Catch::Contains("precision bf16 trains through autograd"));
  for (DqnLearner* learner : {&fp32, &bf16}) {
    for (const SampleBatch& batch : batches) learner->add(batch);
  }
  // One step each from the same weights on the same draw: the gradients (left in the flat
  // buffer after the step) differ by bfloat16's rounding only. (Adam's first steps are about
  // lr * sign(gradient), so parameter changes would differ wherever a gradient is near 0.)
  const DqnUpdateMetrics m32 = fp32.train(1, 0);
  const DqnUpdateMetrics m16 = bf16.train(1, 0);
  check_float32_state(bf16.online(), bf16.optimizer());
  CHECK(m16.skipped_steps == 0);
  CHECK(m16.loss_scale == 0.0);
  const auto gradient = [](QNetwork& net) {
    std::vector<float> out;
    for (const torch::Tensor& p : net.parameters()) {
      const torch::Tensor g = p.grad().contiguous();
      out.insert(out.end(), g.data_ptr<float>(), g.data_ptr<float>() + g.numel());
    }
    return out;
  };
  check_rounded_like(gradient(bf16.online()), gradient(fp32.online()), 0.05);
  CHECK(m16.loss == Approx(m32.loss).epsilon(0.05));
  CHECK(m16.q_mean == Approx(m32.q_mean).margin(0.01));
  CHECK(m16.grad_norm == Approx(m32.grad_norm).epsilon(0.05));
  DqnConfig changed = config;
  changed.precision = "fp32";
  CHECK_THROWS_WITH(bf16.set_config(changed), Catch::Contains("cannot change precision"));
}

// The reason a CUDA test cannot run here, or "".
std::string no_cuda() {
  if (!torch::cuda::is_available()) return "no GPU visible, or LibTorch is a CPU-only build";
  return "";
}

TEST_CASE("fp16 on CUDA: PPO and DQN train with a loss scale that state_json carries to a resumed learner", "[learner][precision][gpu]") {
  const std::string why = no_cuda();
  if (!why.empty()) {
    WARN("[gpu] test skipped: " << why);
    return;
  }
  const torch::Device cuda(torch::kCUDA, 0);
  const ModelSpec model = model_config_for("CartPole-v1", {64, 64});
  const std::vector<SampleBatch> batches = cartpole_fragments(model);
  PpoLearner fp32(model, small_ppo("fp32"), 1, cuda);
  PpoLearner fp16(model, small_ppo("fp16"), 1, cuda);
  const std::vector<float> start = fp32.model().flat_parameters();
  const PpoUpdateMetrics m32 = fp32.update(batches, 0);
  const PpoUpdateMetrics m16 = fp16.update(batches, 0);
  check_float32_state(fp16.model(), fp16.optimizer());
  CHECK(m16.num_minibatch_steps + m16.skipped_steps == m32.num_minibatch_steps);
  CHECK(m16.loss_scale == fp16.loss_scaler().scale());
  CHECK(m16.loss_scale == 65536.0 / std::pow(2.0, static_cast<double>(m16.skipped_steps)));
  check_rounded_like(change(start, fp16.model().flat_parameters()), change(start, fp32.model().flat_parameters()), 0.1);
  const nlohmann::json state = fp16.state_json();
  REQUIRE(state.contains("loss_scaler"));
  PpoLearner resumed(model, small_ppo("fp16"), 1, cuda);
  resumed.load_state_json(state);
  CHECK(resumed.loss_scaler().scale() == fp16.loss_scaler().scale());
  CHECK(resumed.loss_scaler().skipped_steps() == fp16.loss_scaler().skipped_steps());

  const DqnConfig config = small_dqn("fp16");
  DqnLearner dqn(model, config, 4, cuda);
  for (const SampleBatch& batch : batches) dqn.add(batch);
  const DqnUpdateMetrics m = dqn.train(8, 0);
  check_float32_state(dqn.online(), dqn.optimizer());
  CHECK(m.loss_scale == dqn.loss_scaler().scale());
  CHECK(m.num_gradient_steps == 8);
  REQUIRE(dqn.state_json().contains("loss_scaler"));
  DqnLearner dqn_resumed(model, config, 4, cuda);
  dqn_resumed.load_state_json(dqn.state_json());
  CHECK(dqn_resumed.loss_scaler().scale() == dqn.loss_scaler().scale());
}

}  // namespace
}  // namespace rlx
