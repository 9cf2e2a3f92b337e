// Runs the built `rlx` binary as a user would and captures what it prints.
#pragma once

#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/child_process.h"

namespace rlx::test {

struct CommandOutput {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string read_text_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// The JSON value on each line of `text` (a result.jsonl's, a command's JSON-lines output).
inline std::vector<nlohmann::json> json_lines(const std::string& text) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

// Runs `build/rlx ARGS` through the shell (ARGS is shell text) and returns its exit status,
// standard output and standard error.
inline CommandOutput run_rlx(const std::string& args) {
  const std::string base = std::string(RLX_BINARY_DIR) + "/tests/cli_run_" + std::to_string(::getpid());
  const std::string command = std::string(RLX_BINARY_DIR) + "/rlx " + args + " >" + base + ".out 2>" + base + ".err";
  const int status = std::system(command.c_str());
  CommandOutput result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = read_text_file(base + ".out");
  result.err = read_text_file(base + ".err");
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return result;
}

// Polls `done` until it holds (true) or `limit` passed (false).
inline bool wait_for(const std::function<bool()>& done, std::chrono::seconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// Starts `build/rlx ARGS` as a process of its own with `env` added to its environment, its
// stdout and stderr appended to `log`; destroying the result kills it if it still runs, so a
// failed check never leaves it behind.
inline std::unique_ptr<ChildProcess> start_rlx(const std::vector<std::string>& args, const std::filesystem::path& log,
                                               const std::vector<std::pair<std::string, std::string>>& env = {}) {
  std::vector<std::string> argv = {std::string(RLX_BINARY_DIR) + "/rlx"};
  argv.insert(argv.end(), args.begin(), args.end());
  return std::make_unique<ChildProcess>(ProcessSpec{argv, env, log, ""});
}

// How `process` ended, once it did within `limit`; nullopt while it still runs then.
inline std::optional<ChildExit> exit_within(ChildProcess& process, std::chrono::seconds limit) {
  wait_for([&] { return process.poll().has_value(); }, limit);
  return process.poll();
}

// The lines of a text file (0 when it is missing).
inline long lines_in(const std::string& path) {
  const std::string text = read_text_file(path);
  return static_cast<long>(std::count(text.begin(), text.end(), '\n'));
}

// The pids of a process's children (a run's rollout workers or learner ranks).
inline std::vector<pid_t> children_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::vector<pid_t> pids;
  for (pid_t child; in >> child;) pids.push_back(child);
  return pids;
}

// An empty directory build/tests/NAME_PID (emptied when it exists) for one test's files.
inline std::string temp_dir(const char* name) {
  const std::string dir = std::string(RLX_BINARY_DIR) + "/tests/" + name + "_" + std::to_string(::getpid());
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  return dir;
}

}  // namespace rlx::test
