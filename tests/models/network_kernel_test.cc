// The torch-free inference kernel against the learner's LibTorch networks: the same layout,
// the same outputs to 1e-5, and the same actions under the same seed.
#include "tests/learner/torch_catch.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/rng.h"
#include "learner/policy_networks.h"
#include "models/action_sampling.h"
#include "models/network_kernel.h"
#include "models/network_layout.h"
#include "models/rollout_policy.h"
#include "tests/models/normal_values.h"

namespace {

struct Shape {
  bool discrete;
  bool shared_trunk;
  std::vector<int64_t> hidden;
  const char* activation;
};

// Every network shape rlx trains: discrete and Box heads, separate and shared trunks, both
// activations, no hidden layer up to the MuJoCo and DQN widths.
std::vector<Shape> actor_critic_shapes() {
  std::vector<Shape> shapes;
  for (bool discrete : {true, false}) {
    for (bool shared : {false, true}) {
      for (const char* activation : {"tanh", "relu"}) {
        for (const std::vector<int64_t>& hidden : {std::vector<int64_t>{}, {64, 64}, {256, 256}, {8, 16, 8}}) {
          shapes.push_back({discrete, shared, hidden, activation});
        }
      }
    }
  }
  return shapes;
}

rlx::ModelSpec config_for(const Shape& shape, int64_t obs = 11, int64_t actions = 3) {
  rlx::ModelSpec config;
  config.obs_size = obs;
  config.action_space = shape.discrete ? rlx::Space::discrete(actions) : rlx::Space::box({actions}, -1.0f, 1.0f);
  config.hidden_sizes = shape.hidden;
  config.activation = shape.activation;
  config.shared_trunk = shape.shared_trunk;
  config.log_std_init = -0.4;
  return config;
}

using rlx_test::normal_values;

// The module's weights moved away from their init (so policies are far from uniform and tanh
// units saturate), loaded back into it; returns them flat.
std::vector<float> perturbed_weights(torch::nn::Module& module, uint64_t seed) {
  std::vector<float> flat = rlx::flat_parameters(module);
  const std::vector<float> noise = normal_values(flat.size(), seed, 0.15);
  for (size_t i = 0; i < flat.size(); ++i) flat[i] += noise[i];
  rlx::load_flat_parameters(module, flat.data(), flat.size());
  return flat;
}

torch::Tensor rows_of(const std::vector<float>& values, int64_t rows) { return torch::tensor(values).view({rows, -1}); }

// |a - b| <= 1e-5 (1 + |b|) over two equally long arrays; returns the largest |a - b|.
double check_close(const float* kernel, const torch::Tensor& reference) {
  const torch::Tensor flat = reference.contiguous().view({-1});
  double worst = 0.0;
  for (int64_t i = 0; i < flat.numel(); ++i) {
    const double ref = flat[i].item<float>();
    const double diff = std::abs(kernel[i] - ref);
    worst = std::max(worst, diff);
    CHECK(diff <= 1e-5 * (1.0 + std::abs(ref)));
  }
  return worst;
}

}  // namespace

TEST_CASE("the layout names LibTorch's parameters in their order and shapes", "[models]") {
  std::vector<rlx::ModelSpec> configs;
  for (const Shape& shape : actor_critic_shapes()) configs.push_back(config_for(shape));
  for (const rlx::ModelSpec& config : configs) {
    const rlx::ActorCritic model(config);
    const rlx::ActorCriticLayout layout = rlx::actor_critic_layout(config);
    const auto named = model.named_parameters();
    REQUIRE(layout.parameters.size() == named.size());
    size_t offset = 0;
    for (size_t i = 0; i < named.size(); ++i) {
      CAPTURE(named[i].key());
      CHECK(layout.parameters[i].name == named[i].key());
      CHECK(layout.parameters[i].shape == named[i].value().sizes().vec());
      CHECK(layout.parameters[i].offset == offset);
      offset += static_cast<size_t>(named[i].value().numel());
    }
    CHECK(layout.num_parameters == offset);
  }
  for (bool dueling : {false, true}) {
    rlx::ModelSpec config = config_for({true, false, {32, 32}, "relu"}, 5, 4);
    config.dueling = dueling;
    const rlx::QNetwork model(config);
    const rlx::QNetworkLayout layout = rlx::q_network_layout(config);
    const auto named = model.named_parameters();
    REQUIRE(layout.parameters.size() == named.size());
    for (size_t i = 0; i < named.size(); ++i) {
      CHECK(layout.parameters[i].name == named[i].key());
      CHECK(layout.parameters[i].shape == named[i].value().sizes().vec());
    }
    CHECK(layout.num_parameters == static_cast<size_t>(model.num_parameters()));
  }
}

