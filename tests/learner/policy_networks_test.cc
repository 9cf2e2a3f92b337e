#include "tests/learner/torch_catch.h"

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "learner/policy_networks.h"

namespace {

rlx::ModelSpec box_config(std::vector<int64_t> hidden) {
  rlx::ModelSpec config;
  config.obs_size = 4;
  config.action_space = rlx::Space::box({2}, -1.0f, 1.0f);
  config.hidden_sizes = std::move(hidden);
  return config;
}

rlx::ModelSpec discrete_config(int64_t obs, int64_t n, std::vector<int64_t> hidden) {
  rlx::ModelSpec config;
  config.obs_size = obs;
  config.action_space = rlx::Space::discrete(n);
  config.hidden_sizes = std::move(hidden);
  return config;
}

torch::Tensor param(const torch::nn::Module& module, const std::string& name) {
  return module.named_parameters()[name].detach();
}

// Max |a - b| over two tensors.
double max_diff(const torch::Tensor& a, const torch::Tensor& b) { return (a - b).abs().max().item<double>(); }

}  // namespace

TEST_CASE("ActorCritic flat parameters follow the documented order", "[learner][model]") {
  rlx::ActorCritic model(box_config({3, 5}));
  const std::vector<std::string> expected = {"log_std",     "pi_0.weight", "pi_0.bias",     "pi_1.weight",
                                             "pi_1.bias",   "pi_out.weight", "pi_out.bias", "vf_0.weight",
                                             "vf_0.bias",   "vf_1.weight", "vf_1.bias",     "vf_out.weight",
                                             "vf_out.bias"};
  CHECK(rlx::flat_parameter_names(model) == expected);
  const int64_t policy = (4 * 3 + 3) + (3 * 5 + 5) + (5 * 2 + 2);
  const int64_t value = (4 * 3 + 3) + (3 * 5 + 5) + (5 * 1 + 1);
  CHECK(model.num_parameters() == 2 + policy + value);

  // Two models from the same config share the layout.
  rlx::ActorCritic other(box_config({3, 5}));
  CHECK(rlx::flat_parameter_names(other) == expected);
  CHECK(other.num_parameters() == model.num_parameters());

  rlx::ModelSpec shared = box_config({3, 5});
  shared.shared_trunk = true;
  rlx::ActorCritic trunk(shared);
  CHECK(rlx::flat_parameter_names(trunk) ==
        std::vector<std::string>{"log_std", "trunk_0.weight", "trunk_0.bias", "trunk_1.weight", "trunk_1.bias",
                                 "pi_out.weight", "pi_out.bias", "vf_out.weight", "vf_out.bias"});

  rlx::ActorCritic discrete(discrete_config(4, 2, {8}));
  CHECK(rlx::flat_parameter_names(discrete).front() == "pi_0.weight");
}

TEST_CASE("Flat parameters round trip and load into the documented places", "[learner][model]") {
  rlx::ActorCritic model(box_config({3, 5}));
  std::vector<float> flat(static_cast<size_t>(model.num_parameters()));
  std::iota(flat.begin(), flat.end(), 0.0f);
  for (float& v : flat) v *= 0.001f;
  model.load_flat_parameters(flat.data(), flat.size());
  CHECK(model.flat_parameters() == flat);

  // log_std holds flat[0..2), pi_0.weight [3, 4] row-major follows.
  CHECK(param(model, "log_std")[1].item<float>() == flat[1]);
  CHECK(param(model, "pi_0.weight")[0][0].item<float>() == flat[2]);
  CHECK(param(model, "pi_0.weight")[1][0].item<float>() == flat[2 + 4]);
  CHECK(param(model, "pi_0.bias")[0].item<float>() == flat[2 + 12]);
  CHECK(param(model, "vf_out.bias")[0].item<float>() == flat.back());

  // Another model loads the vector and exports the same values; a clone copies them.
  rlx::ActorCritic other(box_config({3, 5}));
  other.load_flat_parameters(flat.data(), flat.size());
  CHECK(other.flat_parameters() == flat);
  auto clone = std::dynamic_pointer_cast<rlx::ActorCritic>(model.clone());
  REQUIRE(clone);
  CHECK(clone->flat_parameters() == flat);

  // Wrong counts throw and leave the weights alone.
  CHECK_THROWS_AS(model.load_flat_parameters(flat.data(), flat.size() - 1), std::invalid_argument);
  CHECK_THROWS_AS(model.load_flat_parameters(flat.data(), flat.size() + 1), std::invalid_argument);
  std::vector<float> small(3);
  CHECK_THROWS_AS(rlx::copy_flat_parameters(model, small.data(), small.size()), std::invalid_argument);
  CHECK(model.flat_parameters() == flat);

  rlx::QNetwork q(discrete_config(4, 3, {6}));
  std::vector<float> q_flat(static_cast<size_t>(q.num_parameters()), 0.5f);
  q.load_flat_parameters(q_flat.data(), q_flat.size());
  CHECK(q.flat_parameters() == q_flat);
  CHECK_THROWS_AS(q.load_flat_parameters(q_flat.data(), 2), std::invalid_argument);
}

