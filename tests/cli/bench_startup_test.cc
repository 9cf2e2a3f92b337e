// `rlx bench startup`: prints each command's exec-to-exit time, a worker's time to its first
// fragment and workers' memory, each beside its budget, as key=value lines that a script can
// read; bad options are usage errors. (Tests do not assert on wall time; the budgets are read
// from the benchmark's output.)
#include <catch2/catch.hpp>

#include <map>
#include <sstream>
#include <string>

#include "run_rlx.h"

namespace {

// The key=value lines of `text` (the last value of a repeated key).
std::map<std::string, double> key_values(const std::string& text) {
  std::map<std::string, double> values;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const size_t equals = line.find('=');
    if (equals == std::string::npos || line.find(' ') != std::string::npos) continue;
    values[line.substr(0, equals)] = std::stod(line.substr(equals + 1));
  }
  return values;
}

}  // namespace

TEST_CASE("rlx bench startup prints start-up times and worker memory beside their budgets", "[cli][bench]") {
  const rlx::test::CommandOutput r = rlx::test::run_rlx("bench startup --repeats 2");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const std::map<std::string, double> values = key_values(r.out);
  for (const char* key : {"version_ms", "envs_list_ms", "idle_worker_ready_ms", "idle_worker_rss_kb",
                          "idle_worker_pss_kb", "idle_worker_private_dirty_kb"}) {
    INFO(key);
    REQUIRE(values.count(key) == 1);
    CHECK(values.at(key) > 0);
  }
  for (const char* key : {"version_ms", "envs_list_ms", "worker_first_fragment_ms", "cartpole_worker_pss_kb",
                          "cartpole_worker_rss_kb", "hopper_worker_pss_kb"}) {
    INFO(key);
    REQUIRE(values.count(key) == 1);
    CHECK(values.at(key) > 0);
    REQUIRE(values.count(std::string(key) + "_budget") == 1);
    const double within = values.at(std::string(key) + "_within_budget");
    CHECK(within == (values.at(key) <= values.at(std::string(key) + "_budget") ? 1.0 : 0.0));
  }
  CHECK(values.at("cartpole_worker_pss_kb") <= values.at("cartpole_worker_rss_kb"));
  CHECK(values.at("hopper_worker_pss_kb") <= values.at("hopper_worker_rss_kb"));
  CHECK(values.at("idle_worker_pss_kb") <= values.at("idle_worker_rss_kb"));
  CHECK(values.at("idle_worker_private_dirty_kb") <= values.at("idle_worker_rss_kb"));
  CHECK_THAT(r.out, Catch::Contains("command=version repeat=2 exec_to_exit_ms="));
}

TEST_CASE("rlx bench startup refuses a repeat count outside 1 to 1000", "[cli][bench]") {
  const rlx::test::CommandOutput r = rlx::test::run_rlx("bench startup --repeats 0");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--repeats must be in [1, 1000], got 0"));
}
