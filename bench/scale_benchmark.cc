#include "bench/scale_benchmark.h"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <zmq.hpp>

#include "bench/fragment_consumer.h"
#include "bench/synthetic_fleet.h"
#include "core/fd_limit.h"
#include "transport/sample_receiver.h"

namespace rlx {

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr const char* kEnvId = "CartPole-v1";  // a CartPole-like description: obs O, Discrete(2)
constexpr int64_t kNumActions = 2;
constexpr int kFdsPerConnectionSlack = 256;    // fds beyond one (parent) or two (child) per worker
constexpr std::chrono::milliseconds kPollStep{20};

std::system_error errno_error(const std::string& what) { return std::system_error(errno, std::generic_category(), what); }

double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

void write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw errno_error("scale benchmark: send to a worker process");
    done += static_cast<size_t>(n);
  }
}

// One line from fd (without its newline); nothing at EOF before a newline.
std::optional<std::string> read_line(int fd) {
  std::string line;
  char c = 0;
  for (;;) {
    const ssize_t n = ::read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    if (c == '\n') return line;
    line.push_back(c);
  }
}

// The body of a worker process: reads the receiver's endpoint from fd, runs a fleet until
// every worker is stopped or fd reaches EOF (the parent gave up), writes its counts to fd.
[[noreturn]] void run_fleet_process(int fd, SyntheticFleetOptions fleet_options, pid_t parent,
                                    std::chrono::milliseconds timeout) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(3);  // the parent died before prctl took effect
  int status = 1;
  std::string report;
  try {
    std::optional<std::string> endpoint = read_line(fd);
    if (!endpoint) ::_exit(2);  // the parent gave up before starting us
    fleet_options.endpoint = *endpoint;
    fleet_options.abort_fd = fd;
    bool all_stopped = false;
    FleetStats stats;
    {
      zmq::context_t context(1, fleet_options.workers + 64);
      SyntheticWorkerFleet fleet(context, fleet_options);
      all_stopped = fleet.run(timeout);
      stats = fleet.stats();
    }  // the context ends once every goodbye has left (or its linger passed)
    std::ostringstream out;
    out << "ok all_stopped=" << all_stopped << " fragments_sent=" << stats.fragments_sent
        << " weights_received=" << stats.weights_received << " sends_refused=" << stats.sends_refused
        << " joins=" << stats.joins << " stops=" << stats.stops << " messages_rejected=" << stats.messages_rejected;
    report = out.str();
    status = 0;
  } catch (const std::exception& e) {
    report = std::string("error ") + e.what();
  } catch (...) {
    report = "error unknown exception";
  }
  std::replace(report.begin(), report.end(), '\n', ' ');
  try {
    write_all(fd, report + "\n");
  } catch (...) {
    status = 1;
  }
  ::_exit(status);  // never the parent's atexit handlers or test framework
}

// What one worker process reported.
struct FleetReport {
  bool all_stopped = false;
  uint64_t fragments_sent = 0;
  uint64_t weights_received = 0;
  uint64_t sends_refused = 0;
};

FleetReport parse_report(const std::string& line) {
  std::istringstream in(line);
  std::string word;
  in >> word;
  if (word != "ok") throw std::runtime_error("scale benchmark: a worker process failed: " + line);
  FleetReport report;
  while (in >> word) {
    const size_t eq = word.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = word.substr(0, eq);
    const uint64_t value = std::stoull(word.substr(eq + 1));
    if (key == "all_stopped") report.all_stopped = value != 0;
    if (key == "fragments_sent") report.fragments_sent = value;
    if (key == "weights_received") report.weights_received = value;
    if (key == "sends_refused") report.sends_refused = value;
  }
  return report;
}

// The forked worker processes: each reached through one end of a socket pair. Whatever
// happens, the destructor leaves none running.
class FleetProcesses {
 public:
  FleetProcesses() = default;
  FleetProcesses(const FleetProcesses&) = delete;
  FleetProcesses& operator=(const FleetProcesses&) = delete;
  ~FleetProcesses() {
    for (Child& child : children_) {
      if (child.fd >= 0) ::close(child.fd);
      if (child.pid > 0) {
        ::kill(child.pid, SIGKILL);
        ::waitpid(child.pid, nullptr, 0);
      }
    }
  }

