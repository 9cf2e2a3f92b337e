// Mixed precision's pieces (learner/mixed_precision.h): the autocast guard, the dynamic loss
// scale, and the learners' refusal of fp16 on the CPU. The learners in bf16 are
// mixed_precision_learner_test.cc's.
#include "tests/learner/torch_catch.h"

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>

#include "core/config_error.h"
#include "learner/dqn_learner.h"
#include "learner/mixed_precision.h"
#include "learner/ppo_learner.h"
#include "tests/learner/learner_test_configs.h"
#include "tests/learner/ppo_test_util.h"

namespace rlx {
namespace {

constexpr c10::DeviceType kCpu = c10::DeviceType::CPU;

TEST_CASE("AutocastGuard: bf16 turns CPU autocast on for its scope and puts the previous state back", "[learner][precision]") {
  REQUIRE_FALSE(autocast_enabled(kCpu));
  const torch::Tensor a = torch::randn({4, 8}), b = torch::randn({8, 3});
  {
    const AutocastGuard fp32(Precision::kFp32, torch::kCPU);
    CHECK_FALSE(fp32.active());
    CHECK_FALSE(autocast_enabled(kCpu));
    CHECK(torch::mm(a, b).scalar_type() == torch::kFloat);
  }
  {
    const AutocastGuard outer(Precision::kBf16, torch::kCPU);
    CHECK(outer.active());
    CHECK(autocast_enabled(kCpu));
    CHECK(current_autocast_dtype(kCpu) == torch::kBFloat16);
    CHECK(torch::mm(a, b).scalar_type() == torch::kBFloat16);
    CHECK((a + a).scalar_type() == torch::kFloat);  // not on autocast's list: the inputs' dtype
    {
      const AutocastGuard inner(Precision::kBf16, torch::kCPU);
      CHECK(autocast_enabled(kCpu));
    }
    CHECK(autocast_enabled(kCpu));  // the inner guard restored the outer one's state, not "off"
  }
  CHECK_FALSE(autocast_enabled(kCpu));
  CHECK(current_autocast_dtype(kCpu) == torch::kBFloat16);
  CHECK(torch::mm(a, b).scalar_type() == torch::kFloat);
}

TEST_CASE("AutocastGuard: a weight changed after a guard is cast afresh, even in a caller's caching region",
          "[learner][precision]") {
  // Autocast caches the low-precision copy of a weight (a float leaf that requires grad) while its
  // cache is on, until the cache is cleared; torch.autocast clears it only when its outermost
  // region ends. The caller's region here: autocast on, with the cache.
  const torch::Tensor x = torch::ones({1, 4});
  torch::Tensor w = torch::ones({4, 1}).requires_grad_(true);
  const AutocastGuard caller(Precision::kBf16, torch::kCPU);
  at::autocast::set_autocast_cache_enabled(true);
  CHECK(torch::mm(x, w).to(torch::kFloat).item<float>() == 4.0f);  // w's bfloat16 copy is cached
  {
    const AutocastGuard step(Precision::kBf16, torch::kCPU);
    CHECK_FALSE(at::autocast::is_autocast_cache_enabled());
  }
  CHECK(at::autocast::is_autocast_cache_enabled());  // put back as found
  {
    torch::NoGradGuard no_grad;
    w.mul_(2.0);  // the optimizer's step
  }
  CHECK(torch::mm(x, w).to(torch::kFloat).item<float>() == 8.0f);  // the guard's exit dropped the stale copy
}

TEST_CASE("AutocastGuard: a weight used without gradient first still gets its gradient in the same scope",
          "[learner][precision]") {
  // DQN's step: the online net's forward on s' without gradient (double Q's argmax), then on s
  // with it. A cached cast made under no_grad would carry no gradient to the weight.
  const torch::Tensor x = torch::ones({2, 4});
  torch::Tensor w = torch::full({4, 3}, 0.5f).requires_grad_(true);
  torch::Tensor loss;
  {
    const AutocastGuard step(Precision::kBf16, torch::kCPU);
    {
      torch::NoGradGuard no_grad;
      CHECK(torch::mm(x, w).scalar_type() == torch::kBFloat16);
    }
    loss = torch::mm(x, w).to(torch::kFloat).sum();
  }
  REQUIRE(loss.requires_grad());
  loss.backward();
  REQUIRE(w.grad().defined());
  CHECK(w.grad().scalar_type() == torch::kFloat);
  CHECK(torch::allclose(w.grad(), torch::full({4, 3}, 2.0f)));
}

TEST_CASE("LossScaler: disabled it scales by 1 and leaves a non-finite gradient to the fp32 error path", "[learner][precision]") {
  LossScaler scaler;
  CHECK_FALSE(scaler.enabled());
  CHECK(scaler.scale() == 1.0);
  const torch::Tensor loss = torch::full({}, 3.0f);
  CHECK(scaler.scale_loss(loss).item<float>() == 3.0f);
  const torch::Tensor grads = torch::full({2}, 5.0f);
  scaler.unscale(grads);
  CHECK(grads[0].item<float>() == 5.0f);
  CHECK(scaler.update(true) == ScaledStep::kApply);
  CHECK(scaler.update(false) == ScaledStep::kNonFinite);
  CHECK(scaler.skipped_steps() == 0);
}

TEST_CASE("LossScaler: an overflowing gradient is skipped, the scale backs off, and the next step applies", "[learner][precision]") {
  // float32 stands in for float16: 1e34 * 2^16 overflows it, 1e34 * 2^15 does not.
  LossScaler scaler(true);
  REQUIRE(scaler.scale() == 65536.0);
  const torch::Tensor w = torch::zeros({3}).requires_grad_(true);
  const torch::Tensor x = torch::tensor({1.0f, -2.0f, 1e34f});
  const auto scaled_gradient = [&] {
    w.mutable_grad() = torch::Tensor();
    scaler.scale_loss((w * x).sum()).backward();
    const torch::Tensor grad = w.grad().clone();
    scaler.unscale(grad);
    return grad;
  };
  torch::Tensor grad = scaled_gradient();
  CHECK(grad.scalar_type() == torch::kFloat);
  CHECK(std::isinf(grad[2].item<float>()));
  CHECK(scaler.update(torch::isfinite(grad).all().item<bool>()) == ScaledStep::kSkip);
  CHECK(scaler.scale() == 32768.0);
  CHECK(scaler.skipped_steps() == 1);
  CHECK(scaler.growth_tracker() == 0);

  grad = scaled_gradient();
  REQUIRE(torch::isfinite(grad).all().item<bool>());
  CHECK(grad[0].item<float>() == 1.0f);  // unscaled exactly: the scale is a power of two
  CHECK(grad[1].item<float>() == -2.0f);
  CHECK(grad[2].item<float>() == 1e34f);
  CHECK(scaler.update(true) == ScaledStep::kApply);
  CHECK(scaler.growth_tracker() == 1);
  CHECK(scaler.scale() == 32768.0);
}

TEST_CASE("LossScaler: the scale grows after growth_interval finite steps in a row, a skip restarts the count",
          "[learner][precision]") {
  LossScalerOptions options;
  options.growth_interval = 3;
  LossScaler scaler(true, options);
  CHECK(scaler.update(true) == ScaledStep::kApply);
  CHECK(scaler.update(true) == ScaledStep::kApply);
  CHECK(scaler.update(false) == ScaledStep::kSkip);  // 2^15, count restarts
  CHECK(scaler.update(true) == ScaledStep::kApply);
  CHECK(scaler.update(true) == ScaledStep::kApply);
  CHECK(scaler.scale() == 32768.0);
  CHECK(scaler.update(true) == ScaledStep::kApply);  // the third in a row
  CHECK(scaler.scale() == 65536.0);
  CHECK(scaler.growth_tracker() == 0);
  // The defaults are GradScaler's: 2000 steps.
  LossScaler defaults(true);
  for (int i = 0; i < 1999; ++i) defaults.update(true);
  CHECK(defaults.scale() == 65536.0);
  defaults.update(true);
  CHECK(defaults.scale() == 131072.0);
  // Growth stops short of a float's infinity.
  options.init_scale = std::ldexp(1.0, 127);
  options.growth_interval = 1;
  LossScaler huge(true, options);
  huge.update(true);
  CHECK(huge.scale() == std::ldexp(1.0, 127));
}

TEST_CASE("LossScaler: a non-finite gradient at min_scale is no overflow: the fp32 error path", "[learner][precision]") {
  LossScalerOptions options;
  options.init_scale = 2.0;
  LossScaler scaler(true, options);
  CHECK(scaler.update(false) == ScaledStep::kSkip);
  CHECK(scaler.scale() == 1.0);
  CHECK(scaler.update(false) == ScaledStep::kNonFinite);
  CHECK(scaler.scale() == 1.0);
  CHECK(scaler.skipped_steps() == 1);
  options.backoff_factor = 1.0;
  CHECK_THROWS_AS(LossScaler(true, options), std::invalid_argument);
}

TEST_CASE("LossScaler: its state round-trips through JSON and a malformed state changes nothing", "[learner][precision]") {
  LossScaler scaler(true);
  scaler.update(false);
  scaler.update(true);
  LossScaler restored(true);
  restored.load_json(nlohmann::json::parse(scaler.to_json().dump()));
  CHECK(restored.scale() == 32768.0);
  CHECK(restored.growth_tracker() == 1);
  CHECK(restored.skipped_steps() == 1);
  for (const char* bad : {R"({"scale": 0, "growth_tracker": 0, "skipped_steps": 0})",
                          R"({"scale": 1024, "growth_tracker": -1, "skipped_steps": 0})",
                          R"({"scale": 1024, "growth_tracker": 0})", "[]"}) {
    INFO(bad);
    CHECK_THROWS_AS(restored.load_json(nlohmann::json::parse(bad)), std::invalid_argument);
    CHECK(restored.scale() == 32768.0);
  }
}

TEST_CASE("precision fp16 on the CPU is refused at construction, naming the key, the value and the fix", "[learner][precision]") {
  const ModelSpec model = rlx_test::model_config_for("CartPole-v1", {16});
  const auto needs_cuda = Catch::Contains("precision: fp16 needs device: cuda");  // (the && below keeps references)
  const auto use_bf16 = Catch::Contains("on a CPU use precision: bf16");
  PpoConfig ppo = test::ppo_test_config();
  ppo.precision = "fp16";
  CHECK_THROWS_AS(PpoLearner(model, ppo, 1), ConfigError);
  CHECK_THROWS_WITH(PpoLearner(model, ppo, 1), needs_cuda && use_bf16);
  DqnConfig dqn = test::dqn_test_config();
  dqn.precision = "fp16";
  CHECK_THROWS_AS(DqnLearner(model, dqn, 1), ConfigError);
  CHECK_THROWS_WITH(DqnLearner(model, dqn, 1), needs_cuda && use_bf16);
  // Nor can a running CPU learner switch to it.
  PpoLearner learner(model, test::ppo_test_config(), 1);
  CHECK_THROWS_WITH(learner.set_config(ppo), needs_cuda && use_bf16);
  CHECK(learner.config().precision == "fp32");
  CHECK_THROWS_AS(parse_precision("fp8"), ConfigError);
  CHECK(parse_precision(precision_name(Precision::kBf16)) == Precision::kBf16);
}

}  // namespace
}  // namespace rlx
