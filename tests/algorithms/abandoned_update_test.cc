// What each algorithm leaves when a stop cuts its learning short (the learner's stop check turns
// true mid-update, as rlx::stop_overdue does half a grace period after SIGTERM): train_iteration
// throws StopRequested and steps_of_failed_iteration says the state is sound, so the trainer
// checkpoints it. PPO (both learners) undid the update: 0 steps, its checkpoint as before the
// iteration. DQN and SAC stopped between whole gradient steps: the iteration's stored steps,
// and the weights a new policy version.
#include "tests/learner/torch_catch.h"  // Catch2 after LibTorch: its CHECK, not glog's

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/dqn_algorithm.h"
#include "algorithms/local_sampler.h"
#include "algorithms/make_algorithm.h"
#include "algorithms/native_algorithms.h"
#include "algorithms/native_ppo_algorithm.h"
#include "algorithms/ppo_algorithm.h"
#include "algorithms/sac_algorithm.h"
#include "core/experiment.h"
#include "core/stop_signal.h"

namespace rlx {
namespace {

namespace fs = std::filesystem;

Experiment experiment_of(const std::string& file, std::vector<std::string> overrides) {
  overrides.push_back("num_workers=0");
  return load_experiment(fs::path(RLX_SOURCE_DIR) / "experiments" / file, "", overrides);
}

// True from the `n`th call on: a stop that turns overdue before the learner's n-th step.
std::function<bool()> overdue_from_call(int n) {
  auto calls = std::make_shared<int>(0);
  return [calls, n] { return ++*calls >= n; };
}

// The checkpoint an algorithm would write now, files and state.
struct Saved {
  std::vector<std::string> files;
  nlohmann::json state;
};

Saved saved(const Algorithm& algorithm) {
  Saved s{{}, algorithm.checkpoint_state()};
  for (const CheckpointFile& file : algorithm.checkpoint_files()) s.files.push_back(file.name + ":" + file.bytes);
  return s;
}

// One complete iteration, then one whose update a stop abandons (set_stop_check installs the
// learner's): PPO's checkpoint stays the complete iteration's.
void check_ppo_abandons(Algorithm& algorithm, const std::function<void(std::function<bool()>)>& set_stop_check) {
  LocalSampler sampler(algorithm.worker_setup());
  algorithm.publish_weights(sampler);
  const int64_t steps = algorithm.train_iteration(sampler, 0).env_steps;
  const Saved before = saved(algorithm);
  set_stop_check(overdue_from_call(3));
  CHECK_THROWS_WITH(algorithm.train_iteration(sampler, steps), Catch::Contains("the PPO update was abandoned"));
  CHECK(algorithm.steps_of_failed_iteration() == std::optional<int64_t>(0));
  const Saved after = saved(algorithm);
  CHECK(after.state == before.state);
  CHECK(after.files == before.files);
}

}  // namespace

TEST_CASE("A PPO update a stop abandons leaves the algorithm's checkpoint as before the iteration, with 0 steps taken in",
          "[algorithms][stop]") {
  const std::vector<std::string> small = {"train_batch_size=512", "num_envs_per_worker=4", "rollout_fragment_length=128",
                                          "minibatch_size=128", "num_epochs=2"};
  SECTION("the native learner") {
    std::unique_ptr<Algorithm> algorithm = make_native_algorithm(experiment_of("cartpole-ppo.yaml", small), {});
    auto& ppo = dynamic_cast<NativePpoAlgorithm&>(*algorithm);
    check_ppo_abandons(ppo, [&ppo](std::function<bool()> check) { ppo.learner().set_stop_check(std::move(check)); });
  }
  SECTION("LibTorch's learner") {
    std::vector<std::string> torch = small;
    torch.push_back("learner_backend=torch");
    std::unique_ptr<Algorithm> algorithm = make_algorithm(experiment_of("cartpole-ppo.yaml", torch));
    auto& ppo = dynamic_cast<PpoAlgorithm&>(*algorithm);
    check_ppo_abandons(ppo, [&ppo](std::function<bool()> check) { ppo.learner().set_stop_check(std::move(check)); });
  }
}

TEST_CASE("DQN and SAC stopped between gradient steps count the iteration's stored steps and a new policy version",
          "[algorithms][stop]") {
  SECTION("DQN") {
    // Rounds of 64 gradient steps every 64 env steps past 256, fragments of 64 steps: the first
    // round falls due in the first iteration.
    std::unique_ptr<Algorithm> algorithm = make_algorithm(experiment_of(
        "cartpole-dqn.yaml", {"learning_starts=256", "train_freq=64", "gradient_steps=64", "batch_size=32"}));
    auto& dqn = dynamic_cast<DqnAlgorithm&>(*algorithm);
    dqn.learner().set_stop_check(overdue_from_call(10));
    LocalSampler sampler(dqn.worker_setup());
    dqn.publish_weights(sampler);
    CHECK_THROWS_WITH(dqn.train_iteration(sampler, 0), Catch::Contains("stopped after 9 of 64 gradient steps"));
    CHECK(dqn.learner().num_gradient_steps() == 9);
    const std::optional<int64_t> steps = dqn.steps_of_failed_iteration();
    REQUIRE(steps.has_value());
    CHECK(*steps == 256 + 64);  // stored: the first round falls due with the fragment that brings 320 steps
    CHECK(dqn.checkpoint_state().at("received_steps") == *steps);
    CHECK(dqn.checkpoint_state().at("policy_version") == 2);
  }
  SECTION("SAC") {
    std::unique_ptr<Algorithm> algorithm = make_algorithm(experiment_of(
        "pendulum-sac.yaml", {"learning_starts=500", "utd_ratio=0.5", "hidden_sizes=[16, 16]", "batch_size=32",
                              "num_envs_per_worker=1", "rollout_fragment_length=100"}));
    auto& sac = dynamic_cast<SacAlgorithm&>(*algorithm);
    sac.learner().set_stop_check(overdue_from_call(5));
    LocalSampler sampler(sac.worker_setup());
    sac.publish_weights(sampler);
    // 50 steps fall due with the fragment that brings 600 steps.
    CHECK_THROWS_WITH(sac.train_iteration(sampler, 0), Catch::Contains("SAC stopped after 4 of 50 gradient steps due"));
    CHECK(sac.learner().num_gradient_steps() == 4);
    const std::optional<int64_t> steps = sac.steps_of_failed_iteration();
    REQUIRE(steps.has_value());
    CHECK(*steps == 600);
    CHECK(sac.checkpoint_state().at("received_steps") == *steps);
    CHECK(sac.checkpoint_state().at("policy_version") == 2);
  }
}

}  // namespace rlx
