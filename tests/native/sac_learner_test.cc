// NativeSacLearner's contracts: gradient steps follow utd_ratio past learning_starts, the targets
// trail the critics by Polyak averaging, a non-finite step is refused before it changes anything,
// its state file round-trips and refuses another model's, and a stop ends train() between whole steps.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

#include "core/non_finite_error.h"
#include "core/stop_signal.h"
#include "native/sac_learner.h"

namespace rlx {
namespace {

ModelSpec model(int64_t hidden = 16) {
  ModelSpec config;
  config.obs_size = 3;
  config.action_space = Space::box({1}, -2.0f, 2.0f);
  config.hidden_sizes = {hidden, hidden};
  config.activation = "relu";
  return config;
}

SacConfig small_config() {
  SacConfig config;
  config.batch_size = 16;
  config.learning_starts = 20;
  config.buffer_size = 1000;
  return config;
}

// One fragment of `steps` steps of one env, rewards `reward`, actions inside the Box.
SampleBatch fragment(int steps, float reward) {
  SampleBatch batch;
  batch.resize(steps, 1, 3, 1, false);
  for (int t = 0; t < steps; ++t) {
    for (int o = 0; o < 3; ++o) batch.obs[t * 3 + o] = 0.1f * static_cast<float>(t + o);
    batch.action_values[t] = static_cast<float>(t % 5) - 2.0f;
    batch.rewards[t] = reward;
  }
  return batch;
}

}  // namespace

TEST_CASE("NativeSacLearner takes utd_ratio steps past learning_starts and moves its targets by tau", "[native][sac]") {
  SacConfig config = small_config();
  config.utd_ratio = 0.5;
  NativeSacLearner learner(model(), config, 3);
  CHECK(learner.steps_due(20) == 0);
  CHECK(learner.steps_due(30) == 5);
  CHECK(learner.target_parameters() == learner.critic_parameters());
  learner.add(fragment(30, -1.0f));
  const std::vector<float> critics_before = learner.critic_parameters(), actor_before = learner.actor_parameters();
  const SacUpdateMetrics metrics = learner.train(learner.steps_due(30), 30);
  CHECK(metrics.gradient_steps == 5);
  CHECK(learner.num_gradient_steps() == 5);
  CHECK(learner.steps_due(30) == 0);
  CHECK(learner.actor_parameters() != actor_before);
  CHECK(learner.alpha() != 1.0);
  // After one step a target is (1 - tau) old + tau new; after several it still trails the critics.
  double target_gap = 0.0, critic_move = 0.0;
  for (size_t i = 0; i < critics_before.size(); ++i) {
    target_gap += std::abs(learner.target_parameters()[i] - learner.critic_parameters()[i]);
    critic_move += std::abs(learner.critic_parameters()[i] - critics_before[i]);
  }
  CHECK(critic_move > 0.0);
  CHECK(target_gap > 0.9 * critic_move);  // tau 0.005: the targets barely moved
}

TEST_CASE("NativeSacLearner refuses a non-finite step before changing anything", "[native][sac]") {
  NativeSacLearner learner(model(), small_config(), 3);
  learner.add(fragment(40, std::numeric_limits<float>::quiet_NaN()));
  const std::vector<float> actor = learner.actor_parameters(), critics = learner.critic_parameters();
  CHECK_THROWS_AS(learner.train(1, 40), NonFiniteLearnerError);
  CHECK(learner.actor_parameters() == actor);
  CHECK(learner.critic_parameters() == critics);
  CHECK(learner.num_gradient_steps() == 0);
  CHECK(learner.alpha() == Approx(1.0));
}

TEST_CASE("NativeSacLearner's state file round-trips and refuses another model's", "[native][sac]") {
  NativeSacLearner learner(model(), small_config(), 3);
  learner.add(fragment(40, -1.0f));
  learner.train(7, 40);
  std::stringstream file;
  learner.save(file);
  NativeSacLearner copy(model(), small_config(), 99);
  copy.load(file);
  CHECK(copy.actor_parameters() == learner.actor_parameters());
  CHECK(copy.critic_parameters() == learner.critic_parameters());
  CHECK(copy.target_parameters() == learner.target_parameters());
  CHECK(copy.alpha() == learner.alpha());
  CHECK(copy.num_gradient_steps() == 7);
  // The same replay and generator state: the next steps agree exactly.
  copy.load_replay(learner.save_replay());
  learner.train(3, 40);
  copy.train(3, 40);
  CHECK(copy.actor_parameters() == learner.actor_parameters());

  NativeSacLearner wider(model(32), small_config(), 3);
  std::stringstream again;
  learner.save(again);
  const std::vector<float> before = wider.actor_parameters();
  CHECK_THROWS_AS(wider.load(again), std::invalid_argument);
  CHECK(wider.actor_parameters() == before);
  std::stringstream garbage("not a SAC learner's file at all");
  CHECK_THROWS_AS(wider.load(garbage), std::invalid_argument);
}

TEST_CASE("NativeSacLearner stops between whole gradient steps once the stop is overdue, the rest still due", "[native][sac][stop]") {
  SacConfig config = small_config();
  config.utd_ratio = 0.5;
  NativeSacLearner learner(model(), config, 3), twin(model(), config, 3);
  learner.add(fragment(40, -1.0f));
  twin.add(fragment(40, -1.0f));
  REQUIRE(learner.steps_due(40) == 10);
  int checks = 0;
  learner.set_stop_check([&checks] { return ++checks > 3; });  // overdue before the 4th step
  std::string message;
  try {
    learner.train(10, 40);
  } catch (const StopRequested& stop) {
    message = stop.what();
  }
  INFO(message);
  CHECK_THAT(message, Catch::Contains("stopped after 3 of 10 gradient steps"));
  CHECK(learner.num_gradient_steps() == 3);
  CHECK(learner.steps_due(40) == 7);
  // What it holds is the learner after 3 whole steps: its state file is the twin's byte for byte.
  twin.train(3, 40);
  std::stringstream stopped, whole;
  learner.save(stopped);
  twin.save(whole);
  CHECK(stopped.str() == whole.str());
  // A resumed run takes the steps still due, as the twin does.
  learner.set_stop_check([] { return false; });
  learner.train(learner.steps_due(40), 40);
  twin.train(twin.steps_due(40), 40);
  CHECK(learner.actor_parameters() == twin.actor_parameters());
  CHECK(learner.critic_parameters() == twin.critic_parameters());
}

}  // namespace rlx
