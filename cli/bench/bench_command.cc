// `rlx bench SUBCOMMAND`: throughput benchmarks printing key=value lines, the medians last.
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/learner_benchmark.h"
#include "bench/native_learner_benchmark.h"
#include "bench/synthetic_pixels_env.h"
#include "bench/transport_benchmark.h"
#include "cli/bench/bench_subcommands.h"
#include "cli/command.h"
#include "cli/number_list.h"

namespace po = boost::program_options;

namespace rlx::cli {

namespace {

const char* const kBenchUsage =
    "usage: rlx bench SUBCOMMAND [OPTIONS]\n\n"
    "subcommands:\n"
    "  transport --bytes B   zero-copy fragments of B bytes over tcp loopback vs memcpy\n"
    "  scale --workers N,..  receiver CPU per fragment with N workers streaming (synthetic, or\n"
    "                        --real-workers: rlx worker processes, with their memory)\n"
    "  sampling --env ID     raw stepping vs local sampling vs the worker-process pipeline\n"
    "  learner --learners M  data-parallel PPO updates: samples/s and the all-reduce share (--precision\n"
    "                        fp32,bf16: side by side)\n"
    "  learner --native      LibTorch vs native PPO learner: update times as JSON lines\n"
    "  recurrent --width H   LSTM/GRU vs MLP policy: worker act() and learner update times (JSON)\n"
    "  startup               rlx --version and envs list exec-to-exit, an idle worker's memory\n"
    "  replay                a 1M-transition Hopper replay in checkpoints: whole vs segments (JSON)\n"
    "  serve POLICY.rlxp     rlx serve under closed- and open-loop load: requests/s, p50-p99.9 (JSON),\n"
    "                        against a Python server with --python-baseline\n\n"
    "every subcommand takes --help.\n";

int run_bench_transport(const std::vector<std::string>& args) {
  po::options_description options("rlx bench transport: fragment throughput over tcp://127.0.0.1 vs memcpy");
  options.add_options()("help,h", "show this help")(
      "bytes", po::value<uint64_t>()->default_value(uint64_t{1} << 20), "column bytes per fragment")(
      "seconds", po::value<double>()->default_value(1.0), "seconds per timed repeat")(
      "repeats", po::value<int>()->default_value(3), "timed repeats; the final lines are their medians");
  const po::variables_map values = parse_command_line(args, options, {});
  if (values.count("help")) {
    std::cout << "usage: rlx bench transport [--bytes B] [--seconds S] [--repeats R]\n\n" << options;
    return kExitOk;
  }
  TransportBenchmarkOptions bench;
  const uint64_t bytes = values["bytes"].as<uint64_t>();
  bench.seconds = values["seconds"].as<double>();
  bench.repeats = values["repeats"].as<int>();
  if (bytes < 1 || bytes > (uint64_t{1} << 28)) throw UsageError("--bytes must be in [1, 2^28], got " + std::to_string(bytes));
  if (!(bench.seconds > 0) || bench.seconds > 600) throw UsageError("--seconds must be in (0, 600]");
  if (bench.repeats < 1) throw UsageError("--repeats must be >= 1, got " + std::to_string(bench.repeats));
  bench.bytes = static_cast<size_t>(bytes);

  const TransportBenchmarkResult result = run_transport_benchmark(bench);
  for (size_t r = 0; r < result.runs.size(); ++r) {
    const TransportRun& run = result.runs[r];
    std::cout << "bytes=" << bench.bytes << " repeat=" << r + 1 << " messages=" << run.messages
              << " seconds=" << run.seconds << " msgs_per_s=" << run.msgs_per_s << " gbytes_per_s=" << run.gbytes_per_s
              << " memcpy_gbytes_per_s=" << run.memcpy_gbytes_per_s << "\n";
  }
  std::cout << "bytes=" << bench.bytes << "\n"
            << "msgs_per_s=" << result.msgs_per_s << "\n"
            << "gbytes_per_s=" << result.gbytes_per_s << "\n"
            << "memcpy_gbytes_per_s=" << result.memcpy_gbytes_per_s << "\n"
            << "ratio_to_memcpy=" << result.ratio_to_memcpy() << std::endl;
  return kExitOk;
}

// `rlx bench learner --native`: one JSON line per hidden-size case.
int run_bench_native_learner(const po::variables_map& values) {
  std::vector<std::string> hidden = {"64,64"};
  if (values.count("hidden")) hidden = values["hidden"].as<std::vector<std::string>>();
  NativeLearnerBenchmarkOptions bench;
  bench.env_id = values["env"].as<std::string>();
  bench.batch_size = values["batch"].as<int64_t>();
  bench.minibatch_size = values["minibatch"].as<int64_t>();
  bench.num_epochs = values["epochs"].defaulted() ? 20 : values["epochs"].as<int>();
  bench.updates = values["updates"].as<int>();
  if (bench.updates < 1 || bench.updates > 10000) throw UsageError("--updates must be in [1, 10000], got " + std::to_string(bench.updates));
  if (bench.num_epochs < 1) throw UsageError("--epochs must be >= 1, got " + std::to_string(bench.num_epochs));
  if (bench.minibatch_size < 1) throw UsageError("--minibatch must be >= 1, got " + std::to_string(bench.minibatch_size));
  if (bench.batch_size < 8 || bench.batch_size % 8 != 0) throw UsageError("--batch must be a positive multiple of 8, got " + std::to_string(bench.batch_size));
  for (const std::string& sizes : hidden) {
    bench.hidden_sizes.clear();
    for (double h : parse_number_list(sizes, "--hidden")) {
      if (h < 1 || h != static_cast<double>(static_cast<int64_t>(h))) throw UsageError("--hidden sizes must be positive integers, got '" + sizes + "'");
      bench.hidden_sizes.push_back(static_cast<int64_t>(h));
    }
    const NativeLearnerBenchmarkResult result = run_native_learner_benchmark(bench);
    const nlohmann::json line = {{"env", bench.env_id},
                                 {"hidden", bench.hidden_sizes},
                                 {"activation", bench.activation},
                                 {"batch", bench.batch_size},
                                 {"epochs", bench.num_epochs},
                                 {"minibatch", bench.minibatch_size},
                                 {"updates", bench.updates},
                                 {"params", result.num_parameters},
                                 {"minibatch_steps", result.minibatch_steps},
                                 {"torch_update_ms", result.torch_update_ms},
                                 {"native_update_ms", result.native_update_ms},
                                 {"torch_minibatch_ms", result.torch_minibatch_ms},
                                 {"native_minibatch_ms", result.native_minibatch_ms},
                                 {"ratio", result.ratio()},
                                 {"max_parameter_difference", result.max_parameter_difference}};
    std::cout << line.dump() << std::endl;
  }
  return kExitOk;
}

int run_bench_learner(const std::vector<std::string>& args) {
  po::options_description options("rlx bench learner: data-parallel PPO updates (M ranks as threads, Gloo or NCCL)");
  options.add_options()("help,h", "show this help")(
      "learners", po::value<std::string>()->default_value("1,2"),
      "data-parallel learners M, or a list (1,2): each runs in turn, then their throughput ratios to the first")(
      "device", po::value<std::string>()->default_value("cpu"), "cpu or cuda (rank r on cuda:r)")(
      "precision", po::value<std::string>()->default_value("fp32"),
      "the learners' precision: fp32, bf16, fp16 (cuda), or a list (fp32,bf16): each runs in turn, then their "
      "throughput ratios to the first")(
      "autograd", po::bool_switch(), "fp32 through autograd as well, not the hand-written backward (bf16 and fp16 always "
      "take autograd's)")(
      "env", po::value<std::string>()->default_value("CartPole-v1"), "environment of the fragments")(
      "hidden", po::value<std::vector<std::string>>()->composing(), "network hidden sizes, e.g. 64,64 (repeatable; default 64,64 and 256,256)")(
      "fragments", po::value<int>()->default_value(8), "fragments of 16 envs x 64 steps in the train batch")(
      "minibatch", po::value<int64_t>()->default_value(256), "minibatch size")(
      "epochs", po::value<int>()->default_value(4), "epochs per update")(
      "repeats", po::value<int>()->default_value(3), "timed updates; the final lines are their medians")(
      "native", po::bool_switch(), "instead: the LibTorch PpoLearner against the torch-free NativePpoLearner on one batch, "
      "one JSON line per --hidden (default 64,64; --epochs default 20)")(
      "batch", po::value<int64_t>()->default_value(1024), "--native: train batch samples (8 envs)")(
      "updates", po::value<int>()->default_value(10), "--native: timed updates per learner (medians)");
  const po::variables_map values = parse_command_line(args, options, {});
  if (values.count("help")) {
    std::cout << "usage: rlx bench learner [--learners M[,M...]] [--device cpu|cuda] [--precision P[,P...]] [--autograd] [--hidden 64,64 ...]\n"
                 "       rlx bench learner --native [--hidden 64,64 ...] [--batch N] [--epochs E] [--updates U]\n\n"
              << options;
    return kExitOk;
  }
  if (values["native"].as<bool>()) {
    if (!values["precision"].defaulted()) throw UsageError("--precision is the LibTorch learners'; --native compares fp32 learners");
    return run_bench_native_learner(values);
  }
  const std::vector<std::string> precisions = parse_word_list(values["precision"].as<std::string>(), "precision", {"fp32", "bf16", "fp16"});
  std::vector<std::string> hidden = {"64,64", "256,256"};
  if (values.count("hidden")) hidden = values["hidden"].as<std::vector<std::string>>();
  std::vector<int> learner_counts;
  for (double m : parse_number_list(values["learners"].as<std::string>(), "--learners")) {
    if (m < 1 || m != static_cast<double>(static_cast<int>(m))) throw UsageError("--learners takes positive integers, got " + values["learners"].as<std::string>());
    learner_counts.push_back(static_cast<int>(m));
  }
  LearnerBenchmarkOptions bench;
  bench.device = values["device"].as<std::string>();
  bench.analytic_gradients = !values["autograd"].as<bool>();
  bench.env_id = values["env"].as<std::string>();
  bench.num_fragments = values["fragments"].as<int>();
  bench.minibatch_size = values["minibatch"].as<int64_t>();
  bench.num_epochs = values["epochs"].as<int>();
  bench.repeats = values["repeats"].as<int>();
  for (const std::string& sizes : hidden) {
    bench.hidden_sizes.clear();
    for (double h : parse_number_list(sizes, "--hidden")) {
      if (h < 1 || h != static_cast<double>(static_cast<int64_t>(h))) throw UsageError("--hidden sizes must be positive integers, got '" + sizes + "'");
      bench.hidden_sizes.push_back(static_cast<int64_t>(h));
    }
    std::map<std::string, double> first_learners_rate;  // per precision: the first learner count's samples/s
    for (int learners : learner_counts) {
      double first_precision_rate = 0.0;  // the first precision's samples/s at this learner count
      for (const std::string& precision : precisions) {
        bench.num_learners = learners;
        bench.precision = precision;
        const LearnerBenchmarkResult result = run_learner_benchmark(bench);
        const std::string prefix = "learners=" + std::to_string(learners) + " device=" + bench.device +
                                   " precision=" + precision + (bench.analytic_gradients ? "" : " autograd=1") +
                                   " hidden=" + sizes;
        for (size_t r = 0; r < result.runs.size(); ++r) {
          std::cout << prefix << " repeat=" << r + 1 << " seconds=" << result.runs[r].seconds
                    << " samples_per_s=" << result.runs[r].samples_per_s << " allreduce_share=" << result.runs[r].allreduce_share << "\n";
        }
        std::cout << prefix << " batch=" << result.batch_samples << " params=" << result.num_parameters
                  << " samples_per_s=" << result.samples_per_s << " allreduce_share=" << result.allreduce_share
                  << (precision == "fp16" ? " skipped_steps=" + std::to_string(result.skipped_steps) : std::string()) << std::endl;
        if (!first_learners_rate.count(precision)) first_learners_rate[precision] = result.samples_per_s;
        if (learners != learner_counts.front()) {
          std::cout << "hidden=" << sizes << " device=" << bench.device << " precision=" << precision << " samples_per_s_ratio_"
                    << learners << "_over_" << learner_counts.front() << "=" << result.samples_per_s / first_learners_rate[precision]
                    << std::endl;
        }
        if (first_precision_rate == 0.0) first_precision_rate = result.samples_per_s;
        if (precision != precisions.front()) {
          std::cout << "hidden=" << sizes << " device=" << bench.device << " learners=" << learners << " samples_per_s_ratio_"
                    << precision << "_over_" << precisions.front() << "=" << result.samples_per_s / first_precision_rate
                    << std::endl;
        }
      }
    }
  }
  return kExitOk;
}

}  // namespace

int run_bench_command(const std::vector<std::string>& args) {
  const std::map<std::string, int (*)(const std::vector<std::string>&)> subcommands = {
      {"scale", run_bench_scale},
      {"transport", run_bench_transport}, {"sampling", run_bench_sampling}, {"learner", run_bench_learner},
      {"recurrent", run_bench_recurrent}, {"startup", run_bench_startup}, {"replay", run_bench_replay}, {"serve", run_bench_serve}};
  if (args.empty()) throw UsageError(std::string("missing subcommand\n") + kBenchUsage);
  if (args.front() == "--help" || args.front() == "-h") {
    std::cout << kBenchUsage;
    return kExitOk;
  }
  auto it = subcommands.find(args.front());
  if (it == subcommands.end()) throw UsageError("unknown subcommand '" + args.front() + "'\n" + kBenchUsage);
  register_synthetic_envs_globally();  // Synthetic/Pixels84-v0 and the like: ids for benchmarks only
  return it->second(std::vector<std::string>(args.begin() + 1, args.end()));
}

}  // namespace rlx::cli
