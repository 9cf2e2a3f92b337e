#include <catch2/catch.hpp>

#include <memory>

#include "rollout/weight_delay.h"

namespace {

std::shared_ptr<const rlx::Weights> version(uint64_t v) {
  auto weights = std::make_shared<rlx::Weights>();
  weights->policy_version = v;
  return weights;
}

}  // namespace

TEST_CASE("WeightDelay acts with the publication delay versions before the newest", "[rollout][appo]") {
  rlx::WeightDelay none(0);
  CHECK(none.push(version(1))->policy_version == 1);
  CHECK(none.push(version(2))->policy_version == 2);

  rlx::WeightDelay three(3);
  // The first publication is used until three more have come.
  CHECK(three.push(version(1))->policy_version == 1);
  CHECK(three.push(version(2))->policy_version == 1);
  CHECK(three.push(version(3))->policy_version == 1);
  CHECK(three.push(version(4))->policy_version == 1);
  CHECK(three.push(version(5))->policy_version == 2);
  CHECK(three.push(version(9))->policy_version == 3);  // publications, not version numbers
  three.clear();
  CHECK(three.push(version(10))->policy_version == 10);
}
