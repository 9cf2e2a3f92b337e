#include "bench/serve_load_generator.h"

#include <poll.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <exception>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "bench/serve_load_connections.h"
#include "core/rng.h"

namespace rlx {

namespace {

LoadClock::duration seconds_span(double seconds) {
  return std::chrono::duration_cast<LoadClock::duration>(std::chrono::duration<double>(seconds));
}

// What one event loop counted; merged into the run's ServeLoadResult.
struct LoopCounts {
  ServeLoadResult result;          // its counters (latency and rates are filled in by the merge)
  std::vector<int64_t> latencies;  // ns, of the measured 2xx answers
  uint64_t window_answers = 0;     // answers completed within the measured span
};

// One event loop: its share of the connections and of the open-loop schedule (request i of
// this loop is due at start + (i + phase) / rate), and the sink its connections report to.
class LoadLoop final : public LoadSink {
 public:
  LoadLoop(const ServeLoadOptions& options, const PreparedRequests& requests, LoadTime start, int connections,
           double rate, double phase, size_t first_request)
      : options_(options), requests_(requests), connections_(static_cast<size_t>(connections)), rate_(rate),
        phase_(phase), next_request_(first_request), start_(start),
        measure_from_(start + seconds_span(options.warmup_seconds)),
        send_until_(measure_from_ + seconds_span(options.seconds)),
        drain_until_(send_until_ + seconds_span(options.drain_seconds)) {
    counts_.latencies.reserve(static_cast<size_t>(std::min(1e6, (rate > 0 ? rate : 2e4) * options.seconds)));
  }

  // Opens the connections (on `server` or ZeroMQ `endpoint`), runs the schedule, drains.
  LoopCounts run(const ServerAddress* server, zmq::context_t* context, const std::string& endpoint) {
    Epoll epoll;
    std::vector<std::unique_ptr<LoadConnection>> connections;
    for (size_t i = 0; i < connections_; ++i) {
      const size_t in_flight = static_cast<size_t>(options_.in_flight);
      connections.push_back(server ? make_http_connection(*server, requests_, options_.verify, in_flight, epoll, i, *this)
                                   : make_zmq_connection(*context, endpoint, requests_, options_.verify, in_flight, epoll, i, *this));
    }
    queued_.assign(connections_, false);
    const auto note = [&](size_t i) {
      if (!queued_[i] && connections[i]->room() > 0) {
        queued_[i] = true;
        ready_.push_back(i);
      }
    };
    for (size_t i = 0; i < connections_; ++i) note(i);
    LoadTime timers_at = start_, next_timer = LoadTime::max();
    for (;;) {
      LoadTime now = LoadClock::now();
      if (now >= send_until_ && (in_flight_ == 0 || now >= drain_until_)) break;
      if (now < send_until_) fill(connections, now);
      if (now >= timers_at) {  // reconnects: looked at once a millisecond at most
        next_timer = LoadTime::max();
        for (size_t i = 0; i < connections_; ++i) {
          next_timer = std::min(next_timer, connections[i]->on_timer(now));
          note(i);
        }
        timers_at = now + std::chrono::milliseconds(1);
      }
      LoadTime deadline = now < send_until_ ? send_until_ : drain_until_;
      if (now < send_until_ && rate_ > 0 && !ready_.empty()) deadline = std::min(deadline, due_time(next_due_));
      if (next_timer != LoadTime::max()) deadline = std::min(deadline, std::max(next_timer, timers_at));
      const std::vector<epoll_event>& events = epoll.wait(deadline);
      now = LoadClock::now();
      for (const epoll_event& event : events) {
        LoadConnection& connection = *connections[event.data.u64];
        connection.on_events(event.events, now);
        next_timer = std::min(next_timer, connection.on_timer(now));  // a failed connect waits to retry
        note(event.data.u64);
      }
    }
    counts_.result.unanswered = measured_in_flight_;
    if (rate_ > 0) {  // the backlog: requests due by the end, less those sent (never below 0 for rounding)
      const uint64_t due = due_before(send_until_);
      counts_.result.unsent = due > counts_.result.sent ? due - counts_.result.sent : 0;
    }
    return std::move(counts_);
  }

