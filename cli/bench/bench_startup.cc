// `rlx bench startup`: what an rlx process costs before it does any work. The wall time from
// exec to exit of `rlx --version` and `rlx envs list` (medians of R runs), and the memory of a
// worker process that has started and waits for its learner (from /proc/PID/smaps_rollup):
// the baseline every worker pays, before its env and policy. key=value lines, medians last.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/bench/bench_subcommands.h"
#include "cli/command.h"
#include "core/guarded_temp_dir.h"
#include "core/process_launcher.h"

namespace po = boost::program_options;

namespace rlx::cli {

namespace {

using Clock = std::chrono::steady_clock;

// Milliseconds from launching `argv` to its exit; std::runtime_error when it fails or runs past 60 s.
double exec_to_exit_ms(const std::vector<std::string>& argv, const std::filesystem::path& log) {
  const auto start = Clock::now();
  const std::unique_ptr<LaunchedProcess> child = local_launcher().launch({argv, {}, log, ""});
  for (;;) {
    if (const std::optional<ChildExit> exit = child->poll()) {
      if (!exit->clean()) throw std::runtime_error(argv[1] + " " + exit->describe() + "; see " + log.string());
      return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    }
    if (Clock::now() - start > std::chrono::seconds(60)) throw std::runtime_error(argv[1] + " ran past 60 s");
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

// The "Name:   N kB" fields of /proc/PID/smaps_rollup, in kB.
std::map<std::string, long> smaps_rollup_kb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/smaps_rollup");
  std::map<std::string, long> fields;
  std::string line;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos || line.find(" kB") == std::string::npos) continue;
    fields[line.substr(0, colon)] = std::stol(line.substr(colon + 1));
  }
  if (fields.empty()) throw std::runtime_error("cannot read /proc/" + std::to_string(pid) + "/smaps_rollup");
  return fields;
}

}  // namespace

int run_bench_startup(const std::vector<std::string>& args) {
  po::options_description options("rlx bench startup: exec-to-exit times and an idle worker's memory");
  options.add_options()("help,h", "show this help")("repeats", po::value<int>()->default_value(5),
                                                     "runs of each command; the final lines are their medians");
  const po::variables_map values = parse_command_line(args, options, {});
  if (values.count("help")) {
    std::cout << "usage: rlx bench startup [--repeats R]\n\n" << options;
    return kExitOk;
  }
  const int repeats = values["repeats"].as<int>();
  if (repeats < 1 || repeats > 1000) throw UsageError("--repeats must be in [1, 1000], got " + std::to_string(repeats));
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  GuardedTempDir dir("rlx-bench-startup-");

  std::map<std::string, std::vector<std::string>> commands = {{"version", {self, "--version"}},
                                                               {"envs_list", {self, "envs", "list"}}};
  std::map<std::string, std::vector<double>> times;
  for (int r = 0; r < repeats; ++r) {
    for (const auto& [name, argv] : commands) {
      const double ms = exec_to_exit_ms(argv, dir.path() / (name + ".log"));
      times[name].push_back(ms);
      std::cout << "command=" << name << " repeat=" << r + 1 << " exec_to_exit_ms=" << ms << "\n";
    }
  }

  // A worker that has started up and waits for a learner that never writes its endpoint.
  const std::filesystem::path worker_log = dir.path() / "worker.log";
  const std::unique_ptr<LaunchedProcess> worker = local_launcher().launch(
      {{self, "worker", "--connect-file", (dir.path() / "no-learner").string(), "--learner-timeout", "60"},
       {},
       worker_log,
       ""});
  const auto started = Clock::now();
  const auto waiting = [&] {
    std::ifstream in(worker_log);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return text.find("waiting for the learner") != std::string::npos;
  };
  while (!waiting()) {
    if (worker->poll() || Clock::now() - started > std::chrono::seconds(30)) {
      throw std::runtime_error("the idle worker did not start; see " + worker_log.string());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const double worker_ready_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  const std::map<std::string, long> memory = smaps_rollup_kb(worker->pid());
  worker->kill();

  std::cout << "version_ms=" << median(times["version"]) << "\n"
            << "envs_list_ms=" << median(times["envs_list"]) << "\n"
            << "idle_worker_ready_ms=" << worker_ready_ms << "\n"
            << "idle_worker_rss_kb=" << memory.at("Rss") << "\n"
            << "idle_worker_pss_kb=" << memory.at("Pss") << "\n"
            << "idle_worker_private_dirty_kb=" << memory.at("Private_Dirty") << std::endl;
  return kExitOk;
}

}  // namespace rlx::cli
