// `rlx bench scale`: one receiver, N workers streaming into it; receiver CPU per fragment at each
// N. Synthetic worker connections by default; with --real-workers, N `rlx worker` processes
// stepping their env, with their memory, optionally beside the synthetic mode at the same rate.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "bench/real_scale_benchmark.h"
#include "bench/scale_benchmark.h"
#include "cli/bench/bench_subcommands.h"
#include "cli/command.h"
#include "cli/number_list.h"
#include "core/log.h"
#include "core/rlx_program.h"

namespace po = boost::program_options;

namespace rlx::cli {

namespace {

constexpr int kSyntheticEnvs = 8;  // K by default: synthetic connections
constexpr int kRealEnvs = 1;       // K by default: real workers, one env each

// Keeps the lowest and highest CPU per fragment seen, for the closing ratio line.
struct CpuRange {
  double lowest = 0, highest = 0;
  void add(double us) {
    if (us <= 0) return;
    lowest = lowest > 0 ? std::min(lowest, us) : us;
    highest = std::max(highest, us);
  }
  double ratio() const { return lowest > 0 ? highest / lowest : 0; }
};

std::vector<int> worker_counts_from(const std::string& text) {
  std::vector<int> counts;
  for (double count : parse_number_list(text, "--workers")) {
    if (count < 1 || count > 100000 || count != static_cast<int>(count)) {
      throw UsageError("--workers takes whole numbers in [1, 100000], got " + std::to_string(count));
    }
    counts.push_back(static_cast<int>(count));
  }
  return counts;
}

// The real mode: one measurement per count, each optionally followed by the synthetic mode at
// the fragment rate the real workers reached. False if some fragment was not accounted for.
bool run_real(const std::vector<int>& counts, RealScaleOptions real, ScaleOptions synthetic, bool compare) {
  CpuRange range;
  bool all_accounted = true;
  for (int workers : counts) {
    real.workers = workers;
    const RealScaleResult result = run_real_scale_benchmark(real);
    std::cout << format_real_scale_result(result) << std::endl;
    all_accounted = all_accounted && result.accounted;
    range.add(result.cpu_us_per_fragment);
    if (!compare || result.fragments_per_s <= 0) continue;
    synthetic.workers = workers;
    synthetic.total_fragments_per_s = result.fragments_per_s;
    const ScaleResult same_rate = run_scale_benchmark(synthetic);
    std::cout << "mode=synthetic " << format_scale_result(same_rate) << std::endl;
    all_accounted = all_accounted && same_rate.accounted;
    std::cout << "workers=" << workers << " real_receiver_cpu_us_per_fragment=" << result.cpu_us_per_fragment
              << " synthetic_receiver_cpu_us_per_fragment=" << same_rate.cpu_us_per_fragment
              << " real_over_synthetic=" << (same_rate.cpu_us_per_fragment > 0
                                                 ? result.cpu_us_per_fragment / same_rate.cpu_us_per_fragment
                                                 : 0)
              << std::endl;
  }
  std::cout << "mode=real cpu_per_fragment_ratio_max_over_min=" << range.ratio() << std::endl;
  return all_accounted;
}

}  // namespace

int run_bench_scale(const std::vector<std::string>& args) {
  po::options_description options("rlx bench scale: one receiver, N workers streaming over tcp://127.0.0.1");
  options.add_options()("help,h", "show this help")(
      "workers", po::value<std::string>()->default_value("10,100,1000"), "worker counts, one measurement each")(
      "real-workers", "real `rlx worker` processes (each stepping its env) instead of synthetic connections")(
      "compare-synthetic", "with --real-workers: after each count, the synthetic mode at the rate the real workers reached")(
      "seconds", po::value<double>()->default_value(30.0), "measured seconds per worker count")(
      "warmup", po::value<double>()->default_value(2.0), "seconds after every worker joined, before measuring")(
      "workers-per-process", po::value<int>()->default_value(250), "synthetic workers per forked process")(
      "credits", po::value<int>()->default_value(2), "fragments each worker may have in flight")(
      "rate", po::value<double>()->default_value(0.0), "synthetic: fragments per second per worker; 0: as credits allow")(
      "total-rate", po::value<double>()->default_value(0.0), "synthetic: fragments per second over all workers (instead of --rate)")(
      "fragment-length", po::value<int>()->default_value(32), "T of each fragment")(
      "envs", po::value<int>(), "K of each fragment (default 8 synthetic, 1 with --real-workers)")(
      "env", po::value<std::string>()->default_value("CartPole-v1"), "with --real-workers: the env each worker steps")(
      "endpoint", po::value<std::string>()->default_value("tcp://127.0.0.1:*"),
      "with --real-workers: the receiver's endpoint (e.g. ipc:///tmp/rlx-scale, as rlx train uses)")(
      "log-dir", po::value<std::string>(), "with --real-workers: keep worker i's log as DIR/worker_<i>.log")(
      "join-timeout", po::value<double>()->default_value(180.0), "seconds for every worker to join")(
      "weights-interval", po::value<double>()->default_value(1.0), "seconds between new weights; 0: publish once")(
      "heartbeat-ms", po::value<int>()->default_value(500), "synthetic: each worker's heartbeat interval");
  const po::variables_map values = parse_command_line(args, options, {});
  if (values.count("help")) {
    std::cout << "usage: rlx bench scale [--workers N[,N2,...]] [--seconds S] [--workers-per-process P]\n"
                 "       rlx bench scale --real-workers [--workers N[,N2,...]] [--seconds S] [--compare-synthetic]\n\n"
              << options;
    return kExitOk;
  }
  const bool real = values.count("real-workers") > 0;
  ScaleOptions bench;
  bench.seconds = values["seconds"].as<double>();
  bench.warmup_seconds = values["warmup"].as<double>();
  bench.workers_per_process = values["workers-per-process"].as<int>();
  bench.credits_per_worker = values["credits"].as<int>();
  bench.max_fragments_per_s_per_worker = values["rate"].as<double>();
  bench.total_fragments_per_s = values["total-rate"].as<double>();
  bench.fragment_length = values["fragment-length"].as<int>();
  bench.num_envs = values.count("envs") ? values["envs"].as<int>() : (real ? kRealEnvs : kSyntheticEnvs);
  bench.weights_interval_seconds = values["weights-interval"].as<double>();
  bench.heartbeat_interval_ms = values["heartbeat-ms"].as<int>();
  bench.join_timeout_seconds = values["join-timeout"].as<double>();
  if (!(bench.seconds > 0) || bench.seconds > 3600) throw UsageError("--seconds must be in (0, 3600]");
  if (!(bench.warmup_seconds >= 0) || bench.warmup_seconds > 600) throw UsageError("--warmup must be in [0, 600]");
  if (!(bench.join_timeout_seconds > 0) || bench.join_timeout_seconds > 3600) {
    throw UsageError("--join-timeout must be in (0, 3600]");
  }
  if (bench.workers_per_process < 1) throw UsageError("--workers-per-process must be >= 1");
  if (bench.credits_per_worker < 1) throw UsageError("--credits must be >= 1");
  if (bench.heartbeat_interval_ms < 1) throw UsageError("--heartbeat-ms must be >= 1");
  if (!(bench.max_fragments_per_s_per_worker >= 0) || !(bench.total_fragments_per_s >= 0)) {
    throw UsageError("--rate and --total-rate must be >= 0");
  }
  if (bench.max_fragments_per_s_per_worker > 0 && bench.total_fragments_per_s > 0) {
    throw UsageError("give --rate or --total-rate, not both");
  }
  if (bench.fragment_length < 1 || bench.num_envs < 1) throw UsageError("--fragment-length and --envs must be >= 1");
  if (!(bench.weights_interval_seconds >= 0) || bench.weights_interval_seconds > 3600) {
    throw UsageError("--weights-interval must be in [0, 3600]");
  }
  const std::vector<int> worker_counts = worker_counts_from(values["workers"].as<std::string>());

  if (real) {
    if (bench.max_fragments_per_s_per_worker > 0 || bench.total_fragments_per_s > 0) {
      throw UsageError("--rate and --total-rate are for synthetic workers: real workers step as fast as credits allow");
    }
    RealScaleOptions options_real;
    options_real.worker_program = rlx_program_path();
    options_real.env_id = values["env"].as<std::string>();
    options_real.envs_per_worker = bench.num_envs;
    options_real.fragment_length = bench.fragment_length;
    options_real.credits_per_worker = bench.credits_per_worker;
    options_real.seconds = bench.seconds;
    options_real.warmup_seconds = bench.warmup_seconds;
    options_real.weights_interval_seconds = bench.weights_interval_seconds;
    options_real.join_timeout_seconds = bench.join_timeout_seconds;
    options_real.endpoint = values["endpoint"].as<std::string>();
    if (values.count("log-dir")) options_real.log_dir = values["log-dir"].as<std::string>();
    if (!run_real(worker_counts, options_real, bench, values.count("compare-synthetic") > 0)) {
      logger().error("bench scale: some fragments were not accounted for (see accounted=false above)");
      return kExitError;
    }
    return kExitOk;
  }
  if (values.count("compare-synthetic")) throw UsageError("--compare-synthetic goes with --real-workers");

  CpuRange range;
  bool all_accounted = true;
  for (int workers : worker_counts) {
    bench.workers = workers;
    const ScaleResult result = run_scale_benchmark(bench);
    std::cout << format_scale_result(result) << std::endl;
    all_accounted = all_accounted && result.accounted;
    range.add(result.cpu_us_per_fragment);
  }
  std::cout << "cpu_per_fragment_ratio_max_over_min=" << range.ratio() << std::endl;
  if (!all_accounted) {
    logger().error("bench scale: some fragments were not accounted for (see accounted=false above)");
    return kExitError;
  }
  return kExitOk;
}

}  // namespace rlx::cli
