// Self-play's league over worker processes: weights that name a scripted rule make a frozen model
// policy play that rule until its next weights; a policy that trains, or a rule that does not fit
// its agents, is refused and nothing changes.
#include <catch2/catch.hpp>

#include <memory>

#include "rollout/multi_agent_worker_sampling.h"
#include "tests/rollout/multi_agent_worker_fixture.h"

namespace rlx {
namespace {

std::shared_ptr<Weights> rule_weights(int32_t policy, const std::string& rule) {
  auto weights = std::make_shared<Weights>();
  weights->policy_index = policy;
  weights->scripted = rule;
  return weights;
}

}  // namespace

TEST_CASE("A frozen policy plays a scripted rule named in its weights until its next weights", "[rollout][multi_agent]") {
  MultiAgentWorkerSampling sampling(test::multi_agent_setup());
  CHECK(sampling.apply(test::agent_weights(test::kTrainedPolicy, 1)).accepted);
  CHECK_FALSE(sampling.ready());  // the frozen policy has neither weights nor a rule yet
  const WeightsOutcome played = sampling.apply(rule_weights(test::kFrozenPolicy, "random"));
  CHECK(played.accepted);
  CHECK(sampling.ready());
  SampleBatch lane;
  sampling.next_fragment(lane);
  CHECK(lane.policy_index == test::kTrainedPolicy);

  const WeightsOutcome trains = sampling.apply(rule_weights(test::kTrainedPolicy, "random"));
  CHECK_FALSE(trains.accepted);
  CHECK_THAT(trains.rejection, Catch::Contains("policy 'trained', which trains"));
  const WeightsOutcome unfit = sampling.apply(rule_weights(test::kFrozenPolicy, "connect_four_lookahead"));
  CHECK_FALSE(unfit.accepted);
  CHECK_THAT(unfit.rejection, Catch::Contains("does not fit"));
  const WeightsOutcome scripted = sampling.apply(rule_weights(test::kScriptedPolicy, "random"));
  CHECK_FALSE(scripted.accepted);  // a scripted player has its own rule for good

  // Back to its model with its next weights; sampling goes on.
  CHECK(sampling.apply(test::agent_weights(test::kFrozenPolicy, 2)).accepted);
  CHECK(sampling.ready());
  for (int i = 0; i < 8; ++i) sampling.next_fragment(lane);
  CHECK(lane.num_steps == 8);
}

}  // namespace rlx
