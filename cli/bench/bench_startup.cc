// `rlx bench startup`: what rlx processes cost, each figure beside its budget. The wall time
// from exec to exit of `rlx --version` and `rlx envs list` (medians of R runs); the memory of a
// worker that waits for its learner; the time from launching a CartPole worker to its first
// fragment at a receiver (median of R); and the memory of CartPole and Hopper workers while they
// stream (4 each, from /proc/PID/smaps_rollup; medians over the workers). key=value lines.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <utility>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench/pipeline_benchmark.h"
#include "bench/process_memory.h"
#include "cli/bench/bench_subcommands.h"
#include "cli/command.h"
#include "core/guarded_temp_dir.h"
#include "core/process_launcher.h"
#include "core/rlx_program.h"

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

// Budgets (issue 14): the light CLI's start, a worker's footprint and its first fragment.
constexpr double kCommandBudgetMs = 50.0;
constexpr double kFirstFragmentBudgetMs = 100.0;
constexpr double kCartPolePssBudgetKb = 8 * 1024.0;
constexpr double kCartPoleRssBudgetKb = 25 * 1024.0;
constexpr double kMujocoPssBudgetKb = 30 * 1024.0;

// The pipeline benchmark on `env_id` with `workers` workers for `seconds`.
PipelineMeasurement stream_workers(const std::string& program, const std::string& env_id, int workers, double seconds) {
  PipelineBenchmarkOptions options;
  options.worker_program = program;
  options.env_id = env_id;
  options.num_workers = workers;
  options.warmup_seconds = 0.0;
  options.seconds = seconds;
  return measure_pipeline_sampling(options);
}

// Median RSS and PSS over a run's workers, in kB.
std::pair<double, double> median_rss_pss_kb(const PipelineMeasurement& run) {
  std::vector<double> rss, pss;
  for (const ProcessMemory& memory : run.worker_memory) {
    rss.push_back(static_cast<double>(memory.rss_kb));
    pss.push_back(static_cast<double>(memory.pss_kb));
  }
  return {median_of(rss), median_of(pss)};
}

// key=value, key_budget=budget and key_within_budget=1 or 0, a line each.
void print_against_budget(const std::string& key, double value, double budget) {
  std::cout << key << "=" << value << "\n"
            << key << "_budget=" << budget << "\n"
            << key << "_within_budget=" << (value <= budget ? 1 : 0) << "\n";
}

}  // namespace

int run_bench_startup(const std::vector<std::string>& args) {
  po::options_description options("rlx bench startup: start-up times and worker memory against their budgets");
  options.add_options()("help,h", "show this help")("repeats", po::value<int>()->default_value(5),
                                                     "runs of each command; the final lines are their medians");
  const po::variables_map values = parse_command_line(args, options, {});
  if (values.count("help")) {
    std::cout << "usage: rlx bench startup [--repeats R]\n\n" << options;
    return kExitOk;
  }
  const int repeats = values["repeats"].as<int>();
  if (repeats < 1 || repeats > 1000) throw UsageError("--repeats must be in [1, 1000], got " + std::to_string(repeats));
  const std::string self = rlx_program_path();
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
  const ProcessMemory idle = read_process_memory(worker->pid());
  worker->kill();

  std::vector<double> first_fragment;
  for (int r = 0; r < repeats; ++r) {
    first_fragment.push_back(stream_workers(self, "CartPole-v1", 1, 0.05).first_fragment_ms);
    std::cout << "command=worker_first_fragment repeat=" << r + 1 << " ms=" << first_fragment.back() << "\n";
  }
  const auto [cartpole_rss, cartpole_pss] = median_rss_pss_kb(stream_workers(self, "CartPole-v1", 4, 1.0));
  const auto [hopper_rss, hopper_pss] = median_rss_pss_kb(stream_workers(self, "Hopper-v4", 4, 1.0));

  print_against_budget("version_ms", median_of(times["version"]), kCommandBudgetMs);
  print_against_budget("envs_list_ms", median_of(times["envs_list"]), kCommandBudgetMs);
  print_against_budget("worker_first_fragment_ms", median_of(first_fragment), kFirstFragmentBudgetMs);
  print_against_budget("cartpole_worker_pss_kb", cartpole_pss, kCartPolePssBudgetKb);
  print_against_budget("cartpole_worker_rss_kb", cartpole_rss, kCartPoleRssBudgetKb);
  print_against_budget("hopper_worker_pss_kb", hopper_pss, kMujocoPssBudgetKb);
  std::cout << "hopper_worker_rss_kb=" << hopper_rss << "\n"
            << "idle_worker_ready_ms=" << worker_ready_ms << "\n"
            << "idle_worker_rss_kb=" << idle.rss_kb << "\n"
            << "idle_worker_pss_kb=" << idle.pss_kb << "\n"
            << "idle_worker_private_dirty_kb=" << idle.private_dirty_kb << std::endl;
  return kExitOk;
}

}  // namespace rlx::cli
