// `rlx worker --connect ENDPOINT`: a rollout worker process that joins a learner, local or remote.
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>
#include <string>
#include <vector>

#include "cli/command.h"
#include "core/log.h"
#include "core/stop_signal.h"
#include "core/version.h"
#include "envs/env.h"
#include "envs/python_env.h"
#include "rollout/rollout_worker.h"
#include "transport/sockets.h"
#include "transport/wire_format.h"

namespace po = boost::program_options;

namespace rlx::cli {

namespace {

// The endpoint an endpoint file names (its first line, e.g. tcp://node1:5555); nullopt while the
// file does not exist or is empty (the learner is not up yet). UsageError naming the file when
// its line is no tcp:// or ipc:// endpoint.
std::optional<std::string> read_endpoint_file(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
  if (line.empty()) return std::nullopt;
  if ((line.rfind("tcp://", 0) != 0 && line.rfind("ipc://", 0) != 0) || line.size() > 1024) {
    throw UsageError(file.string() + ": \"" + line.substr(0, 80) + "\" is not a tcp:// or ipc:// endpoint");
  }
  return line;
}

// Waits for `file` to name an endpoint, for at most `timeout` (the learner may start after its workers).
std::string wait_for_endpoint_file(const std::filesystem::path& file, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool said = false;
  for (;;) {
    if (std::optional<std::string> endpoint = read_endpoint_file(file)) return *endpoint;
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("no learner endpoint appeared in " + file.string() + " within " +
                               std::to_string(timeout.count() / 1000) + " s (--learner-timeout)");
    }
    if (!said) logger().info("waiting for the learner to write its endpoint to {}", file.string());
    said = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

}  // namespace

int run_worker_command(const std::vector<std::string>& args) {
  po::options_description options("rlx worker: step envs with the learner's policy and stream fragments to it");
  options.add_options()("help,h", "show this help")("connect", po::value<std::string>(),
                                                     "the learner's endpoint, e.g. tcp://head:5555 (or --connect-file)")(
      "connect-file", po::value<std::string>(),
      "a file naming the learner's endpoint (rlx train writes TRIAL_DIR/endpoint): waited for, and read "
      "again whenever the learner goes quiet, so the worker follows a learner that restarts elsewhere")(
      "envs", po::value<int>()->default_value(0), "envs in this worker (0: as the learner says)")(
      "worker-id", po::value<uint64_t>()->default_value(0),
      "a number for logs and the learner's messages (0: random); the learner gives each connection its own identity")(
      "auth-keys", po::value<std::string>(),
      "directory with this worker's CURVE key pair (client.key, client.pub) and the learner's server.pub")(
      "learner-timeout", po::value<double>()->default_value(30.0), "exit after the learner is silent this many seconds")(
      "verbose,v", "log debug lines too (same as --log-level debug)");
  add_env_plugin_option(options);
  const po::variables_map values = parse_command_line(args, options, {});
  if (values.count("help")) {
    std::cout << "usage: rlx worker --connect ENDPOINT | --connect-file FILE [--envs K] [--env-plugin PATH ...]\n"
                 "                  [--auth-keys DIR] [--learner-timeout S]\n\n"
              << options;
    return kExitOk;
  }
  if (values.count("connect") == values.count("connect-file")) {
    throw UsageError("give one of --connect ENDPOINT and --connect-file FILE");
  }
  const double timeout_s = values["learner-timeout"].as<double>();
  if (!(timeout_s > 0)) throw UsageError("--learner-timeout must be > 0");
  if (values["envs"].as<int>() < 0) throw UsageError("--envs must be >= 0");
  if (values.count("verbose") && log_level() > LogLevel::kDebug) set_log_level(LogLevel::kDebug);
  load_env_plugins_from(values);

  RolloutWorkerOptions worker_options;
  if (values.count("connect-file")) {
    const std::filesystem::path file = values["connect-file"].as<std::string>();
    worker_options.endpoint = wait_for_endpoint_file(file, std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000)));
    worker_options.endpoint_source = [file] { return read_endpoint_file(file); };
  } else {
    worker_options.endpoint = values["connect"].as<std::string>();
  }
  worker_options.num_envs = values["envs"].as<int>();
  worker_options.worker_id = values["worker-id"].as<uint64_t>();
  worker_options.learner_timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  if (values.count("auth-keys")) {
    const std::filesystem::path dir = values["auth-keys"].as<std::string>();
    worker_options.curve_client = load_curve_keypair(dir / "client");
    worker_options.curve_server_public_key = load_curve_public_key(dir / "server.pub");
  }
  // SIGTERM (a scheduler ending the job step) or SIGINT: goodbye to the learner and the last line
  // below, so that the job's output still adds up; before the context's threads start.
  const StopSignals stop_signals(stop_grace_from_env(), "saying goodbye to the learner, then exiting");
  zmq::context_t context(1);
  RolloutWorker worker(context, worker_options);
  const std::string id = std::to_string(worker.worker_id());
  set_log_role("worker " + id, "rlx worker " + id);
  const std::string who = "worker " + id + " (pid " + std::to_string(::getpid()) + ")";
  logger().info("rlx {} worker {} starting: pid {} on {}, wire protocol {}, connecting to {}{}, learner timeout {} s",
                kRlxVersion, id, ::getpid(), local_host_name(), kProtocolVersion, worker_options.endpoint,
                worker_options.curve_client ? " with CURVE keys" : "", timeout_s);
  WorkerExit exit;
  try {
    exit = worker.run();
  } catch (const NonFiniteEnvOutput& error) {
    throw NonFiniteEnvOutput(error, who);
  } catch (const EnvOutputError& error) {
    throw EnvOutputError(error, who);
  } catch (const PythonEnvError& error) {
    throw PythonEnvError(who + ": " + error.what(), error.traceback());
  }
  const RolloutWorkerStats& stats = worker.stats();
  if (exit == WorkerExit::kRefusedByLearner) throw UsageError(stats.refusal);
  const std::string counts = "(fragments_sent=" + std::to_string(stats.fragments_sent) +
                             " fragments_unsent=" + std::to_string(stats.fragments_unsent) +
                             " env_steps_sent=" + std::to_string(stats.env_steps_sent) +
                             " weights_received=" + std::to_string(stats.weights_received) + ")";
  if (exit == WorkerExit::kLearnerGone) {
    logger().warn("the learner is gone, exiting {}", counts);
    return kExitLearnerGone;
  }
  if (exit == WorkerExit::kSignalled) {
    logger().warn("stopped by {} {}", stop_signal_name(stop_signal()), counts);
    return kExitStopped;
  }
  logger().info("stopped by the learner {}", counts);
  return kExitOk;
}

}  // namespace rlx::cli
