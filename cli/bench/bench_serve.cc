// `rlx bench serve`: `rlx serve` (docs/serve.md) under load from bench/serve_load_generator.h.
// It starts `rlx serve` of this build (or --server-program, or measures a running server, --connect),
// and with --python-baseline the hand-written Python server of bench/peers/python_policy_server.py
// over the same files, then runs every (policy, protocol, load level, repeat) against each server
// in turn: closed loop at each --concurrency, open loop at each --rate. One JSON line per run,
// then one per (server, policy, protocol, level) with the medians over repeats, and with a
// baseline the ratios rlx/python of requests/s and p50. The servers it started are stopped with
// SIGTERM at the end and must exit 0.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/process_memory.h"
#include "bench/serve_load_generator.h"
#include "cli/bench/bench_subcommands.h"
#include "cli/command.h"
#include "cli/number_list.h"
#include "core/fd_limit.h"
#include "core/process_launcher.h"
#include "core/rlx_program.h"
#include "core/temp_dir.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;  // lines keep their keys in the order written

namespace rlx::cli {

namespace {

constexpr size_t kObservationRows = 256;   // distinct observations per policy, cycled
constexpr uint64_t kObservationSeed = 20240601;
constexpr double kRlxReadySeconds = 120;   // a trial directory is exported before it serves
constexpr double kPythonReadySeconds = 60;
constexpr auto kStopGrace = std::chrono::seconds(20);

// One server under test: started here (process set) or reached with --connect.
struct BenchServer {
  std::string label;  // "rlx" or "python"
  std::string host = "127.0.0.1";
  int http_port = 0;
  int zmq_port = 0;  // 0: it serves no ZeroMQ
  std::unique_ptr<LaunchedProcess> process;

