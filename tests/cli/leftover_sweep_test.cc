// What a SIGKILLed run leaves behind (its local workers' CURVE keys, its workers' socket
// directory: nothing in the process ran to remove them) the next `rlx train` removes, saying so:
// each such directory names its process in an owner file, and that process is gone.
#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "../core/test_util.h"
#include "run_rlx.h"

namespace {

namespace fs = std::filesystem;
using rlx::test::read_text_file;

std::vector<std::string> entries_of(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("The next rlx train removes the keys and socket directories of a SIGKILLed run", "[cli][stop]") {
  rlx::test::TempDir tmp;
  const fs::path temp_root = tmp / "tmp";
  fs::create_directories(temp_root);
  REQUIRE(rlx::test::run_rlx("keys init " + (tmp / "keys").string()).exit_code == 0);
  const std::vector<std::string> run = {"train", std::string(RLX_SOURCE_DIR) + "/experiments/cartpole-ppo.yaml",
                                        "--auth-keys", (tmp / "keys").string(), "--output", (tmp / "runs").string(),
                                        "-q", "--set", "stop.episode_return_mean=null"};
  std::vector<std::string> killed = run;
  killed.insert(killed.end(), {"--trial-name", "killed", "--set", "stop.timesteps_total=100000000"});
  const auto train = rlx::test::start_rlx(killed, tmp / "killed.out", {{"TMPDIR", temp_root.string()}});
  REQUIRE(rlx::test::wait_for([&] { return rlx::test::lines_in((tmp / "runs/cartpole-ppo/killed/result.jsonl").string()) >= 2; },
                              std::chrono::seconds(60)));
  ::kill(train->pid(), SIGKILL);
  REQUIRE(rlx::test::exit_within(*train, std::chrono::seconds(10)));
  const std::vector<std::string> left = entries_of(temp_root);
  REQUIRE(left.size() == 2);  // nothing in the killed process could remove them
  CHECK(left[0].rfind("rlx-local-worker-keys-", 0) == 0);
  CHECK(left[1].rfind("rlx-run-", 0) == 0);

  std::vector<std::string> next = run;
  next.insert(next.end(), {"--trial-name", "next", "--set", "stop.timesteps_total=2048"});
  const auto second = rlx::test::start_rlx(next, tmp / "next.out", {{"TMPDIR", temp_root.string()}});
  const std::optional<rlx::ChildExit> ended = rlx::test::exit_within(*second, std::chrono::seconds(60));
  const std::string said = read_text_file((tmp / "next.out").string());
  INFO(said);
  REQUIRE(ended);
  CHECK(ended->describe() == "exit status 3");
  for (const std::string& name : left) {
    CHECK_THAT(said, Catch::Contains("removed " + (temp_root / name).string() + ", which a run that died left behind"));
  }
  CHECK(entries_of(temp_root).empty());  // and its own went with it
}
