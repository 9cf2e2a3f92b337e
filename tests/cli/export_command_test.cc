// `rlx export`: trained policies (PPO discrete and Gaussian, DQN, SAC) in one file that
// rlx::Policy (C++), python/rlx_policy.py (NumPy) and an application built out of tree
// (examples/deploy_policy) run with the same actions as `rlx evaluate`.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/policy.h"
#include "policy_trace.h"
#include "run_rlx.h"

using rlx::test::check_cpp_reader;
using rlx::test::read_text_file;
using rlx::test::run_python_reader;
using rlx::test::run_rlx;
using rlx::test::temp_dir;
using rlx::test::train_export_trace;

namespace {

// The steps of out/trace.jsonl.
std::vector<nlohmann::json> trace_steps(const std::string& out) { return rlx::test::trace_steps(out + "/trace.jsonl"); }

// python/rlx_policy.py --check-trace of out/trace.jsonl finds its `steps` steps and no mismatch.
void check_python_reader(const std::string& policy_path, const std::string& out, size_t steps) {
  rlx::test::check_python_reader(policy_path, out + "/trace.jsonl", out, steps);
}

std::string shell_quote(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

TEST_CASE("an exported CartPole PPO policy acts as rlx evaluate in C++, in Python and in an app built out of tree",
          "[cli][export]") {
  const std::string out = temp_dir("export_cartpole");
  // Synchronous, deterministic under the seed: solves CartPole (475) in 58k-88k steps.
  const std::string policy = train_export_trace(out, "cartpole-ppo.yaml", "--set num_workers=0");
  const std::vector<nlohmann::json> steps = trace_steps(out);
  check_cpp_reader(policy, steps);
  check_python_reader(policy, out, steps.size());

  // examples/deploy_policy: configured and built against this build tree's package, linking
  // rlx::policy alone.
  const std::string build = out + "/deploy_build";
  const std::string configure = shell_quote(RLX_CMAKE_COMMAND) + " -S " + shell_quote(RLX_SOURCE_DIR) +
                                "/examples/deploy_policy -B " + build + " -G " + shell_quote(RLX_CMAKE_GENERATOR) +
                                " -DCMAKE_CXX_COMPILER=" + shell_quote(RLX_CXX_COMPILER) + " -Drlx_DIR=" +
                                RLX_BINARY_DIR + " > " + out + "/deploy.log 2>&1";
  INFO(read_text_file(out + "/deploy.log"));
  REQUIRE(std::system(configure.c_str()) == 0);
  REQUIRE(std::system((shell_quote(RLX_CMAKE_COMMAND) + " --build " + build + " >> " + out + "/deploy.log 2>&1").c_str()) == 0);
  // No LibTorch, ZeroMQ, MuJoCo or Python in what the app loads.
  REQUIRE(std::system(("readelf -d " + build + "/cartpole_app > " + out + "/needed.txt").c_str()) == 0);
  const std::string needed = read_text_file(out + "/needed.txt");
  for (const char* library : {"libtorch", "libc10", "libzmq", "libmujoco", "libpython"}) {
    CHECK_THAT(needed, !Catch::Contains(library));
  }
  REQUIRE(std::system((build + "/cartpole_app " + policy + " --episodes 5 --seed 1 > " + out + "/app.out").c_str()) == 0);
  const std::string app = read_text_file(out + "/app.out");
  const auto summary = nlohmann::json::parse(app.substr(app.rfind('{')));
  INFO(app);
  CHECK(summary.at("episodes") == 5);
  CHECK(summary.at("return_mean").get<double>() >= 400.0);  // a random policy balances ~20 steps
  std::system(("rm -rf " + out).c_str());
}

TEST_CASE("exported Gaussian PPO (with observation normalisation), DQN and SAC policies act as rlx evaluate",
          "[cli][export]") {
  struct Case {
    const char* file;
    const char* options;
  };
  const std::vector<Case> cases = {
      {"pendulum-ppo.yaml", "--set stop.training_iteration=2 --set num_envs_per_worker=1"},
      {"cartpole-dqn.yaml", "--set num_workers=0 --set stop.timesteps_total=3000 --set learning_starts=500"},
      {"pendulum-sac.yaml", "--set stop.timesteps_total=1500 --set learning_starts=500"}};
  for (const Case& c : cases) {
    SECTION(c.file) {
      const std::string out = temp_dir("export_kinds");
      const std::string policy = train_export_trace(out, c.file, std::string(c.options) + " --set checkpoint_freq=1");
      const std::vector<nlohmann::json> steps = trace_steps(out);
      check_cpp_reader(policy, steps);
      check_python_reader(policy, out, steps.size());
      std::system(("rm -rf " + out).c_str());
    }
  }
}

TEST_CASE("an exported MinAtar PPO policy (uint8 image observations) acts as rlx evaluate traced it, bytes and all",
          "[cli][export][spaces]") {
  const std::string out = temp_dir("export_minatar");
  // A short synchronous run: the policy only has to be some function of the pixels.
  std::ofstream(out + "/breakout-ppo.yaml") << "breakout-ppo:\n"
                                               "  env: MinAtar/Breakout-v1\n"
                                               "  algorithm: PPO\n"
                                               "  stop: {timesteps_total: 512}\n"
                                               "  config: {num_workers: 0, num_envs_per_worker: 4, rollout_fragment_length: 64,\n"
                                               "           train_batch_size: 256, minibatch_size: 128, num_epochs: 1,\n"
                                               "           hidden_sizes: [16], checkpoint_freq: 1}\n";
  const std::string policy = train_export_trace(out, out + "/breakout-ppo.yaml", "");
  const std::vector<nlohmann::json> steps = trace_steps(out);
  REQUIRE(!steps.empty());
  CHECK(steps.front().at("obs").empty());  // every leaf is bytes: a 10x10x4 grid
  CHECK(steps.front().at("obs_bytes").size() == 400);
  CHECK(steps.front().count("action_mask") == 0);
  rlx::Policy reader(policy);
  CHECK(reader.observation_space() == "Box(0, 1, (10, 10, 4), uint8)");
  CHECK(reader.byte_size() == 400);
  check_cpp_reader(policy, steps);
  check_python_reader(policy, out, steps.size());
  std::system(("rm -rf " + out).c_str());
}

TEST_CASE("the Python reader refuses truncated and damaged policy files with the reason", "[cli][export]") {
  const std::string out = temp_dir("export_damaged");
  const std::string policy = train_export_trace(out, "pendulum-ppo.yaml",
                                                "--set stop.training_iteration=1 --set num_envs_per_worker=1 "
                                                "--set checkpoint_freq=1");
  const std::string bytes = read_text_file(policy);
  std::ofstream(out + "/truncated.rlxp", std::ios::binary) << bytes.substr(0, bytes.size() - 100);
  std::string damaged = bytes;
  damaged[damaged.size() / 2] = static_cast<char>(damaged[damaged.size() / 2] ^ 0x01);
  std::ofstream(out + "/damaged.rlxp", std::ios::binary) << damaged;

  auto r = run_python_reader(out + "/truncated.rlxp --check-trace " + out + "/trace.jsonl", out);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("truncated.rlxp: truncated"));
  r = run_python_reader(out + "/damaged.rlxp --check-trace " + out + "/trace.jsonl", out);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("damaged.rlxp: damaged: its CRC-32 does not match"));
  CHECK_THROWS_WITH(rlx::Policy(out + "/damaged.rlxp"), Catch::Contains("CRC-32 does not match"));
  std::system(("rm -rf " + out).c_str());
}