TEST_CASE("ActorCritic initialises orthogonally with the PPO gains", "[learner][model]") {
  torch::manual_seed(3);
  rlx::ModelSpec config = discrete_config(4, 2, {64, 64});
  rlx::ActorCritic model(config);
  const auto eye = [](int64_t n) { return torch::eye(n); };

  const torch::Tensor hidden = param(model, "pi_1.weight");  // [64, 64]
  CHECK(max_diff(hidden.mm(hidden.t()), 2.0 * eye(64)) < 1e-4);
  const torch::Tensor input = param(model, "vf_0.weight");  // [64, 4]: orthonormal columns
  CHECK(max_diff(input.t().mm(input), 2.0 * eye(4)) < 1e-4);
  const torch::Tensor policy_out = param(model, "pi_out.weight");  // [2, 64]
  CHECK(max_diff(policy_out.mm(policy_out.t()), 1e-4 * eye(2)) < 1e-7);
  const torch::Tensor value_out = param(model, "vf_out.weight");  // [1, 64]
  CHECK(value_out.pow(2).sum().item<double>() == Approx(1.0).epsilon(1e-4));
  for (const auto& item : model.named_parameters()) {
    if (item.key().find("bias") != std::string::npos) CHECK(item.value().abs().max().item<float>() == 0.0f);
  }

  // Policy outputs start small, so the initial policy is near uniform.
  torch::NoGradGuard no_grad;
  const torch::Tensor logits = model.policy_forward(torch::randn({16, 4}));
  CHECK(logits.abs().max().item<float>() < 0.1f);

  rlx::ModelSpec gaussian = box_config({8});
  gaussian.log_std_init = -0.5;
  rlx::ActorCritic box(gaussian);
  CHECK(max_diff(box.log_std(), torch::full({2}, -0.5)) == 0.0);
}

TEST_CASE("ActorCritic without ortho_init keeps nn::Linear's default init", "[learner][model]") {
  torch::manual_seed(3);
  rlx::ModelSpec config = discrete_config(4, 2, {64, 64});
  config.ortho_init = false;
  rlx::ActorCritic model(config);
  for (const char* name : {"pi_0", "pi_1", "pi_out", "vf_0", "vf_out"}) {
    CAPTURE(name);
    const torch::Tensor weight = param(model, std::string(name) + ".weight");
    const torch::Tensor bias = param(model, std::string(name) + ".bias");
    const double bound = 1.0 / std::sqrt(static_cast<double>(weight.size(1)));
    CHECK(weight.abs().max().item<double>() <= bound);
    CHECK(bias.abs().max().item<double>() <= bound);
    CHECK(bias.abs().max().item<double>() > 0.0);  // not zeroed, unlike the orthogonal init
  }
  // The policy output is not scaled down to 0.01: its logits are spread more than the orthogonal init's.
  torch::NoGradGuard no_grad;
  CHECK(model.policy_forward(torch::randn({16, 4})).abs().max().item<float>() > 0.1f);
}

