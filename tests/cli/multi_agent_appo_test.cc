// APPO on a multi-agent env with worker processes, as a user runs RLlib's tuned example: 4
// CartPoles sharing one policy reach a total of 600 within 200k env steps.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "../core/test_util.h"
#include "core/file_read.h"
#include "run_rlx.h"

// Seeds 0-4 reached 600 at 22.1k-23.2k env steps in 1.6-2.3 s (2026-12-05, this 2-core machine):
// the 200k budget leaves a margin of 8x for the workers' timing.
TEST_CASE("APPO reaches a total of 600 on MultiAgentCartPole with 2 worker processes", "[cli][multi_agent][learning]") {
  rlx::test::TempDir tmp;
  const auto r = rlx::test::run_rlx("train " + std::string(RLX_SOURCE_DIR) +
                                    "/experiments/multi-agent-cartpole-appo.yaml --seed 1 --trial-name t --output " +
                                    tmp.path().string());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("stopped by episode_return_mean"));
  const std::string text = rlx::read_file(tmp / "multi-agent-cartpole-appo" / "t" / "result.json");
  const nlohmann::json row = nlohmann::json::parse(text);
  CHECK(row["policy"]["default_policy"]["learner"].contains("policy_lag"));
  CHECK(row["sampler"]["workers_joined"] == 2);
}
