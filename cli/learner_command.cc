// `rlx learner --store HOST:PORT --rank R --world M`: a data-parallel learner rank >= 1, started
// by `rlx train` (rank 0) with --learners M; `rlx learner --join HOST:PORT` (or --join-file): a
// rank that joins a running elastic group (a requeued srun step, a replacement host).
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>

#include <torch/version.h>

#include "algorithms/make_algorithm.h"
#include "cli/command.h"
#include "core/log.h"
#include "core/stop_signal.h"
#include "core/file_read.h"
#include "core/parse_number.h"
#include "core/version.h"
#include "learner/learner_group.h"

namespace po = boost::program_options;

namespace rlx::cli {

namespace {

// text without leading and trailing whitespace (a file's newline).
std::string trimmed(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

// HOST:PORT split; UsageError naming `flag` otherwise.
std::pair<std::string, int> host_and_port(const std::string& text, const std::string& flag) {
  const size_t colon = text.rfind(':');
  const int64_t port = colon != std::string::npos && colon > 0 ? parse_whole_int64(text.substr(colon + 1)).value_or(-1) : -1;
  if (port < 1 || port > 65535) throw UsageError(flag + " must be HOST:PORT, got '" + text + "'");
  return {text.substr(0, colon), static_cast<int>(port)};
}

// The rank that picks this process's GPU when it joins by hand: --local-rank, else torchrun's
// LOCAL_RANK or srun's SLURM_LOCALID, else 0.
int local_device_rank(const po::variables_map& values) {
  if (values.count("local-rank")) return values["local-rank"].as<int>();
  for (const char* name : {"LOCAL_RANK", "SLURM_LOCALID"}) {
    if (const char* value = std::getenv(name); value != nullptr && *value != '\0') return std::atoi(value);
  }
  return 0;
}

}  // namespace

int run_learner_command(const std::vector<std::string>& args) {
  po::options_description options(
      "rlx learner: a data-parallel learner rank. `rlx train --learners M` starts its own; join a running elastic "
      "group (elastic: true) with --join HOST:PORT or --join-file TRIAL/learner_endpoint");
  options.add_options()("help,h", "show this help")(
      "join", po::value<std::string>(), "join the elastic learner group whose rank 0 serves HOST:PORT")(
      "join-file", po::value<std::string>(), "join the elastic group whose address rank 0 wrote to this file (TRIAL/learner_endpoint)")(
      "local-rank", po::value<int>(), "with --join: learn on cuda:N+LOCAL_RANK (default: LOCAL_RANK or SLURM_LOCALID, else 0)")(
      "rendezvous-timeout-s", po::value<double>()->default_value(300.0), "with --join: how long to wait for rank 0")(
      "store", po::value<std::string>(), "(started by rlx train) rank 0's c10d store, HOST:PORT")(
      "rank", po::value<int>(), "(started by rlx train) this rank (1..M-1)")(
      "world", po::value<int>(), "(started by rlx train) number of learners M")(
      "elastic", "(started by rlx train) join the elastic group at --store, --rank orders the first generation")(
      "device", po::value<std::string>()->default_value("cpu"), "cpu, cuda or cuda:N (rank r on cuda:N+r)")(
      "timeout-ms", po::value<int64_t>()->default_value(60000), "rendezvous and collective timeout");
  const po::variables_map values = parse_command_line(args, options, {});
  if (values.count("help")) {
    std::cout << options;
    return kExitOk;
  }
  // A rank carries on through SIGTERM/SIGINT (a scheduler signals every process of a job): rank 0
  // finishes its iteration and checkpoint, then stops the group. A second signal, or the grace
  // period, ends the rank at once.
  if (values.count("join") || values.count("join-file")) {
    if (values.count("join") && values.count("join-file")) throw UsageError("give --join or --join-file, not both");
    const std::string address = values.count("join") ? values["join"].as<std::string>()
                                                      : trimmed(read_file(values["join-file"].as<std::string>()));
    const auto [host, port] = host_and_port(address, values.count("join") ? "--join" : "--join-file's content");
    set_log_role("joining learner", "rlx learner (joining)");
    logger().info("rlx {} (LibTorch {}) learner joining the elastic group at {}: pid {}", kRlxVersion, TORCH_VERSION,
                  address, ::getpid());
    const StopSignals stop_signals(stop_grace_from_env(), "carrying on until learner rank 0 stops the group");
    const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(values["rendezvous-timeout-s"].as<double>() * 1000));
    std::unique_ptr<LearnerGroupMember> member = join_elastic_learner_group(
        host, port, -1, local_device_rank(values), gloo_endpoint_from_environment(host), timeout);
    if (!member) {
      logger().info("the run finished before this rank was taken in");
      return kExitOk;
    }
    run_learner_rank(*member);
    return kExitOk;
  }
  if (!values.count("store") || !values.count("rank") || !values.count("world")) {
    throw UsageError("rlx learner needs --join HOST:PORT, --join-file FILE, or (from rlx train) --store, --rank and --world");
  }
  const std::string store = values["store"].as<std::string>();
  const auto [host, port] = host_and_port(store, "--store");
  const int rank = values["rank"].as<int>();
  const int world = values["world"].as<int>();
  if (world < 2 || rank < 1 || rank >= world) throw UsageError("--rank must lie in 1..world-1");
  set_log_role("learner rank " + std::to_string(rank), "rlx learner rank " + std::to_string(rank));
  logger().info("rlx {} (LibTorch {}) learner rank {} of {} starting: pid {}, store {}, device {}", kRlxVersion,
                TORCH_VERSION, rank, world, ::getpid(), store, values["device"].as<std::string>());
  const StopSignals stop_signals(stop_grace_from_env(), "carrying on until learner rank 0 stops the group");
  const std::chrono::milliseconds timeout(values["timeout-ms"].as<int64_t>());
  std::unique_ptr<LearnerGroupMember> member =
      values.count("elastic") ? join_elastic_learner_group(host, port, rank, rank, GlooEndpoint{}, timeout)
                              : join_learner_group(host, port, rank, world, values["device"].as<std::string>(), timeout);
  if (!member) return kExitOk;  // an elastic run that finished before this rank was taken in
  logger().info("joined the group of {} learners", member->size());
  run_learner_rank(*member);
  return kExitOk;
}

}  // namespace rlx::cli