  void answered(const LoadTicket& ticket, int status, bool verified, LoadTime now) override {
    --in_flight_;
    if (now >= measure_from_ && now < send_until_) ++counts_.window_answers;
    if (!ticket.measured) return;
    --measured_in_flight_;
    if (status < 200 || status >= 300) {
      ++counts_.result.statuses[status];
    } else if (!verified) {
      ++counts_.result.verify_failures;
    } else {
      ++counts_.result.ok;
      counts_.latencies.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(now - ticket.due).count());
    }
  }

  void failed(const LoadTicket& ticket) override {
    --in_flight_;
    if (!ticket.measured) return;
    --measured_in_flight_;
    ++counts_.result.transport_errors;
  }

  void connect_failed() override {
    const LoadTime now = LoadClock::now();
    if (now >= measure_from_ && now < send_until_) ++counts_.result.transport_errors;
  }

  void reconnected() override { ++counts_.result.reconnects; }

 private:
  LoadTime due_time(uint64_t index) const { return start_ + seconds_span((static_cast<double>(index) + phase_) / rate_); }

  // Open loop: how many of this loop's requests are due before t.
  uint64_t due_before(LoadTime t) const {
    const double span = std::chrono::duration<double>(t - start_).count();
    return static_cast<uint64_t>(std::max(0.0, std::ceil(span * rate_ - phase_)));
  }

  // The ticket of the next request if one is due by now: always while sending (closed loop),
  // else the next on the schedule once its time has come.
  std::optional<LoadTicket> take_due(LoadTime now) {
    if (now >= send_until_) return std::nullopt;
    if (rate_ <= 0) return LoadTicket{now, now >= measure_from_};
    const LoadTime due = due_time(next_due_);
    if (due > now || due >= send_until_) return std::nullopt;
    ++next_due_;
    return LoadTicket{due, now >= measure_from_};  // measured when sent in the span, charged from when due
  }

  // Sends what is due on the connections with room, in the order they got room.
  void fill(std::vector<std::unique_ptr<LoadConnection>>& connections, LoadTime now) {
    while (!ready_.empty()) {
      const size_t i = ready_.front();
      if (connections[i]->room() == 0) {
        ready_.pop_front();
        queued_[i] = false;
        continue;
      }
      const std::optional<LoadTicket> ticket = take_due(now);
      if (!ticket) return;
      ++in_flight_;
      ++counts_.result.sent;
      if (ticket->measured) ++measured_in_flight_;
      connections[i]->send(next_request_++, *ticket);
    }
  }

  const ServeLoadOptions& options_;
  const PreparedRequests& requests_;
  const size_t connections_;
  const double rate_, phase_;
  size_t next_request_;
  const LoadTime start_, measure_from_, send_until_, drain_until_;
  uint64_t next_due_ = 0;  // open loop: the index of the next request on the schedule
  uint64_t in_flight_ = 0, measured_in_flight_ = 0;
  std::deque<size_t> ready_;   // connections that may have room, each once
  std::vector<bool> queued_;   // [connection]: in ready_
  LoopCounts counts_;
};

void check_options(const ServeLoadOptions& options) {
  const auto refuse = [](const std::string& what) { throw std::invalid_argument("serve load: " + what); };
  if (options.observations.empty()) refuse("no observations to send");
  for (const std::vector<float>& row : options.observations) {
    if (row.empty()) refuse("an empty observation row");
  }
  if (options.port <= 0 || options.port > 65535) refuse("port " + std::to_string(options.port) + " is not in [1, 65535]");
  if (options.policy.empty()) refuse("no policy name");
  if (options.threads < 1) refuse("threads must be >= 1");
  if (options.connections < options.threads) refuse("connections must be >= threads (and >= 1)");
  if (options.in_flight < 1) refuse("in_flight must be >= 1");
  if (!(options.rate >= 0) || !std::isfinite(options.rate)) refuse("rate must be >= 0 (0: closed loop)");
  if (!(options.seconds > 0) || !(options.warmup_seconds >= 0) || !(options.drain_seconds >= 0)) {
    refuse("seconds must be > 0, warmup_seconds and drain_seconds >= 0");
  }
}

}  // namespace

const char* serve_protocol_name(ServeProtocol protocol) {
  switch (protocol) {
    case ServeProtocol::kHttpJson: return "http-json";
    case ServeProtocol::kHttpBinary: return "http-binary";
    case ServeProtocol::kZmq: return "zmq";
  }
  return "?";
}