  // Forks a process running a fleet with these options (endpoint still unknown).
  void start(const SyntheticFleetOptions& fleet_options, std::chrono::milliseconds timeout) {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) throw errno_error("socketpair");
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
      const std::system_error error = errno_error("fork");
      ::close(fds[0]);
      ::close(fds[1]);
      throw error;
    }
    if (pid == 0) {
      // Keep only this child's end: an earlier child must see EOF when the parent closes its end.
      for (const Child& child : children_) ::close(child.fd);
      ::close(fds[0]);
      run_fleet_process(fds[1], fleet_options, parent, timeout);
    }
    ::close(fds[1]);
    children_.push_back(Child{pid, fds[0], {}, false});
  }

  // Sends every process the endpoint to connect to.
  void connect_all(const std::string& endpoint) {
    for (const Child& child : children_) write_all(child.fd, endpoint + "\n");
  }

  // Throws std::runtime_error if a process has reported (or died) before being told to stop.
  void check_running() {
    for (Child& child : children_) {
      pollfd item{child.fd, POLLIN, 0};
      if (::poll(&item, 1, 0) > 0) {
        read_report(child, Clock::now() + 1s);
        throw std::runtime_error("scale benchmark: a worker process ended early: " +
                                 (child.report.empty() ? std::string("no report") : child.report));
      }
    }
  }

  // Tells every process to stop (EOF on its socket) if it has not yet.
  void abort_all() {
    for (const Child& child : children_) ::shutdown(child.fd, SHUT_WR);
  }

  // Reads every process's report and reaps it; throws std::runtime_error if one fails or
  // does not report before the deadline.
  std::vector<FleetReport> collect(Clock::time_point deadline) {
    std::vector<FleetReport> reports;
    for (Child& child : children_) {
      read_report(child, deadline);
      if (!child.done) throw std::runtime_error("scale benchmark: a worker process did not report in time");
      reports.push_back(parse_report(child.report));
      int status = 0;
      ::waitpid(child.pid, &status, 0);
      child.pid = -1;
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        throw std::runtime_error("scale benchmark: a worker process exited abnormally: " + child.report);
      }
    }
    return reports;
  }

  size_t size() const { return children_.size(); }

 private:
  struct Child {
    pid_t pid = -1;
    int fd = -1;
    std::string report;
    bool done = false;  // EOF seen
  };

  // Reads until EOF or the deadline.
  static void read_report(Child& child, Clock::time_point deadline) {
    char buffer[512];
    while (!child.done) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) return;
      pollfd item{child.fd, POLLIN, 0};
      const int ready = ::poll(&item, 1, static_cast<int>(left.count()));
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) continue;
      const ssize_t n = ::read(child.fd, buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        child.done = true;
        break;
      }
      child.report.append(buffer, static_cast<size_t>(n));
    }
    while (!child.report.empty() && (child.report.back() == '\n' || child.report.back() == ' ')) child.report.pop_back();
  }

  std::vector<Child> children_;
};

std::shared_ptr<const Weights> make_weights(uint64_t version, int64_t params) {
  auto weights = std::make_shared<Weights>();
  weights->policy_version = version;
  weights->params.assign(static_cast<size_t>(params), 0.01f * static_cast<float>(version));
  return weights;
}

void validate(const ScaleOptions& o) {
  const auto require = [](bool ok, const char* what) {
    if (!ok) throw std::invalid_argument(std::string("scale benchmark: ") + what);
  };
  require(o.workers >= 1, "workers must be >= 1");
  require(o.workers_per_process >= 1, "workers_per_process must be >= 1");
  require(std::isfinite(o.seconds) && o.seconds > 0, "seconds must be > 0");
  require(std::isfinite(o.warmup_seconds) && o.warmup_seconds >= 0, "warmup_seconds must be >= 0");
  require(o.fragment_length >= 1 && o.num_envs >= 1 && o.obs_size >= 1,
          "fragment_length, num_envs and obs_size must be >= 1");
  require(o.credits_per_worker >= 1, "credits_per_worker must be >= 1");
  require(std::isfinite(o.max_fragments_per_s_per_worker) && o.max_fragments_per_s_per_worker >= 0,
          "max_fragments_per_s_per_worker must be >= 0");
  require(std::isfinite(o.weights_interval_seconds) && o.weights_interval_seconds >= 0,
          "weights_interval_seconds must be >= 0");
  require(std::isfinite(o.total_fragments_per_s) && o.total_fragments_per_s >= 0, "total_fragments_per_s must be >= 0");
  require(o.total_fragments_per_s == 0 || o.max_fragments_per_s_per_worker == 0,
          "give either total_fragments_per_s or max_fragments_per_s_per_worker");
  require(o.weights_params >= 1, "weights_params must be >= 1");
  require(o.heartbeat_interval_ms >= 1, "heartbeat_interval_ms must be >= 1");
  require(std::isfinite(o.join_timeout_seconds) && o.join_timeout_seconds > 0 && std::isfinite(o.stop_timeout_seconds) &&
              o.stop_timeout_seconds > 0,
          "join and stop timeouts must be > 0");
}

