// `rlx learner --store HOST:PORT --rank R --world M`: a data-parallel learner rank >= 1, started
// by `rlx train` (rank 0) with --learners M; not meant to be run by hand.
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <string>

#include <torch/version.h>

#include "algorithms/make_algorithm.h"
#include "cli/command.h"
#include "core/log.h"
#include "core/stop_signal.h"
#include "core/version.h"
#include "learner/learner_group.h"

namespace po = boost::program_options;

namespace rlx::cli {

int run_learner_command(const std::vector<std::string>& args) {
  po::options_description options("rlx learner: a data-parallel learner rank (started by `rlx train --learners M`)");
  options.add_options()("help,h", "show this help")("store", po::value<std::string>(), "rank 0's c10d store, HOST:PORT")(
      "rank", po::value<int>(), "this rank (1..M-1)")("world", po::value<int>(), "number of learners M")(
      "device", po::value<std::string>()->default_value("cpu"), "cpu, cuda or cuda:N (rank r on cuda:N+r)")(
      "timeout-ms", po::value<int64_t>()->default_value(60000), "rendezvous and collective timeout");
  const po::variables_map values = parse_command_line(args, options, {});
  if (values.count("help")) {
    std::cout << options;
    return kExitOk;
  }
  if (!values.count("store") || !values.count("rank") || !values.count("world")) {
    throw UsageError("rlx learner needs --store HOST:PORT, --rank R and --world M");
  }
  const std::string store = values["store"].as<std::string>();
  const size_t colon = store.rfind(':');
  if (colon == std::string::npos) throw UsageError("--store must be HOST:PORT, got '" + store + "'");
  const int port = std::stoi(store.substr(colon + 1));
  const int rank = values["rank"].as<int>();
  const int world = values["world"].as<int>();
  if (world < 2 || rank < 1 || rank >= world) throw UsageError("--rank must lie in 1..world-1");
  set_log_role("learner rank " + std::to_string(rank), "rlx learner rank " + std::to_string(rank));
  logger().info("rlx {} (LibTorch {}) learner rank {} of {} starting: pid {}, store {}, device {}", kRlxVersion,
                TORCH_VERSION, rank, world, ::getpid(), store, values["device"].as<std::string>());
  // A rank carries on through SIGTERM/SIGINT (a scheduler signals every process of a job): rank 0
  // finishes its iteration and checkpoint, then stops the group. A second signal, or the grace
  // period, ends the rank at once.
  const StopSignals stop_signals(stop_grace_from_env(), "carrying on until learner rank 0 stops the group");
  std::unique_ptr<LearnerGroupMember> member =
      join_learner_group(store.substr(0, colon), port, rank, world, values["device"].as<std::string>(),
                         std::chrono::milliseconds(values["timeout-ms"].as<int64_t>()));
  logger().info("joined the group of {} learners", world);
  run_learner_rank(*member);
  return kExitOk;
}

}  // namespace rlx::cli