ServeProtocol parse_serve_protocol(const std::string& name) {
  for (ServeProtocol protocol : {ServeProtocol::kHttpJson, ServeProtocol::kHttpBinary, ServeProtocol::kZmq}) {
    if (name == serve_protocol_name(protocol)) return protocol;
  }
  throw std::invalid_argument("unknown protocol '" + name + "': http-json, http-binary or zmq");
}

uint64_t ServeLoadResult::errors() const {
  uint64_t statuses_total = 0;
  for (const auto& [status, count] : statuses) statuses_total += count;
  return statuses_total + transport_errors + verify_failures + unanswered;
}

ServeLoadResult run_serve_load(const ServeLoadOptions& options) {
  check_options(options);
  const PreparedRequests requests = prepare_requests(options);
  std::optional<ServerAddress> server;
  std::optional<zmq::context_t> context;
  const std::string endpoint = "tcp://" + options.host + ":" + std::to_string(options.port);
  if (options.protocol == ServeProtocol::kZmq) {
    context.emplace(1);
  } else {
    server = resolve_server(options.host, options.port);
  }
  const LoadTime start = LoadClock::now();
  std::vector<LoopCounts> counts(static_cast<size_t>(options.threads));
  std::vector<std::exception_ptr> failures(counts.size());
  const auto run_loop = [&](size_t k) {
    const int connections = options.connections / options.threads + (static_cast<int>(k) < options.connections % options.threads);
    LoadLoop loop(options, requests, start, connections, options.rate / options.threads,
                  static_cast<double>(k) / options.threads, k * 7919);
    try {
      counts[k] = loop.run(server ? &*server : nullptr, context ? &*context : nullptr, endpoint);
    } catch (const std::exception&) {  // rethrown on the caller's thread below
      failures[k] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  for (size_t k = 1; k < counts.size(); ++k) threads.emplace_back(run_loop, k);
  run_loop(0);
  for (std::thread& thread : threads) thread.join();
  for (const std::exception_ptr& failure : failures) {
    if (failure) std::rethrow_exception(failure);
  }

  ServeLoadResult result;
  std::vector<int64_t> latencies;
  uint64_t window_answers = 0;
  for (LoopCounts& loop : counts) {
    const ServeLoadResult& part = loop.result;
    result.sent += part.sent;
    result.ok += part.ok;
    for (const auto& [status, count] : part.statuses) result.statuses[status] += count;
    result.transport_errors += part.transport_errors;
    result.verify_failures += part.verify_failures;
    result.unanswered += part.unanswered;
    result.unsent += part.unsent;
    result.reconnects += part.reconnects;
    window_answers += loop.window_answers;
    latencies.insert(latencies.end(), loop.latencies.begin(), loop.latencies.end());
  }
  result.seconds = options.seconds;
  result.requests_per_s = static_cast<double>(window_answers) / options.seconds;
  result.latency = summarize_latencies(latencies);
  return result;
}

int64_t latency_percentile(std::vector<int64_t>& samples, double p) {
  if (samples.empty()) return 0;
  if (!(p > 0 && p <= 100)) throw std::invalid_argument("a percentile must be in (0, 100], got " + std::to_string(p));
  const double n = static_cast<double>(samples.size());
  const size_t rank = static_cast<size_t>(std::max(1.0, std::ceil(p / 100.0 * n - 1e-9)));  // 1-based
  const auto at = samples.begin() + static_cast<std::ptrdiff_t>(std::min(rank, samples.size()) - 1);
  std::nth_element(samples.begin(), at, samples.end());
  return *at;
}

LatencySummary summarize_latencies(std::vector<int64_t>& samples_ns) {
  LatencySummary summary;
  summary.count = samples_ns.size();
  if (samples_ns.empty()) return summary;
  std::sort(samples_ns.begin(), samples_ns.end());  // each nth_element below then finds its place at once
  const auto us = [](int64_t ns) { return static_cast<double>(ns) / 1000.0; };
  summary.p50_us = us(latency_percentile(samples_ns, 50));
  summary.p90_us = us(latency_percentile(samples_ns, 90));
  summary.p99_us = us(latency_percentile(samples_ns, 99));
  summary.p999_us = us(latency_percentile(samples_ns, 99.9));
  summary.max_us = us(samples_ns.back());
  summary.mean_us = us(std::accumulate(samples_ns.begin(), samples_ns.end(), int64_t{0})) / static_cast<double>(samples_ns.size());
  return summary;
}

HttpAnswer http_exchange(const std::string& host, int port, const std::string& method, const std::string& path,
                         const std::string& body, double timeout_seconds) {
  const ServerAddress server = resolve_server(host, port);
  const LoadTime deadline = LoadClock::now() + seconds_span(timeout_seconds);
  UniqueFd fd(::socket(server.address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) throw std::system_error(errno, std::generic_category(), "socket");
  // Waits for `events` on the socket until the deadline; std::system_error (ETIMEDOUT) past it.
  const auto await = [&](short events) {
    const int64_t left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - LoadClock::now()).count();
    pollfd entry{fd.get(), events, 0};
    const int ready = left_ms > 0 ? ::poll(&entry, 1, static_cast<int>(left_ms)) : 0;
    if (ready < 0 && errno != EINTR) throw std::system_error(errno, std::generic_category(), "poll " + server.text);
    if (ready == 0) throw std::system_error(ETIMEDOUT, std::generic_category(), method + " " + path + " at " + server.text);
  };
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&server.address), server.length) != 0) {
    if (errno != EINPROGRESS) throw std::system_error(errno, std::generic_category(), "connect to " + server.text);
    await(POLLOUT);
    int error = 0;
    socklen_t length = sizeof error;
    ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &length);
    if (error != 0) throw std::system_error(error, std::generic_category(), "connect to " + server.text);
  }
  const std::string request = method + " " + path + " HTTP/1.1\r\nHost: " + server.text +
                              "\r\nConnection: close\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  for (size_t sent = 0; sent < request.size();) {
    const ssize_t n = ::send(fd.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) throw std::system_error(errno, std::generic_category(), "send to " + server.text);
    if (n < 0) await(POLLOUT);
    sent += static_cast<size_t>(std::max<ssize_t>(n, 0));
  }
  std::string answer;
  char chunk[16384];
  for (;;) {
    const std::optional<HttpAnswerHead> head = parse_http_answer_head(answer);
    if (head && answer.size() >= head->head_bytes + head->body_bytes) {
      return {head->status, answer.substr(head->head_bytes, head->body_bytes)};
    }
    const ssize_t n = ::recv(fd.get(), chunk, sizeof chunk, 0);
    if (n == 0) throw std::runtime_error(server.text + " closed the connection before answering " + method + " " + path + " in full");
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) throw std::system_error(errno, std::generic_category(), "recv from " + server.text);
    if (n < 0) await(POLLIN);
    answer.append(chunk, static_cast<size_t>(std::max<ssize_t>(n, 0)));
  }
}