TEST_CASE("Model configs are validated", "[learner][model]") {
  rlx::ModelSpec config = discrete_config(4, 2, {8});
  config.activation = "gelu";
  CHECK_THROWS_WITH(rlx::ActorCritic(config), Catch::Contains("gelu"));
  CHECK_THROWS_AS(rlx::QNetwork(config), std::invalid_argument);
  config.activation = "relu";
  CHECK_NOTHROW(rlx::ActorCritic(config));
  config.obs_size = 0;
  CHECK_THROWS_AS(rlx::ActorCritic(config), std::invalid_argument);
  config = discrete_config(4, 2, {8, 0});
  CHECK_THROWS_AS(rlx::ActorCritic(config), std::invalid_argument);
  CHECK_THROWS_WITH(rlx::QNetwork(box_config({8})), Catch::Contains("Discrete"));
}

TEST_CASE("ActorCritic forward shapes, and a shared trunk feeds both heads", "[learner][model]") {
  torch::NoGradGuard no_grad;
  rlx::ModelSpec config = box_config({16, 16});
  config.shared_trunk = true;
  config.activation = "relu";
  rlx::ActorCritic model(config);
  const torch::Tensor obs = torch::randn({5, 4});
  const rlx::PolicyOutput out = model.forward(obs);
  CHECK(out.policy.sizes() == torch::IntArrayRef({5, 2}));
  CHECK(out.value.sizes() == torch::IntArrayRef({5}));
  CHECK(max_diff(out.value, model.value_forward(obs)) == 0.0);
  CHECK(max_diff(out.policy, model.policy_forward(obs)) == 0.0);
}

TEST_CASE("QNetwork dueling heads combine as V + A - mean(A)", "[learner][model]") {
  rlx::ModelSpec config = discrete_config(2, 3, {});  // linear heads: easy to compute by hand
  config.dueling = true;
  rlx::QNetwork q(config);
  CHECK(rlx::flat_parameter_names(q) ==
        std::vector<std::string>{"value_out.weight", "value_out.bias", "advantage_out.weight", "advantage_out.bias"});
  // V(s) = 1*s0 + 2*s1 + 0.5; A(s) = W s + b with W = [[1, 0], [0, 1], [1, 1]], b = [0, 1, -1].
  const std::vector<float> flat = {1, 2, 0.5f, 1, 0, 0, 1, 1, 1, 0, 1, -1};
  q.load_flat_parameters(flat.data(), flat.size());
  torch::NoGradGuard no_grad;
  const torch::Tensor values = q.forward(torch::tensor({{1.0f, 2.0f}, {-1.0f, 0.0f}}));
  // Row 0: V = 5.5, A = [1, 3, 2], mean 2 -> Q = [4.5, 6.5, 5.5].
  // Row 1: V = -0.5, A = [-1, 1, -2], mean -2/3 -> Q = [-0.8333, 1.1667, -1.8333].
  const torch::Tensor expected = torch::tensor({{4.5f, 6.5f, 5.5f}, {-0.5f - 1.0f / 3, -0.5f + 5.0f / 3, -0.5f - 4.0f / 3}});
  CHECK(max_diff(values, expected) < 1e-5);

  config.dueling = false;
  rlx::QNetwork plain(config);
  CHECK(rlx::flat_parameter_names(plain) == std::vector<std::string>{"q_out.weight", "q_out.bias"});
  CHECK(plain.forward(torch::zeros({4, 2})).sizes() == torch::IntArrayRef({4, 3}));
}

TEST_CASE("set_inference_threads sets LibTorch's threads and gives back the previous count", "[learner][policy]") {
  const int before = rlx::set_inference_threads(1);
  CHECK(torch::get_num_threads() == 1);
  CHECK(rlx::set_inference_threads(before) == 1);
  CHECK(torch::get_num_threads() == before);
  CHECK_THROWS_AS(rlx::set_inference_threads(0), std::invalid_argument);
}