TEST_CASE("the kernel's ActorCritic outputs match LibTorch to 1e-5 for every shape and activation", "[models]") {
  const int64_t rows = 37;
  double worst = 0.0;
  uint64_t seed = 1;
  for (const Shape& shape : actor_critic_shapes()) {
    CAPTURE(shape.discrete, shape.shared_trunk, shape.hidden.size(), shape.activation);
    const rlx::ModelSpec config = config_for(shape);
    rlx::ActorCritic model(config);
    const std::vector<float> flat = perturbed_weights(model, ++seed);
    rlx::ActorCriticKernel kernel(rlx::actor_critic_layout(config));
    kernel.load(flat.data());
    const std::vector<float> obs = normal_values(static_cast<size_t>(rows * config.obs_size), ++seed, 2.0);
    std::vector<float> policy(static_cast<size_t>(rows * config.policy_output_size())), values(rows);
    kernel.forward(obs.data(), rows, policy.data(), values.data());

    torch::NoGradGuard no_grad;
    const rlx::PolicyOutput reference = model.forward(rows_of(obs, rows));
    worst = std::max(worst, check_close(policy.data(), reference.policy));
    worst = std::max(worst, check_close(values.data(), reference.value));
    if (!shape.discrete) {
      REQUIRE(kernel.log_std().size() == 3);
      check_close(kernel.log_std().data(), model.log_std());
    }
  }
  INFO("largest difference from LibTorch: " << worst);
  CHECK(worst > 0.0);  // the kernel is its own arithmetic, not a copy of LibTorch's outputs
}

TEST_CASE("the kernel's QNetwork outputs match LibTorch to 1e-5, plain and dueling", "[models]") {
  const int64_t rows = 29;
  uint64_t seed = 100;
  for (bool dueling : {false, true}) {
    for (const char* activation : {"relu", "tanh"}) {
      for (const std::vector<int64_t>& hidden : {std::vector<int64_t>{}, {256, 256}, {64}}) {
        CAPTURE(dueling, activation, hidden.size());
        rlx::ModelSpec config = config_for({true, false, hidden, activation}, 4, 5);
        config.dueling = dueling;
        rlx::QNetwork model(config);
        const std::vector<float> flat = perturbed_weights(model, ++seed);
        rlx::QNetworkKernel kernel(rlx::q_network_layout(config));
        kernel.load(flat.data());
        const std::vector<float> obs = normal_values(static_cast<size_t>(rows * 4), ++seed, 2.0);
        std::vector<float> q(static_cast<size_t>(rows * 5));
        kernel.forward(obs.data(), rows, q.data());
        torch::NoGradGuard no_grad;
        check_close(q.data(), model.forward(rows_of(obs, rows)));
      }
    }
  }
}

