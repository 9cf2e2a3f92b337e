// Wall time of NativePpoLearner's and PpoLearner's updates (hidden: run with "[native-bench]";
// prints one line per learner, asserts nothing about time). `rlx bench learner --native` is the
// user-facing form.
#include "native_ppo_test_util.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "learner/policy_networks.h"
#include "learner/ppo_learner.h"
#include "native/native_ppo_learner.h"

namespace {

template <typename Learner>
void time_updates(const char* name, Learner& learner, const std::vector<rlx::SampleBatch>& batches) {
  const int64_t steps = learner.update(batches, 0).num_minibatch_steps;
  std::vector<double> ms;
  for (int i = 0; i < 9; ++i) {
    const auto start = std::chrono::steady_clock::now();
    learner.update(batches, 0);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  std::printf("%s update_ms=%.2f min_ms=%.2f minibatch_ms=%.4f steps=%lld\n", name, ms[ms.size() / 2], ms.front(),
              ms[ms.size() / 2] / static_cast<double>(steps), static_cast<long long>(steps));
}

}  // namespace

TEST_CASE("NativePpoLearner update wall time against PpoLearner", "[.][native-bench]") {
  const rlx::PolicyModelConfig model = rlx_native_test::model_config_for("CartPole-v1", {64, 64});
  rlx::PpoConfig config;
  config.num_epochs = 20;
  config.minibatch_size = 256;
  config.lr = 1e-4;
  rlx_native_test::Sampler sampler("CartPole-v1", model, 8, 128, 2);
  const std::vector<rlx::SampleBatch> batches = sampler.collect(1);
  rlx::NativePpoLearner native(model, config, 1);
  time_updates("native", native, batches);
  rlx::PpoLearner torch_learner(model, config, 1);
  const int previous = rlx::set_inference_threads(1);
  time_updates("torch", torch_learner, batches);
  rlx::set_inference_threads(previous);
}