TEST_CASE("the Python reader reads the version-1 files of the rlx before model specs", "[cli][export][compat]") {
  const std::string out = temp_dir("export_version_1");
  const std::string old = std::string(RLX_TEST_DATA_DIR) + "/before-model-spec";
  // The trace that build's `rlx evaluate` took of the checkpoint the file was exported from.
  const auto python = run_python_reader(old + "/pendulum-ppo-v1.rlxp --check-trace " + old +
                                            "/pendulum-ppo-trace.jsonl --atol 1e-4", out);
  INFO(python.out << python.err);
  REQUIRE(python.exit_code == 0);
  const auto summary = nlohmann::json::parse(python.out.substr(python.out.rfind('{')));
  CHECK(summary.at("steps") == 200);
  CHECK(summary.at("mismatches") == 0);
  std::system(("rm -rf " + out).c_str());
}

TEST_CASE("the Python reader says in one line that it needs NumPy, and why a file cannot be read", "[cli][export]") {
  const std::string out = temp_dir("export_no_numpy");
  // A numpy that fails to import stands for a Python without NumPy.
  std::system(("mkdir -p " + out + "/fake/numpy").c_str());
  std::ofstream(out + "/fake/numpy/__init__.py") << "raise ImportError(\"No module named 'numpy'\")\n";
  const std::string command = "PYTHONPATH=" + out + "/fake " + RLX_SYSTEM_PYTHON + " " + RLX_SOURCE_DIR +
                              "/python/rlx_policy.py p.rlxp --check-trace t.jsonl 2> " + out + "/python.err";
  const int status = std::system(command.c_str());
  const std::string err = read_text_file(out + "/python.err");
  INFO(err);
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 2));
  CHECK_THAT(err, Catch::StartsWith("error: rlx_policy.py needs NumPy") &&
                      Catch::Contains("apt-get install python3-numpy") && Catch::Contains("pip install numpy"));
  CHECK(err.find('\n') == err.size() - 1);  // one line, no traceback

  const auto missing = run_python_reader(out + "/nothere.rlxp --check-trace " + out + "/t.jsonl", out);
  CHECK(missing.exit_code == 2);
  CHECK(missing.err == "error: " + out + "/nothere.rlxp: No such file or directory\n");
  std::system(("rm -rf " + out).c_str());
}