TEST_CASE("the kernel and LibTorch give the same actions under the same seed", "[models]") {
  const int rows = 64;
  uint64_t seed = 200;
  int64_t compared = 0;
  for (const Shape& shape : actor_critic_shapes()) {
    CAPTURE(shape.discrete, shape.shared_trunk, shape.hidden.size(), shape.activation);
    const rlx::ModelSpec config = config_for(shape);
    rlx::ActorCritic model(config);
    const std::vector<float> flat = perturbed_weights(model, ++seed);
    const uint64_t action_seed = ++seed;
    rlx::ActorCriticPolicy policy(config, action_seed);
    policy.load_weights(flat.data(), flat.size(), 1);
    const std::vector<float> obs = normal_values(static_cast<size_t>(rows * config.obs_size), ++seed, 2.0);
    std::vector<int64_t> indices(rows);
    std::vector<float> actions(static_cast<size_t>(rows * 3)), log_probs(rows), values(rows);
    policy.act(obs.data(), rows, {indices.data(), actions.data(), log_probs.data(), values.data()});

    // The same draws from the same seed, on LibTorch's outputs.
    torch::NoGradGuard no_grad;
    const rlx::PolicyOutput reference = model.forward(rows_of(obs, rows));
    const torch::Tensor outputs = reference.policy.contiguous();
    const torch::Tensor log_std = model.discrete() ? torch::Tensor() : model.log_std().contiguous();
    const torch::Tensor std = model.discrete() ? torch::Tensor() : log_std.exp();
    rlx::Rng rng(action_seed);
    std::vector<float> reference_actions(3);
    for (int r = 0; r < rows; ++r) {
      const float* row = outputs.data_ptr<float>() + r * 3;
      float reference_log_prob = 0.0f;
      if (shape.discrete) {
        CHECK(indices[r] == rlx::sample_categorical(row, 3, rng, false, &reference_log_prob));
      } else {
        reference_log_prob = rlx::sample_diagonal_gaussian(row, std.data_ptr<float>(), log_std.data_ptr<float>(), 3, rng,
                                                           false, reference_actions.data());
        for (int j = 0; j < 3; ++j) CHECK(actions[static_cast<size_t>(r * 3 + j)] == Approx(reference_actions[j]).margin(1e-5));
      }
      CHECK(log_probs[r] == Approx(reference_log_prob).margin(1e-5));
      ++compared;
    }
    // And LibTorch's own log-probabilities of the kernel's actions agree.
    const auto distribution = model.distribution(reference.policy);
    const torch::Tensor chosen = shape.discrete ? torch::tensor(indices) : rows_of(actions, rows);
    check_close(log_probs.data(), distribution.log_prob(chosen));
  }
  CHECK(compared == 64 * static_cast<int64_t>(actor_critic_shapes().size()));
}

TEST_CASE("epsilon-greedy on the kernel takes LibTorch's greedy actions and explores at the same draws", "[models]") {
  rlx::ModelSpec config = config_for({true, false, {256, 256}, "relu"}, 4, 2);
  config.dueling = true;
  rlx::QNetwork model(config);
  const std::vector<float> flat = perturbed_weights(model, 7);
  rlx::EpsilonGreedyQPolicy policy(config, 0.3, 11);
  policy.load_weights(flat.data(), flat.size(), 1);
  const int rows = 200;
  const std::vector<float> obs = normal_values(rows * 4, 8, 1.0);
  std::vector<int64_t> actions(rows);
  policy.act(obs.data(), rows, {actions.data(), nullptr, nullptr, nullptr});
  torch::NoGradGuard no_grad;
  const torch::Tensor q = model.forward(rows_of(obs, rows)).contiguous();
  rlx::Rng rng(11);
  int explored = 0;
  for (int r = 0; r < rows; ++r) {
    const float* row = q.data_ptr<float>() + r * 2;
    CHECK(actions[r] == rlx::epsilon_greedy(row, 2, 0.3, rng));
    if (actions[r] != rlx::argmax(row, 2)) ++explored;
  }
  CHECK(explored > 10);  // about 0.3 * 200 / 2 random actions differ from the greedy one
}

TEST_CASE("the kernel's tanh is within 2e-7 of std::tanh", "[models]") {
  std::vector<float> x;
  for (int i = -200000; i <= 200000; ++i) x.push_back(static_cast<float>(i) * 1e-4f);
  for (float v : {1e-30f, -1e-30f, 1e-8f, 30.0f, -30.0f, 1e30f, -1e30f, 0.0f, -0.0f}) x.push_back(v);
  x.push_back(std::numeric_limits<float>::infinity());
  x.push_back(-std::numeric_limits<float>::infinity());
  // tanh through a one-unit layer: weight 1, bias 0.
  const float one = 1.0f, zero = 0.0f;
  rlx::DenseWeights unit;
  unit.assign(&one, &zero, 1, 1);
  std::vector<float> y(x.size());
  rlx::dense_forward(x.data(), static_cast<int64_t>(x.size()), unit, rlx::Activation::kTanh, y.data());
  double worst = 0.0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(static_cast<double>(y[i]) - std::tanh(static_cast<double>(x[i]))));
  CHECK(worst <= 2e-7);
  CHECK(y[y.size() - 2] == 1.0f);
  CHECK(y[y.size() - 1] == -1.0f);
  const float nan = std::nanf("");
  float out = 0.0f;
  rlx::dense_forward(&nan, 1, unit, rlx::Activation::kTanh, &out);
  CHECK(std::isnan(out));
}

