// `rlx tune` on a disk that fills up for a few seconds: the trials that cannot write fail and are
// retried from their checkpoints (max_failures), waiting longer after each crash in a row; the tuner keeps its previous state file, says so
// once, writes it again when space is back, and the run finishes. Needs root (a small tmpfs);
// the suite runs as root.
#include <catch2/catch.hpp>

#include <sys/mount.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/temp_dir.h"
#include "run_rlx.h"

namespace {

// A tmpfs at `dir` for the test's lifetime.
class SmallDisk {
 public:
  SmallDisk(const std::filesystem::path& dir, int mib) : dir_(dir) {
    mounted_ = ::mount("rlx-test", dir.c_str(), "tmpfs", 0, ("size=" + std::to_string(mib) + "m").c_str()) == 0;
  }
  ~SmallDisk() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }

 private:
  std::filesystem::path dir_;
  bool mounted_ = false;
};

// Writes to `path` until the disk is full; returns the bytes written.
size_t fill(const std::filesystem::path& path) {
  std::ofstream out(path, std::ios::binary);
  const std::string block(1 << 16, '\0');
  size_t written = 0;
  while (out.write(block.data(), static_cast<std::streamsize>(block.size())) && out.flush()) written += block.size();
  return written;
}

}  // namespace

TEST_CASE("rlx tune goes on through a full disk: its state stays, is written again, and the trials finish",
          "[cli][tune][disk]") {
  if (::geteuid() != 0) {
    WARN("skipped: mounting the test's small disk needs root");
    return;
  }
  rlx::TempDir tmp;
  SmallDisk disk(tmp.path(), 48);
  REQUIRE(disk.mounted());
  const std::string experiment = (tmp.path() / "tune.yaml").string();
  std::ofstream(experiment) << "tune-ppo:\n  env: CartPole-v1\n  algorithm: PPO\n  stop: {training_iteration: 60}\n"
                               "  config: {num_workers: 0, num_envs_per_worker: 4, rollout_fragment_length: 64, checkpoint_freq: 5}\n"
                               "  tune:\n    num_samples: 2\n    max_concurrent_trials: 2\n    max_failures: 1000\n"
                               "    param_space: {lr: {loguniform: [1.0e-4, 1.0e-3]}}\n";
  rlx::TempDir beside;  // the tuner's output, off the disk that fills
  const std::filesystem::path log = beside.path() / "tune.log";
  auto tune = rlx::test::start_rlx({"tune", experiment, "--output", (tmp.path() / "runs").string(), "-q"}, log);
  const std::string rows = (tmp.path() / "runs/tune-ppo/trial_00000/result.jsonl").string();
  REQUIRE(rlx::test::wait_for([&] { return rlx::test::lines_in(rows) >= 7; }, std::chrono::seconds(120)));
  const std::filesystem::path filler = tmp.path() / "filler";
  CHECK(fill(filler) > 0);
  std::this_thread::sleep_for(std::chrono::seconds(3));  // trials fail on writes; the tuner cannot save its state
  std::filesystem::remove(filler);
  const auto exit = rlx::test::exit_within(*tune, std::chrono::seconds(300));
  const std::string output = rlx::test::read_text_file(log.string());
  INFO(output);
  REQUIRE(exit);
  CHECK(exit->describe() == "exit status 0");
  CHECK_THAT(output, Catch::Contains("No space left on device; the previous state stays, and the tuner retries at the next change"));
  CHECK_THAT(output, Catch::Contains("the state is written again"));
  const auto state = nlohmann::json::parse(rlx::test::read_text_file((tmp.path() / "runs/tune-ppo/experiment_state.json").string()));
  CHECK(state.at("finished") == true);
  for (const nlohmann::json& trial : state.at("trials")) {
    INFO(trial.dump());
    CHECK(trial.at("status") == "TERMINATED");
    // Crashes in a row wait 0.5 s, 1 s, 2 s ... before the next try: a 3 s outage costs a few
    // tries, not one per segment start (about 10 per second).
    CHECK(trial.at("failures").get<int>() <= 5);
  }
}
