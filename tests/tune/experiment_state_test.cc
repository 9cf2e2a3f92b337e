// experiment_state.json read back for --resume and --replay: a state with a wrong structure is
// refused with the file, the member's path and what was expected, never nlohmann's bare text.
#include <catch2/catch.hpp>

#include "core/config_error.h"
#include "core/json_fields.h"
#include "tests/core/test_util.h"
#include "tune/experiment_state.h"
#include "tune/trial.h"

namespace rlx {
namespace {

namespace fs = std::filesystem;
using Catch::Contains;

nlohmann::json valid_state() {
  Trial trial;
  trial.name = "trial_00000";
  trial.params = {{"lr", 0.001}};
  trial.checkpoint = "runs/x/trial_00000/checkpoints/checkpoint_000003";
  return {{"format_version", 1},
          {"experiment", "x"},
          {"scheduler_state", nullptr},
          {"finished", false},
          {"trials", {trial_to_json(trial), trial_to_json(trial)}}};
}

// The error reading `state` as DIR/experiment_state.json gives ("" when it reads).
std::string refusal(const nlohmann::json& state) {
  test::TempDir dir;
  test::write_text(dir / kExperimentStateName, state.dump(2));
  return test::error_of<ConfigError>([&] { read_experiment_state(dir.path()); });
}

}  // namespace

TEST_CASE("experiment_state.json reads back what the tuner wrote", "[tune][state]") {
  test::TempDir dir;
  test::write_text(dir / kExperimentStateName, valid_state().dump(2));
  const auto state = read_experiment_state(dir.path());
  REQUIRE(state);
  CHECK(state->experiment == "x");
  REQUIRE(state->trials.size() == 2);
  CHECK(state->trials[1].checkpoint == "runs/x/trial_00000/checkpoints/checkpoint_000003");
  CHECK_FALSE(read_experiment_state(dir / "elsewhere"));  // no state: no tuning run
}

TEST_CASE("A structurally wrong experiment_state.json is refused naming the file, the path and the expectation",
          "[tune][state]") {
  nlohmann::json state = valid_state();
  SECTION("a trial's member of another type") {
    state["trials"][1]["status"] = 3;
    CHECK_THAT(refusal(state), Contains(kExperimentStateName) && Contains("trials[1].status: expected a string, got 3"));
  }
  SECTION("an unknown status") {
    state["trials"][0]["status"] = "SLEEPING";
    CHECK_THAT(refusal(state), Contains("trials[0].status: expected one of PENDING, RUNNING, PAUSED, TERMINATED, ERROR, "
                                        "got \"SLEEPING\""));
  }
  SECTION("a missing member") {
    state["trials"][0].erase("failures");
    CHECK_THAT(refusal(state), Contains("trials[0].failures: missing (expected an integer)"));
  }
  SECTION("trials that are not a list") {
    state["trials"] = {{"trial_00000", 1}};
    CHECK_THAT(refusal(state), Contains("trials: expected an array, got {\"trial_00000\":1}"));
  }
  SECTION("a trial that is not an object") {
    state["trials"][1] = "trial_00001";
    CHECK_THAT(refusal(state), Contains("trials[1]: expected an object, got \"trial_00001\""));
  }
  SECTION("a pending exploit's member") {
    state["trials"][0]["pending_exploit"] = {{"id", "trial_00000@1"}, {"donor", 7}};
    CHECK_THAT(refusal(state), Contains("trials[0].pending_exploit.donor: expected a string, got 7"));
  }
  SECTION("the experiment name") {
    state.erase("experiment");
    CHECK_THAT(refusal(state), Contains("experiment: missing (expected a string)"));
  }
  SECTION("a state that is not an object") {
    CHECK_THAT(refusal(nlohmann::json::array({1, 2})), Contains("the top level: expected an object"));
  }
}

}  // namespace rlx
