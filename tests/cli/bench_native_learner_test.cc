// `rlx bench learner --native`: the LibTorch PPO learner against the torch-free one, one JSON
// line per case with both update times and their ratio (tests assert on keys, not on time).
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "run_rlx.h"

TEST_CASE("rlx bench learner --native prints a JSON line with both learners' update times", "[cli][bench][native]") {
  const rlx::test::CommandOutput r = rlx::test::run_rlx("bench learner --native --updates 1 --epochs 1 --batch 256");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  std::istringstream lines(r.out);
  std::string line;
  REQUIRE(std::getline(lines, line));
  const nlohmann::json result = nlohmann::json::parse(line);
  for (const char* key : {"torch_update_ms", "native_update_ms", "ratio", "torch_minibatch_ms", "native_minibatch_ms",
                          "minibatch_steps", "max_parameter_difference"}) {
    INFO(key);
    REQUIRE(result.contains(key));
    CHECK(result.at(key).is_number());
  }
  CHECK(result.at("torch_update_ms").get<double>() > 0.0);
  CHECK(result.at("native_update_ms").get<double>() > 0.0);
  CHECK(result.at("minibatch_steps").get<int>() == 1);
  CHECK(result.at("max_parameter_difference").get<double>() < 1e-4);
}
