// `rlx serve [NAME=]MODEL...`: trained policies answering requests over HTTP and ZeroMQ
// (serve/policy_server.h; docs/serve.md).
#include "cli/serve_command.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "core/atomic_file.h"
#include "core/file_read.h"
#include "core/stop_signal.h"
#include "envs/python_env.h"
#include "serve/policy_server.h"
#include "transport/curve.h"
#include "transport/sample_receiver.h"

namespace po = boost::program_options;

namespace rlx::cli {

namespace {

// [NAME=]PATH[#POLICY]: PATH a .rlxp file, a checkpoint or a trial; POLICY one policy of a
// multi-agent checkpoint.
ServedSource parse_model_argument(const std::string& argument) {
  const size_t equals = argument.find('=');
  const bool named = equals != std::string::npos && equals > 0 && argument.find('/') > equals;
  std::string path = named ? argument.substr(equals + 1) : argument;
  std::string policy;
  if (const size_t hash = path.rfind('#'); hash != std::string::npos) {
    policy = path.substr(hash + 1);
    path.resize(hash);
  }
  ServedSource served;
  try {
    served.source = classify_model_source(path);
  } catch (const std::invalid_argument& error) {
    throw UsageError(std::string("MODEL ") + error.what());
  }
  if (!policy.empty() && served.source.kind == ModelSourceKind::kPolicyFile) {
    throw UsageError("MODEL " + argument + ": #POLICY picks a policy of a multi-agent checkpoint; a .rlxp file holds one");
  }
  served.source.policy = policy;
  served.name = named ? argument.substr(0, equals) : (policy.empty() ? default_model_name(served.source) : policy);
  for (char c : served.name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) {
      throw UsageError("policy name '" + served.name + "' (from " + argument +
                       "): use letters, digits, '-', '_' and '.' (it is part of the URL); name it with NAME=" + path);
    }
  }
  return served;
}

// The bearer token in `file`: one line of at least 16 characters, readable by its owner alone.
std::string read_token_file(const std::string& file) {
  struct stat info {};
  if (::stat(file.c_str(), &info) != 0) throw UsageError("--token-file " + file + ": no such file");
  if ((info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%03o", info.st_mode & 0777);
    throw UsageError("--token-file " + file + " is open to others (mode " + mode + "): chmod 600 it");
  }
  std::string token = read_file(file);
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  if (token.size() < 16 || token.find_first_of(" \t\r\n") != std::string::npos) {
    throw UsageError("--token-file " + file + " must hold one token of at least 16 characters without spaces");
  }
  return token;
}

// A loopback address (127.0.0.0/8, ::1) or "localhost", as the transport decides for workers.
bool is_loopback_host(const std::string& host) {
  const bool ipv6 = host.find(':') != std::string::npos;
  return host == "localhost" || is_loopback_endpoint("tcp://" + (ipv6 ? "[" + host + "]" : host) + ":0");
}

}  // namespace

int run_serve(const std::vector<std::string>& args, const ServeBackend& backend) {
  po::options_description options("rlx serve [NAME=]MODEL...: answer requests for actions over HTTP (and ZeroMQ)");
  options.add_options()("help,h", "show this help")(
      "model", po::value<std::vector<std::string>>(),
      "[NAME=]PATH[#POLICY]: a .rlxp file, a checkpoint, or a trial directory (its newest checkpoint, watched for "
      "newer ones); #POLICY: one policy of a multi-agent checkpoint")(
      "host", po::value<std::string>()->default_value("127.0.0.1"), "the HTTP address to listen on")(
      "port", po::value<int>()->default_value(8000), "the HTTP port (0: any free port)")(
      "zmq-port", po::value<int>(), "also serve ZeroMQ on this port (0: any free port)")(
      "allow-remote", "allow an address beyond loopback (HTTP then needs --token-file, ZeroMQ --zmq-keys)")(
      "token-file", po::value<std::string>(), "HTTP: require `Authorization: Bearer TOKEN`, the token in this file (mode 600)")(
      "zmq-keys", po::value<std::string>(), "ZeroMQ: CURVE keys, a directory from `rlx keys init` (server.key, clients/*.pub)")(
      "threads", po::value<int>()->default_value(1), "inference threads")(
      "io-threads", po::value<int>()->default_value(1), "HTTP event-loop threads")(
      "max-batch-rows", po::value<int64_t>()->default_value(256), "rows a batch takes at most")(
      "max-wait-us", po::value<int64_t>()->default_value(0), "how long a batch waits to fill (0: takes what is queued)")(
      "max-queue", po::value<size_t>()->default_value(1024), "requests waiting per policy; beyond, 503 with Retry-After")(
      "max-inline-act-us", po::value<double>()->default_value(25),
      "an idle server answers a lone request on the io thread when one act() takes at most this (0: never)")(
      "max-rows", po::value<int64_t>()->default_value(1024), "observations per request")(
      "max-body-bytes", po::value<size_t>()->default_value(size_t{1} << 20), "HTTP body bytes (413 beyond)")(
      "max-header-bytes", po::value<size_t>()->default_value(8192), "HTTP header bytes (431 beyond)")(
      "max-connections", po::value<size_t>()->default_value(1024), "open HTTP connections (503 beyond)")(
      "max-sessions", po::value<size_t>()->default_value(10000), "recurrent sessions held per policy (429 beyond)")(
      "session-ttl-s", po::value<double>()->default_value(600), "a session unused this long is forgotten")(
      "watch-interval-ms", po::value<int64_t>()->default_value(2000), "how often trial directories are checked for a newer checkpoint (0: never)")(
      "seed", po::value<uint64_t>()->default_value(0), "the generators of stochastic actions")(
      "ready-file", po::value<std::string>(), "once listening, write {\"http_port\", \"zmq_endpoint\"} to this JSON file");
  add_env_plugin_option(options);
  po::positional_options_description positionals;
  positionals.add("model", -1);
  const po::variables_map values = parse_command_line(args, options, positionals);
  if (values.count("help")) {
    std::cout << "usage: rlx serve [NAME=]MODEL... [--port 8000] [--zmq-port P] [--threads N] [...]\n\n" << options;
    return kExitOk;
  }
  if (!values.count("model")) throw UsageError("missing MODEL: a .rlxp file, a checkpoint or a trial directory");
  std::vector<ServedSource> sources;
  for (const std::string& argument : values["model"].as<std::vector<std::string>>()) {
    sources.push_back(parse_model_argument(argument));
    for (size_t i = 0; i + 1 < sources.size(); ++i) {
      if (sources[i].name == sources.back().name) {
        throw UsageError("two MODELs are named " + sources.back().name + ": name them with NAME=PATH");
      }
    }
  }
  const bool needs_exporter = std::any_of(sources.begin(), sources.end(), [](const ServedSource& served) {
    return served.source.kind != ModelSourceKind::kPolicyFile;
  });
  if (needs_exporter && !backend.make_exporter) return backend.hand_over(args);  // a checkpoint: rlx-torch restores it
  ServeOptions serve;
  serve.http.host = values["host"].as<std::string>();
  serve.http.port = values["port"].as<int>();
  if (serve.http.port < 0 || serve.http.port > 65535) throw UsageError("--port must be in [0, 65535]");
  serve.http.io_threads = values["io-threads"].as<int>();
  serve.http.max_body_bytes = values["max-body-bytes"].as<size_t>();
  serve.http.max_header_bytes = values["max-header-bytes"].as<size_t>();
  serve.http.max_connections = values["max-connections"].as<size_t>();
  const bool allow_remote = values.count("allow-remote") > 0;
  if (values.count("token-file")) serve.http.auth.token = read_token_file(values["token-file"].as<std::string>());
  if (!is_loopback_host(serve.http.host)) {
    if (!allow_remote) throw UsageError("--host " + serve.http.host + " is beyond loopback: add --allow-remote (and --token-file)");
    if (serve.http.auth.token.empty()) throw UsageError("--host " + serve.http.host + " with --allow-remote needs --token-file FILE");
  }
  if (values.count("zmq-port")) {
    ZmqEndpointOptions zmq;
    const int port = values["zmq-port"].as<int>();
    if (port < 0 || port > 65535) throw UsageError("--zmq-port must be in [0, 65535]");
    const std::string host = serve.http.host == "localhost" ? "127.0.0.1" : serve.http.host;
    zmq.endpoint = "tcp://" + host + ":" + (port == 0 ? std::string("*") : std::to_string(port));
    zmq.allow_remote = false;  // beyond loopback only with CURVE
    if (values.count("zmq-keys")) {
      zmq.server_keys = load_server_keys(values["zmq-keys"].as<std::string>());
      zmq.client_keys = load_client_keys(values["zmq-keys"].as<std::string>());
    }
    zmq.max_message_bytes = serve.http.max_body_bytes;
    serve.zmq = zmq;
  }
  serve.batching.threads = values["threads"].as<int>();
  serve.batching.max_batch_rows = values["max-batch-rows"].as<int64_t>();
  serve.batching.max_wait = std::chrono::microseconds(values["max-wait-us"].as<int64_t>());
  serve.batching.max_queue = values["max-queue"].as<size_t>();
  serve.batching.max_inline_act_micros = values["max-inline-act-us"].as<double>();
  if (serve.batching.threads < 1 || serve.http.io_threads < 1) throw UsageError("--threads and --io-threads must be at least 1");
  if (serve.batching.max_batch_rows < 1 || serve.batching.max_wait.count() < 0 || serve.batching.max_queue < 1) {
    throw UsageError("--max-batch-rows and --max-queue must be at least 1, --max-wait-us at least 0");
  }
  serve.limits.max_rows = values["max-rows"].as<int64_t>();
  serve.slot.max_sessions = values["max-sessions"].as<size_t>();
  serve.slot.session_ttl = std::chrono::milliseconds(static_cast<int64_t>(values["session-ttl-s"].as<double>() * 1000));
  serve.slot.seed = values["seed"].as<uint64_t>();
  serve.watch_interval = std::chrono::milliseconds(values["watch-interval-ms"].as<int64_t>());

  std::vector<std::string> env_plugins;
  if (values.count("env-plugin")) env_plugins = values["env-plugin"].as<std::vector<std::string>>();
  add_python_path(python_path_from(values));  // besides a checkpoint's own python_path
  const CheckpointExporter exporter = needs_exporter ? backend.make_exporter(env_plugins) : nullptr;
  const StopSignals stop_signals(stop_grace_from_env(), "draining: answering the requests accepted, then exiting");
  PolicyServer server(sources, exporter, serve);
  std::cout << "rlx serve: listening on http://" << serve.http.host << ":" << server.http_port();
  if (serve.zmq) std::cout << " and " << server.zmq_endpoint();
  std::cout << "\n";
  for (const ServedSource& served : sources) {
    std::cout << "  POST http://" << serve.http.host << ":" << server.http_port() << "/v1/policies/" << served.name << "/act\n";
  }
  std::cout << std::flush;
  if (values.count("ready-file")) {
    const nlohmann::json ready = {{"http_port", server.http_port()}, {"zmq_endpoint", server.zmq_endpoint()}};
    write_file_atomic(values["ready-file"].as<std::string>(), ready.dump() + "\n");
  }
  const size_t unanswered = server.run([] { return stop_requested(); });
  std::cout << "rlx serve: stopped by " << (stop_signal() ? stop_signal_name(stop_signal()) : "request") << ", "
            << server.context().metrics().answers_with_status(200) << " requests answered\n";
  return unanswered == 0 ? kExitOk : kExitError;
}

}  // namespace rlx::cli
