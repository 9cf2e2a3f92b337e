// `rlx bench recurrent`: an LSTM and a GRU policy against the MLP of the same width, JSON lines
// per measurement and medians with their ratios (tests assert on keys, not on time).
#include <catch2/catch.hpp>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_rlx.h"

using rlx::test::json_lines;

TEST_CASE("rlx bench recurrent prints act and update times per repeat, then medians with ratios to the MLP",
          "[cli][bench][recurrent]") {
  const rlx::test::CommandOutput r = rlx::test::run_rlx(
      "bench recurrent --width 8 --envs 2 --calls 10 --steps 8 --epochs 1 --minibatch 16 --max-seq-len 4 --repeats 2");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const std::vector<nlohmann::json> lines = json_lines(r.out);
  // Per repeat: act for mlp, lstm, gru; update for those and mlp_autograd. Then the medians.
  REQUIRE(lines.size() == 2 * (3 + 4) + 3 + 4);
  std::set<std::string> act_medians, update_medians;
  for (const nlohmann::json& line : lines) {
    INFO(line.dump());
    CHECK(line.at("bench") == "recurrent");
    const std::string stage = line.at("stage"), model = line.at("model");
    const char* time_key = stage == "act" ? "us_per_act" : "ms_per_update";
    REQUIRE(line.contains(time_key));
    CHECK(line.at(time_key).get<double>() > 0.0);
    CHECK(line.at("params").get<int>() > 0);
    CHECK(line.at("width") == 8);
    if (stage == "update") CHECK(line.at("minibatch_steps").get<int>() >= 1);
    if (line.contains("median")) {
      CHECK(line.at("repeats") == 2);
      CHECK(line.at("ratio_to_mlp").is_number());
      if (model == "mlp") CHECK(line.at("ratio_to_mlp").get<double>() == 1.0);
      (stage == "act" ? act_medians : update_medians).insert(model);
    } else {
      CHECK(line.at("repeat").is_number_integer());
    }
  }
  CHECK(act_medians == std::set<std::string>{"mlp", "lstm", "gru"});
  CHECK(update_medians == std::set<std::string>{"mlp", "lstm", "gru", "mlp_autograd"});
}

TEST_CASE("rlx bench recurrent refuses a core it does not know", "[cli][bench][recurrent]") {
  const rlx::test::CommandOutput r = rlx::test::run_rlx("bench recurrent --cores lstm,rnn");
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("--cores") != std::string::npos);
}

TEST_CASE("rlx bench --help lists recurrent", "[cli][bench][recurrent]") {
  const rlx::test::CommandOutput r = rlx::test::run_rlx("bench --help");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("recurrent") != std::string::npos);
}