// initial_parameters(layout, 5), once checked to be decided by its seed and to start a
// three-action log_std at -0.4.
static std::vector<float> seeded_initial_parameters(const rlx::ActorCriticLayout& layout) {
  const std::vector<float> flat = rlx::initial_parameters(layout, 5);
  CHECK(flat == rlx::initial_parameters(layout, 5));
  CHECK(flat != rlx::initial_parameters(layout, 6));
  for (size_t i = 0; i < 3; ++i) CHECK(flat[layout.log_std->offset + i] == Approx(-0.4));
  return flat;
}

TEST_CASE("initial_parameters are orthogonal with each layer's gain, zero biases and seeded", "[models]") {
  rlx::ModelSpec config = config_for({false, false, {64, 16}, "tanh"}, 11, 3);
  const rlx::ActorCriticLayout layout = rlx::actor_critic_layout(config);
  const std::vector<float> flat = seeded_initial_parameters(layout);
  for (const rlx::LayerChain* chain : {&layout.policy_chain, &layout.value_chain}) {
    for (const rlx::LayerSpec& layer : *chain) {
      CAPTURE(layer.name);
      for (int64_t o = 0; o < layer.out; ++o) CHECK(flat[layer.bias_offset() + static_cast<size_t>(o)] == 0.0f);
      // W W^T = gain^2 I when out <= in, else W^T W = gain^2 I.
      const bool rows_orthogonal = layer.out <= layer.in;
      const int64_t count = rows_orthogonal ? layer.out : layer.in;
      const int64_t length = rows_orthogonal ? layer.in : layer.out;
      const auto at = [&](int64_t vector, int64_t k) {
        const int64_t r = rows_orthogonal ? vector : k, c = rows_orthogonal ? k : vector;
        return static_cast<double>(flat[layer.weight_offset() + static_cast<size_t>(r * layer.in + c)]);
      };
      for (int64_t a = 0; a < count; ++a) {
        for (int64_t b = 0; b < count; ++b) {
          double dot = 0.0;
          for (int64_t k = 0; k < length; ++k) dot += at(a, k) * at(b, k);
          CHECK(dot == Approx(a == b ? layer.init_gain * layer.init_gain : 0.0).margin(1e-5));
        }
      }
    }
  }
}

TEST_CASE("initial_parameters without ortho_init draw PyTorch's nn.Linear default, weights and biases", "[models]") {
  rlx::ModelSpec config = config_for({false, false, {64, 16}, "tanh"}, 11, 3);
  config.ortho_init = false;
  const rlx::ActorCriticLayout layout = rlx::actor_critic_layout(config);
  const std::vector<float> flat = seeded_initial_parameters(layout);
  for (const rlx::LayerChain* chain : {&layout.policy_chain, &layout.value_chain}) {
    for (const rlx::LayerSpec& layer : *chain) {
      CAPTURE(layer.name);
      CHECK_FALSE(layer.orthogonal_init);
      const double bound = 1.0 / std::sqrt(static_cast<double>(layer.in));
      // Uniform in [-bound, bound): mean 0, variance bound^2 / 3, for the weights and the biases alike.
      const auto check_uniform = [&](size_t offset, int64_t count) {
        double sum = 0.0, sum_squares = 0.0, largest = 0.0;
        for (int64_t i = 0; i < count; ++i) {
          const double v = flat[offset + static_cast<size_t>(i)];
          sum += v;
          sum_squares += v * v;
          largest = std::max(largest, std::abs(v));
        }
        CHECK(largest <= bound);
        CHECK(largest > 0.0);  // biases too: not zeroed as the orthogonal init's
        if (count >= 64) {
          CHECK(largest > 0.9 * bound);
          CHECK(std::abs(sum / count) < 0.2 * bound);
          CHECK(sum_squares / count == Approx(bound * bound / 3.0).epsilon(0.25));
        }
      };
      check_uniform(layer.weight_offset(), layer.out * layer.in);
      check_uniform(layer.bias_offset(), layer.out);
    }
  }
}
