// An elastic group that may grow past one learner trains on LibTorch's learner: the native
// learner (one process) refuses it by name, so learner_backend: auto picks LibTorch's and the
// run starts a group that ranks can join.
#include <catch2/catch.hpp>

#include <string>

#include "algorithms/native_algorithms.h"
#include "tests/algorithms/train_util.h"

namespace rlx {
namespace {

using test::experiment_on;

TEST_CASE("the native learner refuses an elastic group that may grow and auto picks LibTorch's", "[algorithms][elastic]") {
  Experiment cartpole = experiment_on("CartPole-v1");
  apply_overrides(cartpole, {"elastic=true"});
  CHECK(uses_native_learner(cartpole));  // one learner that cannot grow: nothing to join
  apply_overrides(cartpole, {"max_learners=3"});
  const std::optional<std::string> refusal = native_learner_refusal(cartpole);
  REQUIRE(refusal);
  CHECK_THAT(*refusal, Catch::Contains("max_learners 3") && Catch::Contains("learner_backend: torch"));
  CHECK_FALSE(uses_native_learner(cartpole));
}

}  // namespace
}  // namespace rlx
