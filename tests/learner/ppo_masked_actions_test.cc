// Both PPO learners (LibTorch's PpoLearner, with the hand-written backward and with autograd, and
// APPO's V-trace and KL term; the torch-free NativePpoLearner) on fragments that real workers
// collect with masked Discrete, masked MultiDiscrete and MultiBinary actions: at the first step
// of an update the learner's policy is the workers' policy, so every ratio is 1 (the learner
// masks and segments the logits exactly as the workers sample from them).
#include "tests/learner/ppo_test_util.h"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "native/native_ppo_learner.h"
#include "tests/learner/learner_test_configs.h"
#include "tests/learner/masked_test_envs.h"

namespace {

using rlx_test::IllegalCount;

// An env of the tests' own, and how to make K copies of it.
struct EnvCase {
  std::string name;
  rlx::EnvSpec spec;
  std::function<std::unique_ptr<rlx::VectorEnv>(int, const IllegalCount&)> make;
};

std::vector<EnvCase> env_cases() {
  const rlx::Space multi_discrete = rlx::Space::multi_discrete({3, 4});
  const rlx::Space multi_binary = rlx::Space::multi_binary({3});
  return {
      {"masked Discrete(4) bandit", rlx_test::MaskedBanditEnv::spec(),
       [](int k, const IllegalCount& illegal) { return rlx_test::masked_bandit_envs(k, illegal); }},
      {"masked MultiDiscrete([3 4])", rlx_test::ContextMatchEnv::spec(multi_discrete, true),
       [multi_discrete](int k, const IllegalCount& illegal) {
         return rlx_test::context_match_envs(k, multi_discrete, true, illegal);
       }},
      {"MultiBinary(3)", rlx_test::ContextMatchEnv::spec(multi_binary, false),
       [multi_binary](int k, const IllegalCount& illegal) {
         return rlx_test::context_match_envs(k, multi_binary, false, illegal);
       }},
  };
}

// One fragment of T steps from K envs, acted by a worker-side policy holding `params`; the
// illegal actions the envs were given are added to *illegal_actions.
rlx::SampleBatch collect_fragment(const EnvCase& env_case, const rlx::ModelSpec& model, const std::vector<float>& params,
                                  int k, int t, uint64_t seed, int64_t* illegal_actions) {
  const IllegalCount illegal = std::make_shared<std::atomic<int64_t>>(0);
  rlx::ActorCriticPolicy policy(model, seed);
  policy.load_weights(params.data(), params.size(), 1);
  rlx::FragmentCollector collector(env_case.make(k, illegal), policy, t, seed);
  rlx::SampleBatch batch;
  collector.collect(batch);
  *illegal_actions += illegal->load();
  return batch;
}

// One epoch of one minibatch with a clip range so narrow that any ratio off 1 by more than
// float rounding counts as clipped.
rlx::PpoConfig first_step_config(int64_t samples) {
  rlx::PpoConfig config = rlx::test::ppo_test_config();
  config.total_timesteps = 100000;
  config.num_epochs = 1;
  config.minibatch_size = samples;
  config.clip_param = 1e-4;
  config.entropy_coeff = 0.01;
  config.normalize_observations = false;
  return config;
}

void check_ratio_one(const rlx::PpoUpdateMetrics& metrics) {
  CHECK(metrics.clip_fraction == 0.0);
  CHECK(std::abs(metrics.approx_kl) < 1e-7);
  CHECK(metrics.entropy > 0.0);
}

}  // namespace

