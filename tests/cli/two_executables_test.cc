// `rlx` links no LibTorch and runs the light commands itself; it execs rlx-torch for the rest,
// telling it its own path (RLX_PROGRAM), so the workers rlx-torch starts are the light `rlx`.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "../core/test_util.h"
#include "run_rlx.h"

namespace {

namespace fs = std::filesystem;

const std::string kRlx = std::string(RLX_BINARY_DIR) + "/rlx";
const std::string kRlxTorch = std::string(RLX_BINARY_DIR) + "/rlx-torch";

// The output of a shell command.
std::string command_output(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof(buffer), pipe)) out.append(buffer, n);
  ::pclose(pipe);
  return out;
}

std::string file_text(const fs::path& path) { return rlx::test::read_text_file(path.string()); }

// Pids of the processes whose parent is `parent` and whose command line contains `word`.
std::vector<pid_t> children_running(pid_t parent, const std::string& word) {
  std::vector<pid_t> pids;
  for (const fs::directory_entry& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string status = file_text(entry.path() / "status");
    const size_t ppid = status.find("PPid:");
    if (ppid == std::string::npos || std::stol(status.substr(ppid + 5)) != parent) continue;
    std::string cmdline = file_text(entry.path() / "cmdline");
    for (char& c : cmdline) c = c == '\0' ? ' ' : c;
    if (cmdline.find(word) != std::string::npos) pids.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return pids;
}

}  // namespace

TEST_CASE("rlx links no LibTorch and rlx-torch does", "[cli][lean]") {
  const std::string light = command_output("ldd " + kRlx);
  const std::string torch = command_output("ldd " + kRlxTorch);
  INFO("ldd rlx:\n" << light);
  REQUIRE_THAT(light, Catch::Contains("libc.so"));  // ldd ran
  CHECK_THAT(light, !Catch::Contains("torch") && !Catch::Contains("libc10"));
  CHECK_THAT(torch, Catch::Contains("libtorch_cpu"));
}

TEST_CASE("rlx train runs in rlx-torch and its workers are the torch-free rlx", "[cli][lean]") {
  rlx::test::TempDir tmp;
  const auto train = rlx::test::start_rlx({"train", std::string(RLX_SOURCE_DIR) + "/experiments/cartpole-ppo.yaml",
                                           "--set", "learner_backend=torch",
                                           "--set", "stop.timesteps_total=100000000", "--set",
                                           "stop.episode_return_mean=100000", "--output", (tmp.path() / "runs").string(),
                                           "-q"},
                                          tmp.path() / "train.out");
  std::vector<pid_t> workers;
  REQUIRE(rlx::test::wait_for(
      [&] {
        workers = children_running(train->pid(), " worker ");
        return workers.size() == 2;
      },
      std::chrono::seconds(60)));
  INFO(file_text(tmp.path() / "train.out"));
  // rlx replaced itself with rlx-torch (same pid), after setting RLX_PROGRAM to its own path.
  const fs::path train_exe = fs::read_symlink("/proc/" + std::to_string(train->pid()) + "/exe");
  CHECK(fs::equivalent(train_exe, kRlxTorch));
  std::string environ = file_text("/proc/" + std::to_string(train->pid()) + "/environ");
  CHECK(environ.find(std::string("RLX_PROGRAM=") + fs::canonical(kRlx).string() + '\0') != std::string::npos);
  for (pid_t worker : workers) {
    CHECK(fs::equivalent(fs::read_symlink("/proc/" + std::to_string(worker) + "/exe"), kRlx));
    CHECK(file_text("/proc/" + std::to_string(worker) + "/maps").find("torch") == std::string::npos);
  }
}