void wait_until_ready(const std::string& host, int port, LaunchedProcess* process, double timeout_seconds) {
  const LoadTime deadline = LoadClock::now() + seconds_span(timeout_seconds);
  const std::string where = host + ":" + std::to_string(port);
  std::string last = "no answer";
  for (;;) {
    if (process) {
      if (const std::optional<ChildExit> exit = process->poll()) {
        std::string message = "the server for " + where + " ended (" + exit->describe() + ") before it was ready";
        for (const std::string& line : tail_lines(process->log(), 20)) message += "\n  " + line;
        throw std::runtime_error(message);
      }
    }
    try {
      const HttpAnswer answer = http_exchange(host, port, "GET", "/readyz", "", 1.0);
      if (answer.status == 200) return;
      last = "GET /readyz answered " + std::to_string(answer.status);
    } catch (const std::system_error& error) {  // not listening yet: refused, or no answer within a second
      last = error.what();
    }
    if (LoadClock::now() >= deadline) {
      throw std::runtime_error(where + " was not ready within " + std::to_string(timeout_seconds) + " s (" + last + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

int free_tcp_port() {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) throw std::system_error(errno, std::generic_category(), "socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    throw std::system_error(errno, std::generic_category(), "bind 127.0.0.1:0");
  }
  return ntohs(address.sin_port);
}

std::vector<std::vector<float>> pseudo_random_observations(size_t rows, size_t float_size, uint64_t seed) {
  Rng rng(seed);
  std::vector<std::vector<float>> observations(rows, std::vector<float>(float_size));
  for (std::vector<float>& row : observations) {
    for (float& value : row) value = static_cast<float>(rng.uniform(-1.0, 1.0));
  }
  return observations;
}

}  // namespace rlx