std::chrono::milliseconds millis(double seconds) { return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)); }

}  // namespace

double process_cpu_seconds() {
  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) != 0) throw errno_error("getrusage");
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec);
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

ScaleResult run_scale_benchmark(const ScaleOptions& options) {
  validate(options);
  const int processes = (options.workers + options.workers_per_process - 1) / options.workers_per_process;
  const int per_process = (options.workers + processes - 1) / processes;
  // The receiver holds one connection per worker; a worker process a socket and a connection each.
  require_fd_limit(static_cast<uint64_t>(std::max(options.workers, 2 * per_process) + kFdsPerConnectionSlack),
                   "the scale benchmark");

  // Fork first, before this call starts any thread; the processes wait for the endpoint.
  FleetProcesses fleets;
  const auto fleet_timeout = millis(options.join_timeout_seconds + options.warmup_seconds + options.seconds +
                                    options.stop_timeout_seconds + 60);
  int assigned = 0;
  for (int p = 0; p < processes; ++p) {
    SyntheticFleetOptions fleet;
    fleet.workers = options.workers / processes + (p < options.workers % processes ? 1 : 0);
    fleet.first_worker_id = static_cast<uint64_t>(assigned) + 1;
    fleet.obs_size = options.obs_size;
    fleet.action_size = 0;
    fleet.num_actions = kNumActions;
    fleet.fragment_length = options.fragment_length;
    fleet.num_envs = options.num_envs;
    fleet.max_fragments_per_s = options.total_fragments_per_s > 0 ? options.total_fragments_per_s / options.workers
                                                                  : options.max_fragments_per_s_per_worker;
    fleet.heartbeat_interval = std::chrono::milliseconds(options.heartbeat_interval_ms);
    fleets.start(fleet, fleet_timeout);
    assigned += fleet.workers;
  }

  zmq::context_t context(1);
  ReceiverOptions receiver_options;
  receiver_options.env = ExpectedEnv{kEnvId, options.obs_size, 0, kNumActions};
  receiver_options.fragment_length = options.fragment_length;
  receiver_options.max_envs_per_worker = options.num_envs;
  receiver_options.max_workers = static_cast<size_t>(std::max(options.workers, 1));
  receiver_options.credits_per_worker = options.credits_per_worker;
  receiver_options.max_policy_lag = 1;
  receiver_options.make_welcome = [&options](int worker_index) {
    const nlohmann::json setup = {{"env_id", kEnvId},
                                  {"num_envs", options.num_envs},
                                  {"fragment_length", options.fragment_length},
                                  {"seed", 0},
                                  {"worker_index", worker_index}};
    return setup.dump();
  };
  SampleReceiver receiver(context, receiver_options);
  uint64_t version = 1;
  receiver.publish_weights(make_weights(version, options.weights_params));
  FragmentConsumer consumer(receiver);
  fleets.connect_all(receiver.endpoint());

  // Publishes new weights when due (a learner's iterations) and checks the processes while waiting.
  auto next_weights = Clock::now() + millis(options.weights_interval_seconds);
  const auto tick = [&] {
    fleets.check_running();
    if (options.weights_interval_seconds > 0 && Clock::now() >= next_weights) {
      receiver.publish_weights(make_weights(++version, options.weights_params));
      next_weights += millis(options.weights_interval_seconds);
    }
    std::this_thread::sleep_for(kPollStep);
  };

  const auto join_start = Clock::now();
  const auto join_deadline = join_start + millis(options.join_timeout_seconds);
  while (receiver.stats().workers_joined < static_cast<uint64_t>(options.workers)) {
    if (Clock::now() >= join_deadline) {
      throw std::runtime_error("scale benchmark: only " + std::to_string(receiver.stats().workers_joined) + " of " +
                               std::to_string(options.workers) + " workers joined within " +
                               std::to_string(options.join_timeout_seconds) + " s");
    }
    tick();
  }
  const double join_seconds = seconds_between(join_start, Clock::now());
  const auto warm = Clock::now() + millis(options.warmup_seconds);
  while (Clock::now() < warm) tick();

  ScaleResult result;
  result.workers = options.workers;
  result.processes = processes;
  result.join_seconds = join_seconds;
  const ReceiverStats before = receiver.stats();
  const double cpu_before = process_cpu_seconds();
  const auto start = Clock::now();
  const auto end = start + millis(options.seconds);
  while (Clock::now() < end) tick();
  const ReceiverStats after = receiver.stats();
  const double cpu_after = process_cpu_seconds();
  result.seconds = seconds_between(start, Clock::now());
  result.window_fragments = after.fragments_received - before.fragments_received;
  result.receiver_cpu_seconds = cpu_after - cpu_before;
  result.cpu_us_per_fragment =
      result.window_fragments > 0 ? 1e6 * result.receiver_cpu_seconds / static_cast<double>(result.window_fragments) : 0;
  result.fragments_per_s = static_cast<double>(result.window_fragments) / result.seconds;

  // Stop: each worker's goodbye follows its last fragment, so after all of them every
  // fragment sent has been received.
  receiver.stop_workers();
  const auto stop_deadline = Clock::now() + millis(options.stop_timeout_seconds);
  while (receiver.stats().workers_left < static_cast<uint64_t>(options.workers) && Clock::now() < stop_deadline) {
    std::this_thread::sleep_for(kPollStep);
  }
  fleets.abort_all();  // a process whose workers did not all hear the stop gives up now
  const std::vector<FleetReport> reports = fleets.collect(stop_deadline + 10s);
  // Let the learner drain the queue, then stop it.
  while (receiver.stats().queued > 0 && Clock::now() < stop_deadline + 10s) std::this_thread::sleep_for(kPollStep);
  consumer.stop();

  const ReceiverStats final_stats = receiver.stats();
  bool all_stopped = true;
  for (const FleetReport& report : reports) {
    result.fragments_sent += report.fragments_sent;
    result.weights_received += report.weights_received;
    result.sends_refused += report.sends_refused;
    all_stopped = all_stopped && report.all_stopped;
  }
  result.fragments_received = final_stats.fragments_received;
  result.fragments_consumed = final_stats.fragments_consumed;
  result.dropped_stale = final_stats.dropped_stale;
  result.dropped_unknown_worker = final_stats.dropped_unknown_worker;
  result.dropped_at_stop = final_stats.dropped_at_stop;
  result.queued = final_stats.queued;
  result.messages_rejected = final_stats.messages_rejected;
  result.workers_joined = final_stats.workers_joined;
  result.workers_left = final_stats.workers_left;
  result.workers_lost = final_stats.workers_lost;
  result.weights_published = version;
  result.accounted = all_stopped && result.workers_left == static_cast<uint64_t>(options.workers) &&
                     result.fragments_sent == result.fragments_received &&
                     result.fragments_received == result.fragments_consumed + result.dropped_stale +
                                                      result.dropped_unknown_worker + result.dropped_at_stop + result.queued;
  return result;
}

std::string format_scale_result(const ScaleResult& r) {
  std::ostringstream out;
  out << "workers=" << r.workers << " processes=" << r.processes << " join_seconds=" << r.join_seconds
      << " seconds=" << r.seconds
      << " fragments_sent=" << r.fragments_sent << " fragments_received=" << r.fragments_received
      << " fragments_consumed=" << r.fragments_consumed << " dropped_stale=" << r.dropped_stale
      << " dropped_unknown_worker=" << r.dropped_unknown_worker << " dropped_at_stop=" << r.dropped_at_stop
      << " queued=" << r.queued << " messages_rejected=" << r.messages_rejected << " workers_joined=" << r.workers_joined
      << " workers_left=" << r.workers_left << " workers_lost=" << r.workers_lost
      << " weights_published=" << r.weights_published << " weights_received=" << r.weights_received
      << " sends_refused=" << r.sends_refused << " accounted=" << (r.accounted ? "true" : "false")
      << " window_fragments=" << r.window_fragments << " receiver_cpu_seconds=" << r.receiver_cpu_seconds
      << " cpu_us_per_fragment=" << r.cpu_us_per_fragment << " fragments_per_s=" << r.fragments_per_s;
  return out.str();
}

}  // namespace rlx