TEST_CASE("rlx names rlx-torch's paths when it cannot start it", "[cli][lean]") {
  rlx::test::TempDir tmp;
  // A copy of rlx alone in a folder: no rlx-torch beside it or in ../libexec/rlx/.
  const fs::path lonely = tmp.path() / "bin" / "rlx";
  fs::create_directories(lonely.parent_path());
  fs::copy_file(kRlx, lonely);
  const std::string out = command_output(lonely.string() + " evaluate x 2>&1; echo \"exit=$?\"");
  CHECK_THAT(out, Catch::Contains((lonely.parent_path() / "rlx-torch").string()) &&
                      Catch::Contains((tmp.path() / "libexec" / "rlx" / "rlx-torch").string()) &&
                      Catch::Contains("the half of rlx that links LibTorch") && Catch::Contains("exit=1"));
  // The light commands still work there.
  CHECK_THAT(command_output(lonely.string() + " --version"), Catch::StartsWith("rlx "));
}

TEST_CASE("rlx trains a learner_backend auto experiment itself without rlx-torch", "[cli][lean]") {
  rlx::test::TempDir tmp;
  // A copy of rlx alone in a folder: a hand-over to rlx-torch would fail there.
  const fs::path lonely = tmp.path() / "bin" / "rlx";
  fs::create_directories(lonely.parent_path());
  fs::copy_file(kRlx, lonely);
  const std::string experiment = std::string(RLX_SOURCE_DIR) + "/experiments/cartpole-ppo.yaml";
  const fs::path runs = tmp.path() / "runs";
  const std::string out = command_output(lonely.string() + " train " + experiment +
                                         " --set stop.timesteps_total=4096 --seed 3 -q "
                                         "--trial-name t --output " + runs.string() + " 2>&1; echo \"exit=$?\"");
  INFO(out);
  CHECK_THAT(out, Catch::Contains("stopped by timesteps_total at iteration 4") && Catch::Contains("exit=3"));
  const fs::path trial = runs / "cartpole-ppo" / "t";
  CHECK(fs::is_regular_file(trial / "checkpoints" / "checkpoint_000004" / "ppo_learner.bin"));
  // The same file asking for LibTorch's learner, or for what only LibTorch's learners do (two
  // data-parallel learners: auto picks torch), is handed over, and fails for want of rlx-torch.
  for (const char* setting : {"--set learner_backend=torch", "--learners 2"}) {
    const std::string torch_out = command_output(lonely.string() + " train " + experiment + " " + std::string(setting) +
                                                 " -q --output " + runs.string() + " 2>&1; echo \"exit=$?\"");
    INFO(setting);
    CHECK_THAT(torch_out, Catch::Contains("the half of rlx that links LibTorch") && Catch::Contains("exit=1"));
  }
  // rlx-torch evaluates the native checkpoint (its make_algorithm builds the native learner too).
  const std::string evaluated = command_output(kRlx + " evaluate " + (trial / "checkpoints" / "checkpoint_000004").string() +
                                               " --episodes 2 2>&1; echo \"exit=$?\"");
  INFO(evaluated);
  CHECK_THAT(evaluated, Catch::Contains("exit=0"));
}

TEST_CASE("rlx train names what the native learner cannot train", "[cli][lean]") {
  rlx::test::TempDir tmp;
  const auto result = rlx::test::run_rlx("train " + std::string(RLX_SOURCE_DIR) +
                                         "/experiments/cartpole-dqn.yaml --set learner_backend=native -q --output " + tmp.path().string());
  CHECK(result.exit_code == 2);
  CHECK_THAT(result.err, Catch::Contains("learner_backend: native: the native learners train PPO and SAC only") &&
                             Catch::Contains("DQN needs learner_backend: torch"));
  const auto shared = rlx::test::run_rlx("train " + std::string(RLX_SOURCE_DIR) +
                                         "/experiments/cartpole-ppo.yaml --set learner_backend=native "
                                         "--set vf_share_layers=true -q --output " + tmp.path().string());
  CHECK(shared.exit_code == 2);
  CHECK_THAT(shared.err, Catch::Contains("learner_backend: native: the native learner trains separate policy and "
                                         "value networks, but vf_share_layers is true"));
}