  bool speaks(ServeProtocol protocol) const { return protocol != ServeProtocol::kZmq || zmq_port > 0; }
};

// A policy as the benchmark sends to it: its name and the rows it is given.
struct BenchPolicy {
  std::string name;
  std::vector<std::vector<float>> observations;
};

// A load level: closed loop at `value` connections, or open loop at `value` requests per second.
struct LoadLevel {
  bool open = false;
  double value = 0;
  std::string mode() const { return open ? "open" : "closed"; }
};

struct Settings {
  std::vector<std::string> models;  // as given: [NAME=]PATH
  std::vector<ServeProtocol> protocols;
  std::vector<LoadLevel> levels;
  ServeLoadOptions load;  // seconds, warm-up, threads, in-flight; the rest set per run
  int open_connections = 64;
  int repeats = 3;
};

// The policy name `rlx serve` gives a MODEL argument: NAME= when given, else the file's stem
// or the directory's name.
std::string model_name(const std::string& model) {
  const size_t equals = model.find('=');
  if (equals != std::string::npos) return model.substr(0, equals);
  fs::path path(model);
  if (!path.has_filename()) path = path.parent_path();
  return fs::is_directory(path) ? path.filename().string() : path.stem().string();
}

// The PATH of a [NAME=]PATH argument.
std::string model_path(const std::string& model) {
  const size_t equals = model.find('=');
  return equals == std::string::npos ? model : model.substr(equals + 1);
}

// "HOST:PORT" split; UsageError naming the option otherwise.
std::pair<std::string, int> host_port(const std::string& text, const std::string& option) {
  const size_t colon = text.rfind(':');
  const std::vector<double> port = colon == std::string::npos ? std::vector<double>{} : parse_number_list(text.substr(colon + 1), option);
  if (colon == 0 || port.size() != 1 || port[0] < 1 || port[0] > 65535 || port[0] != static_cast<int>(port[0])) {
    throw UsageError(option + " takes HOST:PORT, got '" + text + "'");
  }
  return {text.substr(0, colon), static_cast<int>(port[0])};
}

// The first of ../bench/peers/python_policy_server.py, ../../bench/... above this executable.
fs::path default_python_server() {
  fs::path dir = fs::read_symlink("/proc/self/exe").parent_path();
  for (int up = 0; up < 3; ++up, dir = dir.parent_path()) {
    const fs::path script = dir / "bench" / "peers" / "python_policy_server.py";
    if (fs::exists(script)) return script;
  }
  return {};
}

// Starts argv (its output to log) and waits until it answers GET /readyz; std::runtime_error with
// its log's last lines when it ends first or is not ready within ready_seconds (it is killed then).
BenchServer start_server(const std::string& label, std::vector<std::string> argv, int http_port, int zmq_port,
                         const fs::path& log, double ready_seconds) {
  BenchServer server;
  server.label = label;
  server.http_port = http_port;
  server.zmq_port = zmq_port;
  server.process = local_launcher().launch({std::move(argv), {}, log, log_banner("rlx bench serve: " + label)});
  wait_until_ready(server.host, server.http_port, server.process.get(), ready_seconds);
  return server;
}

// `PROGRAM serve MODEL... --port P --zmq-port Q SERVER_ARGS...`.
BenchServer start_rlx_server(const std::string& program, const std::vector<std::string>& models,
                             const std::string& server_args, const fs::path& log) {
  const int http_port = free_tcp_port();
  int zmq_port = free_tcp_port();
  while (zmq_port == http_port) zmq_port = free_tcp_port();
  std::vector<std::string> argv = {program, "serve"};
  argv.insert(argv.end(), models.begin(), models.end());
  for (const std::string& word : {std::string("--port"), std::to_string(http_port), std::string("--zmq-port"), std::to_string(zmq_port)}) {
    argv.push_back(word);
  }
  for (const std::string& word : split_command_prefix(server_args)) argv.push_back(word);
  return start_server("rlx", argv, http_port, zmq_port, log, kRlxReadySeconds);
}

// `PYTHON SCRIPT --port P NAME=FILE...`: the baseline over the same .rlxp files, named alike.
BenchServer start_python_server(const std::string& python, const fs::path& script, const std::vector<std::string>& models,
                                const fs::path& log) {
  const int http_port = free_tcp_port();
  std::vector<std::string> argv = {python, script.string(), "--port", std::to_string(http_port)};
  for (const std::string& model : models) {
    if (!fs::is_regular_file(model_path(model))) {
      throw UsageError("--python-baseline serves .rlxp files only (rlx export), not " + model_path(model));
    }
    argv.push_back(model_name(model) + "=" + model_path(model));
  }
  return start_server("python", argv, http_port, 0, log, kPythonReadySeconds);
}

// Whether an observation space, as GET /v1/policies lists it, is a Box of one dimension: rlx serve
// writes it as Gymnasium prints it ("Box(low, high, (4,), float32)"), the Python baseline as JSON.
bool flat_box(const Json& space) {
  if (space.is_object()) return space.value("type", "") == "Box" && space.value("shape", Json::array()).size() == 1;
  if (!space.is_string()) return false;
  const std::string text = space.get<std::string>();
  const size_t shape_end = text.rfind(",), ");  // the shape "(N,)" before the dtype
  const size_t shape_start = text.rfind('(', shape_end);
  return text.rfind("Box(", 0) == 0 && shape_end != std::string::npos && shape_start != std::string::npos &&
         text.find_first_not_of("0123456789", shape_start + 1) == shape_end;
}

// The policies named (all the server has when names is empty), with their observation rows from
// GET /v1/policies's float_size. Policies with byte or nested observations are left out, said on stderr.
std::vector<BenchPolicy> bench_policies(const BenchServer& server, const std::vector<std::string>& names) {
  const HttpAnswer answer = http_exchange(server.host, server.http_port, "GET", "/v1/policies");
  if (answer.status != 200) throw std::runtime_error("GET /v1/policies answered " + std::to_string(answer.status) + ": " + answer.body);
  const Json listing = Json::parse(answer.body);
  std::map<std::string, Json> listed;
  for (const Json& policy : listing.at("policies")) {
    listed[policy.at("name").get<std::string>()] = policy;
  }
  std::vector<std::string> wanted = names;
  if (wanted.empty()) {
    for (const auto& [name, policy] : listed) wanted.push_back(name);
  }
  std::vector<BenchPolicy> policies;
  for (const std::string& name : wanted) {
    const auto found = listed.find(name);
    if (found == listed.end()) throw std::runtime_error("the server lists no policy " + name);
    const Json& policy = found->second;
    const Json& space = policy.at("observation_space");
    if (policy.at("byte_size").get<int>() != 0 || !flat_box(space)) {
      std::cerr << "rlx bench serve: " << name << " left out: it observes " << space.dump()
                << " (the benchmark sends flat float Boxes only)" << std::endl;
      continue;
    }
    const size_t float_size = policy.at("float_size").get<size_t>();
    policies.push_back({name, pseudo_random_observations(kObservationRows, float_size, kObservationSeed + policies.size())});
  }
  return policies;
}

// x to 3 decimals: microseconds to the nanosecond.
double rounded(double x) { return std::round(x * 1000.0) / 1000.0; }

// A ratio to 4 significant digits (a p50 ratio against an overloaded baseline can be 1e-4).
double rounded_ratio(double x) {
  if (!(x > 0) || !std::isfinite(x)) return x;
  const double scale = std::pow(10.0, 3 - std::floor(std::log10(x)));
  return std::round(x * scale) / scale;
}

// The process's RSS in kB, or nullopt when it was not started here (or is gone).
std::optional<long> rss_kb(const BenchServer& server) {
  if (!server.process || server.process->poll()) return std::nullopt;
  return read_process_memory(server.process->pid()).rss_kb;
}

// mode, then rate and connections (open loop) or concurrency (closed), and in_flight when > 1.
Json level_fields(const LoadLevel& level, int connections, int in_flight) {
  Json fields = {{"mode", level.mode()}};
  if (level.open) {
    fields["rate"] = level.value;
    fields["connections"] = connections;
  } else {
    fields["concurrency"] = static_cast<int>(level.value);
  }
  if (in_flight > 1) fields["in_flight"] = in_flight;
  return fields;
}

// Medians over repeats of one (server, policy, protocol, level).
struct RunSeries {
  Json key;
  std::vector<double> requests_per_s, p50_us, p90_us, p99_us, p999_us;
  uint64_t ok = 0, errors = 0;
  long rss_max_kb = 0;
};

// One run of a load level against a server: its JSON line (with the server's RSS before and after
// and its CPU per request when it was started here); its figures are added to series.
Json run_once(BenchServer& server, const BenchPolicy& policy, ServeProtocol protocol, const LoadLevel& level,
              const Settings& settings, int repeat, RunSeries& series) {
  ServeLoadOptions load = settings.load;
  load.protocol = protocol;
  load.host = server.host;
  load.port = protocol == ServeProtocol::kZmq ? server.zmq_port : server.http_port;
  load.policy = policy.name;
  load.observations = policy.observations;
  load.connections = level.open ? settings.open_connections : static_cast<int>(level.value);
  load.rate = level.open ? level.value : 0;
  load.threads = std::min(load.threads, load.connections);
  const std::optional<long> rss_before = rss_kb(server);
  const double cpu_before = server.process ? read_process_cpu_seconds(server.process->pid()) : 0;
  const ServeLoadResult result = run_serve_load(load);
  const std::optional<long> rss_after = rss_kb(server);
  Json line = {{"server", server.label}, {"policy", policy.name}, {"protocol", serve_protocol_name(protocol)}};
  line.update(level_fields(level, load.connections, load.in_flight));
  line.update({{"repeat", repeat}, {"seconds", result.seconds}, {"requests_per_s", rounded(result.requests_per_s)},
               {"p50_us", rounded(result.latency.p50_us)}, {"p90_us", rounded(result.latency.p90_us)},
               {"p99_us", rounded(result.latency.p99_us)}, {"p999_us", rounded(result.latency.p999_us)},
               {"max_us", rounded(result.latency.max_us)}, {"ok", result.ok},
               {"errors", result.errors()}, {"transport_errors", result.transport_errors},
               {"verify_failures", result.verify_failures}, {"unanswered", result.unanswered}, {"reconnects", result.reconnects}});
  Json statuses = Json::object();
  for (const auto& [status, count] : result.statuses) statuses[std::to_string(status)] = count;
  line["statuses"] = statuses;
  if (level.open) line["unsent"] = result.unsent;
  if (rss_before && rss_after) {
    line["server_rss_before_kb"] = *rss_before;
    line["server_rss_after_kb"] = *rss_after;
    const double cpu_seconds = read_process_cpu_seconds(server.process->pid()) - cpu_before;
    line["server_cpu_us_per_request"] = result.sent > 0 ? rounded(1e6 * cpu_seconds / static_cast<double>(result.sent)) : 0.0;
    series.rss_max_kb = std::max(series.rss_max_kb, *rss_after);
  }
  series.requests_per_s.push_back(result.requests_per_s);
  series.p50_us.push_back(result.latency.p50_us);
  series.p90_us.push_back(result.latency.p90_us);
  series.p99_us.push_back(result.latency.p99_us);
  series.p999_us.push_back(result.latency.p999_us);
  series.ok += result.ok;
  series.errors += result.errors();
  return line;
}

// SIGTERM, then its exit: true when it exited 0 (said on stderr otherwise).
bool stop_server(BenchServer& server) {
  if (!server.process) return true;
  const ChildExit exit = server.process->stop(kStopGrace);
  if (exit.clean()) return true;
  std::cerr << "rlx bench serve: the " << server.label << " server ended with " << exit.describe()
            << " after SIGTERM; the end of its log:\n";
  for (const std::string& line : tail_lines(server.process->log(), 20)) std::cerr << "  " << line << "\n";
  return false;
}

// The settings the options give; UsageError for values out of range.
Settings settings_from(const po::variables_map& values) {
  Settings settings;
  if (values.count("model")) settings.models = values["model"].as<std::vector<std::string>>();
  std::string protocols = values["protocols"].as<std::string>();
  std::replace(protocols.begin(), protocols.end(), ',', ' ');
  for (const std::string& name : split_command_prefix(protocols)) {
    try {
      settings.protocols.push_back(parse_serve_protocol(name));
    } catch (const std::invalid_argument& error) {  // said as a usage error
      throw UsageError(std::string("--protocols: ") + error.what());
    }
  }
  if (settings.protocols.empty()) throw UsageError("--protocols names none");
  const std::string concurrency_list = values["concurrency"].as<std::string>();  // "": open loop only
  for (double concurrency : concurrency_list.empty() ? std::vector<double>{} : parse_number_list(concurrency_list, "--concurrency")) {
    if (concurrency < 1 || concurrency > 10000 || concurrency != static_cast<int>(concurrency)) {
      throw UsageError("--concurrency takes whole numbers in [1, 10000], got " + std::to_string(concurrency));
    }
    settings.levels.push_back({false, concurrency});
  }
  if (values.count("rate")) {
    for (double rate : parse_number_list(values["rate"].as<std::string>(), "--rate")) {
      if (!(rate > 0) || rate > 1e7) throw UsageError("--rate takes requests per second in (0, 1e7], got " + std::to_string(rate));
      settings.levels.push_back({true, rate});
    }
  }
  if (settings.levels.empty()) throw UsageError("no load level: --concurrency and --rate name none");
  settings.load.seconds = values["seconds"].as<double>();
  settings.load.warmup_seconds = values["warmup"].as<double>();
  settings.load.threads = values["threads"].as<int>();
  settings.load.in_flight = values["in-flight"].as<int>();
  settings.open_connections = values["connections"].as<int>();
  settings.repeats = values["repeats"].as<int>();
  if (!(settings.load.seconds > 0) || settings.load.seconds > 3600) throw UsageError("--seconds must be in (0, 3600]");
  if (!(settings.load.warmup_seconds >= 0) || settings.load.warmup_seconds > 600) throw UsageError("--warmup must be in [0, 600]");
  if (settings.load.threads < 1 || settings.load.threads > 64) throw UsageError("--threads must be in [1, 64]");
  if (settings.load.in_flight < 1 || settings.load.in_flight > 1024) throw UsageError("--in-flight must be in [1, 1024]");
  if (settings.open_connections < 1 || settings.open_connections > 10000) throw UsageError("--connections must be in [1, 10000]");
  if (settings.repeats < 1 || settings.repeats > 1000) throw UsageError("--repeats must be in [1, 1000]");
  return settings;
}

// The median line of every series, then a ratio line rlx/python for each rlx series with a baseline.
void print_summaries(const std::vector<RunSeries>& all) {
  std::map<std::string, const RunSeries*> python;  // the baseline's series by key without "server"
  const auto key_without_server = [](const RunSeries& series) {
    Json key = series.key;
    key.erase("server");
    return key.dump();
  };
  for (const RunSeries& series : all) {
    if (series.key.at("server") == "python") python[key_without_server(series)] = &series;
  }
  for (const RunSeries& series : all) {
    Json line = {{"summary", "median"}};
    line.update(series.key);
    line.update({{"repeats", series.requests_per_s.size()}, {"requests_per_s", rounded(median_of(series.requests_per_s))},
                 {"p50_us", rounded(median_of(series.p50_us))}, {"p90_us", rounded(median_of(series.p90_us))},
                 {"p99_us", rounded(median_of(series.p99_us))}, {"p999_us", rounded(median_of(series.p999_us))},
                 {"ok", series.ok}, {"errors", series.errors}});
    if (series.rss_max_kb > 0) line["server_rss_max_kb"] = series.rss_max_kb;
    std::cout << line.dump() << "\n";
  }
  for (const RunSeries& series : all) {
    const auto baseline = python.find(key_without_server(series));
    if (series.key.at("server") != "rlx" || baseline == python.end()) continue;
    const double python_rps = median_of(baseline->second->requests_per_s), python_p50 = median_of(baseline->second->p50_us);
    Json line = {{"summary", "rlx/python"}};
    line.update(series.key);
    line.erase("server");
    line["requests_per_s_ratio"] = python_rps > 0 ? rounded_ratio(median_of(series.requests_per_s) / python_rps) : 0.0;
    line["p50_ratio"] = python_p50 > 0 ? rounded_ratio(median_of(series.p50_us) / python_p50) : 0.0;
    std::cout << line.dump() << "\n";
  }
  std::cout << std::flush;
}

}  // namespace

int run_bench_serve(const std::vector<std::string>& args) {
  po::options_description options("rlx bench serve: requests/s and latency percentiles of rlx serve (and a Python baseline)");
  options.add_options()("help,h", "show this help")(
      "model", po::value<std::vector<std::string>>(), "[NAME=]MODEL as rlx serve takes it (positional, repeatable)")(
      "protocols", po::value<std::string>()->default_value("http-json,http-binary,zmq"), "of http-json, http-binary, zmq")(
      "concurrency", po::value<std::string>()->default_value("1,8,64,256"),
      "closed loop: connections, each one request outstanding (\"\": no closed-loop runs)")(
      "rate", po::value<std::string>(), "open loop: requests per second (a list), latency from each request's scheduled time")(
      "connections", po::value<int>()->default_value(64), "open loop: the most connections used")(
      "in-flight", po::value<int>()->default_value(1), "requests outstanding per connection (> 1: HTTP pipelining)")(
      "seconds", po::value<double>()->default_value(5.0), "measured seconds per run")(
      "warmup", po::value<double>()->default_value(1.0), "seconds of load before each run's measurement")(
      "repeats", po::value<int>()->default_value(3), "runs per level; the summary lines are their medians")(
      "threads", po::value<int>()->default_value(1), "load generator threads")(
      "python-baseline", po::bool_switch(), "also start bench/peers/python_policy_server.py on the same .rlxp files "
      "and run the HTTP loads against it: ratio lines rlx/python")(
      "python", po::value<std::string>()->default_value("/usr/bin/python3"), "the Python (with NumPy) of the baseline")(
      "python-server", po::value<std::string>(), "the baseline's script (default: bench/peers/ above this executable)")(
      "server-args", po::value<std::string>()->default_value(""), "more arguments for rlx serve, e.g. \"--threads 2\"")(
      "server-program", po::value<std::string>(), "the rlx that serves (default: the rlx of this build, which serves "
      ".rlxp files without LibTorch and hands checkpoints to rlx-torch; give rlx-torch to measure it)")(
      "connect", po::value<std::string>(), "HOST:PORT of a running server's HTTP instead of starting one")(
      "zmq-connect", po::value<std::string>(), "with --connect: HOST:PORT of its ZeroMQ endpoint");
  po::positional_options_description positionals;
  positionals.add("model", -1);
  const po::variables_map values = parse_command_line(args, options, positionals);
  if (values.count("help")) {
    std::cout << "usage: rlx bench serve [NAME=]POLICY.rlxp ... [--concurrency 1,8,64,256] [--rate R,...] [--seconds S]\n"
                 "         [--repeats K] [--protocols http-json,http-binary,zmq] [--python-baseline] [--server-args \"...\"]\n"
                 "       rlx bench serve --connect HOST:PORT [--zmq-connect HOST:PORT] [NAME ...] [...]\n\n"
              << options;
    return kExitOk;
  }
  const Settings settings = settings_from(values);
  const bool python_baseline = values["python-baseline"].as<bool>();
  if (!values.count("connect") && settings.models.empty()) throw UsageError("missing MODEL: a .rlxp file (or what rlx serve takes)");
  if (values.count("zmq-connect") && !values.count("connect")) throw UsageError("--zmq-connect goes with --connect");
  if (python_baseline && settings.models.empty()) throw UsageError("--python-baseline needs the .rlxp files as MODELs");
  fs::path python_script = values.count("python-server") ? fs::path(values["python-server"].as<std::string>()) : default_python_server();
  if (python_baseline && !fs::exists(python_script)) {
    throw UsageError("--python-baseline: no bench/peers/python_policy_server.py above this executable: give --python-server PATH");
  }

  raise_fd_limit();  // a descriptor per connection, here and in the servers started (they inherit it)
  TempDir logs("rlx-bench-serve-");
  std::vector<BenchServer> servers;
  if (values.count("connect")) {
    BenchServer server;
    server.label = "rlx";
    std::tie(server.host, server.http_port) = host_port(values["connect"].as<std::string>(), "--connect");
    if (values.count("zmq-connect")) server.zmq_port = host_port(values["zmq-connect"].as<std::string>(), "--zmq-connect").second;
    wait_until_ready(server.host, server.http_port, nullptr, 10);
    servers.push_back(std::move(server));
  } else {
    const std::string program = values.count("server-program") ? values["server-program"].as<std::string>() : rlx_program_path();
    servers.push_back(start_rlx_server(program, settings.models, values["server-args"].as<std::string>(), logs / "rlx-serve.log"));
  }
  if (python_baseline) {
    servers.push_back(start_python_server(values["python"].as<std::string>(), python_script, settings.models, logs / "python-server.log"));
  }
  std::vector<std::string> names;
  for (const std::string& model : settings.models) names.push_back(model_name(model));
  const std::vector<BenchPolicy> policies = bench_policies(servers.front(), names);
  if (policies.empty()) throw UsageError("no policy the benchmark can send observations to");

  std::vector<RunSeries> all;
  for (const BenchPolicy& policy : policies) {
    for (ServeProtocol protocol : settings.protocols) {
      for (const LoadLevel& level : settings.levels) {
        std::vector<size_t> series_of(servers.size(), all.size());
        for (size_t s = 0; s < servers.size(); ++s) {
          if (!servers[s].speaks(protocol)) continue;
          series_of[s] = all.size();
          RunSeries series;
          series.key = {{"server", servers[s].label}, {"policy", policy.name}, {"protocol", serve_protocol_name(protocol)}};
          series.key.update(level_fields(level, settings.open_connections, settings.load.in_flight));
          all.push_back(series);
        }
        for (int repeat = 1; repeat <= settings.repeats; ++repeat) {  // the servers take turns within a repeat
          for (size_t s = 0; s < servers.size(); ++s) {
            if (!servers[s].speaks(protocol)) continue;
            std::cout << run_once(servers[s], policy, protocol, level, settings, repeat, all[series_of[s]]).dump() << std::endl;
          }
        }
      }
    }
  }
  print_summaries(all);
  bool clean = true;
  for (BenchServer& server : servers) clean = stop_server(server) && clean;
  return clean ? kExitOk : kExitError;
}

}  // namespace rlx::cli
