// `rlx bench SUBCOMMAND`: throughput benchmarks printing key=value lines, the medians last.
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "cli/bench_subcommands.h"
#include "cli/command.h"
#include "transport/transport_benchmark.h"

namespace po = boost::program_options;

namespace rlx::cli {

namespace {

const char* const kBenchUsage =
    "usage: rlx bench SUBCOMMAND [OPTIONS]\n\n"
    "subcommands:\n"
    "  transport --bytes B   zero-copy fragments of B bytes over tcp loopback vs memcpy\n"
    "  sampling --env ID     raw stepping vs local sampling vs the worker-process pipeline\n\n"
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

}  // namespace

int run_bench_command(const std::vector<std::string>& args) {
  const std::map<std::string, int (*)(const std::vector<std::string>&)> subcommands = {
      {"transport", run_bench_transport}, {"sampling", run_bench_sampling}};
  if (args.empty()) throw UsageError(std::string("missing subcommand\n") + kBenchUsage);
  if (args.front() == "--help" || args.front() == "-h") {
    std::cout << kBenchUsage;
    return kExitOk;
  }
  auto it = subcommands.find(args.front());
  if (it == subcommands.end()) throw UsageError("unknown subcommand '" + args.front() + "'\n" + kBenchUsage);
  return it->second(std::vector<std::string>(args.begin() + 1, args.end()));
}

}  // namespace rlx::cli