TEST_CASE("PPO's learners see ratio 1 at an update's first step on masked and multi-element actions from workers",
          "[learner][ppo][mask]") {
  rlx::set_inference_threads(1);
  constexpr int kEnvs = 4, kSteps = 32;
  for (const EnvCase& env_case : env_cases()) {
    INFO(env_case.name);
    rlx::ModelSpec model = rlx::ModelSpec::for_env(env_case.spec);
    model.hidden_sizes = {16, 16};
    const rlx::PpoConfig config = first_step_config(kEnvs * kSteps);
    int64_t illegal_actions = 0;

    for (const bool analytic : {true, false}) {
      INFO("LibTorch, analytic_gradients " << analytic);
      rlx::PpoConfig torch_config = config;
      torch_config.analytic_gradients = analytic;
      rlx::PpoLearner learner(model, torch_config, 5);
      const std::vector<float> params = learner.weights(1)->params;
      const rlx::SampleBatch batch = collect_fragment(env_case, model, params, kEnvs, kSteps, 17, &illegal_actions);
      check_ratio_one(learner.evaluate({batch}, 0));
      const rlx::PpoUpdateMetrics metrics = learner.update({batch}, 0);
      CHECK(metrics.num_minibatch_steps == 1);
      check_ratio_one(metrics);
    }
    {
      INFO("LibTorch APPO: V-trace and the KL to the target");
      rlx::PpoConfig appo = config;
      appo.vtrace = true;
      appo.kl_coeff = 0.5;
      rlx::PpoLearner learner(model, appo, 6);
      const rlx::SampleBatch batch = collect_fragment(env_case, model, learner.weights(1)->params, kEnvs, kSteps, 18,
                                                      &illegal_actions);
      const rlx::PpoUpdateMetrics metrics = learner.update({batch}, 0);
      check_ratio_one(metrics);
      CHECK(std::abs(metrics.kl_to_target) < 1e-7);  // the target is the policy itself at its first refresh
    }
    {
      INFO("native");
      rlx::NativePpoLearner learner(model, config, 7);
      const rlx::SampleBatch batch = collect_fragment(env_case, model, learner.parameters(), kEnvs, kSteps, 19,
                                                      &illegal_actions);
      check_ratio_one(learner.update({batch}, 0));
    }
    CHECK(illegal_actions == 0);  // the workers never act against the mask
  }
}

TEST_CASE("PPO's learners refuse a fragment whose action its mask forbids, or with another element count",
          "[learner][ppo][mask]") {
  const EnvCase env_case = env_cases()[1];  // masked MultiDiscrete([3 4])
  rlx::ModelSpec model = rlx::ModelSpec::for_env(env_case.spec);
  model.hidden_sizes = {8};
  rlx::NativePpoLearner native(model, first_step_config(8), 1);
  int64_t illegal_actions = 0;
  const rlx::SampleBatch batch = collect_fragment(env_case, model, native.parameters(), 2, 4, 3, &illegal_actions);
  const rlx::ObservationLayout layout = model.observation_layout();

  rlx::SampleBatch forbidden = batch;
  const uint8_t* mask = forbidden.obs_u8.data() + layout.mask_offset;  // sample 0's mask: element 1 after 3 logits
  int64_t illegal = 0;
  while (mask[3 + illegal] != 0) ++illegal;
  forbidden.action_indices[1] = illegal;
  CHECK_THROWS_WITH(native.update({forbidden}, 0), Catch::Contains("that its observation's action mask forbids"));
  rlx::PpoLearner torch_learner(model, first_step_config(8), 1);
  CHECK_THROWS_WITH(torch_learner.update({forbidden}, 0), Catch::Contains("that its observation's action mask forbids"));

  rlx::SampleBatch out_of_range = batch;
  out_of_range.action_indices[0] = 3;
  CHECK_THROWS_WITH(native.update({out_of_range}, 0), Catch::Contains("is outside its 3 choices of MultiDiscrete"));

  rlx::SampleBatch one_index = batch;
  one_index.action_components = 1;
  one_index.action_indices.resize(static_cast<size_t>(one_index.num_transitions()));
  CHECK_THROWS_WITH(native.update({one_index}, 0), Catch::Contains("fragment actions have 1 indices"));
  CHECK(native.num_updates() == 0);
}
