#include "bench/synthetic_fleet.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <utility>
#include <variant>

#include <nlohmann/json.hpp>

#include "transport/encode.h"
#include "transport/sockets.h"

namespace rlx {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kMaxHeldCredits = 1 << 20;
constexpr std::chrono::milliseconds kGoodbyeSendTimeout{1000};
constexpr std::chrono::milliseconds kRetryAfterRefusal{1};
constexpr std::chrono::milliseconds kTimerSlack{2};  // timers due this close together share one sweep
constexpr uint64_t kAbortTag = ~uint64_t{0};          // epoll tag of abort_fd; workers are tagged by index
constexpr int kMaxEvents = 256;
constexpr size_t kMaxFrames = kMaxColumns + 2;         // as recv_frames: one more than a decoder accepts

void require(bool condition, const char* what) {
  if (!condition) throw std::invalid_argument(std::string("SyntheticWorkerFleet: ") + what);
}

// The env_id of a Welcome's setup JSON, or nothing if it has none.
std::optional<std::string> welcome_env_id(const std::string& setup_json) {
  const nlohmann::json setup = nlohmann::json::parse(setup_json, nullptr, /*allow_exceptions=*/false);
  if (!setup.is_object()) return std::nullopt;
  auto it = setup.find("env_id");
  if (it == setup.end() || !it->is_string() || it->get<std::string>().empty()) return std::nullopt;
  return it->get<std::string>();
}

// A plausible fragment: T steps of K envs, policy outputs included, one episode ending.
std::shared_ptr<const SampleBatch> make_prototype(const SyntheticFleetOptions& options) {
  auto batch = std::make_shared<SampleBatch>();
  batch->resize(options.fragment_length, options.num_envs, options.obs_size, options.action_size, true);
  for (size_t i = 0; i < batch->obs.size(); ++i) batch->obs[i] = static_cast<float>(i % 17) * 0.01f;
  for (size_t i = 0; i < batch->action_indices.size(); ++i) {
    batch->action_indices[i] = static_cast<int64_t>(i % static_cast<size_t>(options.num_actions));
  }
  std::fill(batch->action_values.begin(), batch->action_values.end(), 0.25f);
  std::fill(batch->rewards.begin(), batch->rewards.end(), 1.0f);
  std::fill(batch->log_probs.begin(), batch->log_probs.end(), -0.69f);
  std::fill(batch->values.begin(), batch->values.end(), 0.5f);
  batch->terminated.back() = 1;
  batch->final_obs_index.push_back(static_cast<int32_t>(batch->terminated.size() - 1));
  batch->final_obs.assign(static_cast<size_t>(options.obs_size), 0.5f);
  batch->validate();
  return batch;
}

// One whole message if one is waiting, without blocking (and without recv_frames' poll).
std::optional<std::vector<zmq::message_t>> try_recv(zmq::socket_t& socket) {
  zmq::message_t frame;
  if (!socket.recv(frame, zmq::recv_flags::dontwait)) return std::nullopt;
  std::vector<zmq::message_t> frames;
  bool more = frame.more();
  frames.push_back(std::move(frame));
  while (more) {
    zmq::message_t next;
    if (!socket.recv(next)) throw zmq::error_t();  // the rest arrived with the first frame
    more = next.more();
    if (frames.size() <= kMaxFrames) frames.push_back(std::move(next));
  }
  return frames;
}

// Queues a whole message without blocking; false (frames intact) if the socket would block.
bool try_send(zmq::socket_t& socket, std::vector<zmq::message_t>& frames) {
  const auto more = [&](size_t i) { return i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none; };
  if (!socket.send(frames[0], more(0) | zmq::send_flags::dontwait)) return false;
  // Once the first frame is queued, ZeroMQ accepts the rest of the message.
  for (size_t i = 1; i < frames.size(); ++i) {
    if (!socket.send(frames[i], more(i))) throw zmq::error_t();
  }
  return true;
}

}  // namespace

SyntheticWorkerFleet::Epoll::Epoll() : fd_(::epoll_create1(EPOLL_CLOEXEC)) {
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "epoll_create1");
}

SyntheticWorkerFleet::Epoll::~Epoll() { ::close(fd_); }

void SyntheticWorkerFleet::Epoll::add(int fd, uint64_t tag) {
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = tag;
  if (::epoll_ctl(fd_, EPOLL_CTL_ADD, fd, &event) != 0) {
    throw std::system_error(errno, std::generic_category(), "epoll_ctl");
  }
}

void SyntheticWorkerFleet::Epoll::remove(int fd) { ::epoll_ctl(fd_, EPOLL_CTL_DEL, fd, nullptr); }

SyntheticWorkerFleet::SyntheticWorkerFleet(zmq::context_t& context, SyntheticFleetOptions options)
    : options_(std::move(options)) {
  require(!options_.endpoint.empty(), "needs an endpoint");
  require(options_.workers >= 1, "workers must be >= 1");
  require(options_.first_worker_id >= 1, "first_worker_id must be >= 1");
  require(options_.fragment_length >= 1 && options_.num_envs >= 1, "fragment_length and num_envs must be >= 1");
  require(options_.obs_size >= 1, "obs_size must be >= 1");
  require((options_.action_size > 0) != (options_.num_actions > 0),
          "exactly one of action_size (Box) and num_actions (Discrete) must be > 0");
  require(std::isfinite(options_.max_fragments_per_s) && options_.max_fragments_per_s >= 0,
          "max_fragments_per_s must be finite and >= 0");
  require(options_.heartbeat_interval.count() > 0 && options_.join_retry.count() > 0,
          "heartbeat_interval and join_retry must be > 0");
  prototype_ = make_prototype(options_);
  if (options_.max_fragments_per_s > 0) {
    send_interval_ = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(1.0 / options_.max_fragments_per_s));
  }

  const SocketOptions socket_options = socket_options_for(options_.limits);
  const auto now = Clock::now();
  workers_.reserve(static_cast<size_t>(options_.workers));
  for (int i = 0; i < options_.workers; ++i) {
    Worker worker;
    worker.id = options_.first_worker_id + static_cast<uint64_t>(i);
    worker.socket = make_socket(context, zmq::socket_type::dealer, socket_options);
    worker.socket.set(zmq::sockopt::routing_id, "s" + std::to_string(worker.id));
    worker.socket.connect(options_.endpoint);
    worker.fd = worker.socket.get(zmq::sockopt::fd);
    worker.last_join = now - options_.join_retry;  // join at once
    worker.next_heartbeat = now + options_.heartbeat_interval;
    // Spread paced workers over one interval so that they do not send in lockstep.
    worker.next_send = now + send_interval_ * i / options_.workers;
    epoll_.add(worker.fd, static_cast<uint64_t>(i));
    workers_.push_back(std::move(worker));
  }
  if (options_.abort_fd >= 0) epoll_.add(options_.abort_fd, kAbortTag);
  active_ = options_.workers;
}

SyntheticWorkerFleet::~SyntheticWorkerFleet() = default;

bool SyntheticWorkerFleet::run(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  epoll_event events[kMaxEvents];
  while (active_ > 0) {
    const auto now = Clock::now();
    if (now >= deadline) return false;
    if (now >= next_sweep_) {
      // Timers: joins, heartbeats, paced fragments. Coalesced so that a sweep over every
      // worker happens at most once per kTimerSlack.
      next_sweep_ = TimePoint::max();
      for (size_t i = 0; i < workers_.size(); ++i) {
        bool sent = false;
        next_sweep_ = std::min(next_sweep_, service(workers_[i], now, sent));
        // Sending may consume the socket's wake-up signal: look for news now.
        if (sent) pump(i);
      }
      next_sweep_ = std::max(next_sweep_, now + kTimerSlack);
    }
    const auto until = std::min(next_sweep_, deadline);
    // Round up: a wait rounded down to 0 ms would spin until the timer is due.
    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(std::max(until - Clock::now(), Clock::duration::zero()));
    const int ready = ::epoll_wait(epoll_.get(), events, kMaxEvents, static_cast<int>(wait.count()));
    if (ready < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "epoll_wait");
    }
    for (int e = 0; e < ready; ++e) {
      if (events[e].data.u64 == kAbortTag) return false;
      pump(static_cast<size_t>(events[e].data.u64));
    }
  }
  return true;
}

void SyntheticWorkerFleet::pump(size_t index) {
  Worker& worker = workers_[index];
  while (worker.state != State::kStopped) {
    while (worker.state != State::kStopped) {
      std::optional<std::vector<zmq::message_t>> frames = try_recv(worker.socket);
      if (!frames) break;
      handle(index, *frames);
    }
    if (worker.state == State::kStreaming) next_sweep_ = std::min(next_sweep_, send_fragments(worker, Clock::now()));
    // ZMQ_FD signals only changes: ask the socket itself whether more has arrived meanwhile.
    if (worker.state == State::kStopped || !(worker.socket.get(zmq::sockopt::events) & ZMQ_POLLIN)) break;
  }
}

void SyntheticWorkerFleet::handle(size_t index, std::vector<zmq::message_t>& frames) {
  Worker& worker = workers_[index];
  DecodeResult result = decode_message(frames, options_.limits);
  if (!result.ok()) {
    ++stats_.messages_rejected;
    return;
  }
  Message& message = *result.message;
  if (auto* welcome = std::get_if<Welcome>(&message)) {
    std::optional<std::string> env_id = welcome_env_id(welcome->setup_json);
    if (!env_id) {
      ++stats_.messages_rejected;
      return;
    }
    ++stats_.welcomes;
    worker.env_id = std::move(*env_id);
    worker.credits = 0;  // the learner grants afresh after the hello
    worker.state = State::kHelloSent;
    Hello hello;
    hello.worker_id = worker.id;
    hello.env_id = worker.env_id;
    hello.num_envs = options_.num_envs;
    hello.obs_size = options_.obs_size;
    hello.action_size = options_.action_size;
    hello.num_actions = options_.num_actions;
    hello.pid = ::getpid();
    hello.hostname = local_host_name();
    if (send(worker, encode_hello(hello, worker.sequence + 1))) {
      ++stats_.hellos;
    } else {
      worker.state = State::kJoining;  // join again later; the learner answers with a new Welcome
    }
  } else if (auto* weights = std::get_if<Weights>(&message)) {
    ++stats_.weights_received;
    worker.policy_version = weights->policy_version;
    if (worker.state == State::kHelloSent) worker.state = State::kStreaming;
  } else if (auto* grant = std::get_if<CreditGrant>(&message)) {
    stats_.credits_received += static_cast<uint64_t>(grant->credits);
    worker.credits = std::min(worker.credits + grant->credits, kMaxHeldCredits);
  } else if (std::holds_alternative<Stop>(message)) {
    say_goodbye(index);
  } else if (!std::holds_alternative<Heartbeat>(message)) {
    ++stats_.unexpected_messages;
  }
}

void SyntheticWorkerFleet::say_goodbye(size_t index) {
  Worker& worker = workers_[index];
  // The goodbye follows every fragment on the one connection; linger so that it leaves.
  std::vector<zmq::message_t> frames = encode_stop(worker.id, ++worker.sequence);
  if (!send_frames(worker.socket, frames, kGoodbyeSendTimeout)) ++stats_.sends_refused;
  worker.socket.set(zmq::sockopt::linger, static_cast<int>(options_.goodbye_linger.count()));
  worker.state = State::kStopped;
  epoll_.remove(worker.fd);
  --active_;
  ++stats_.stops;
}

SyntheticWorkerFleet::TimePoint SyntheticWorkerFleet::service(Worker& worker, TimePoint now, bool& sent) {
  if (worker.state == State::kStopped) return TimePoint::max();
  const uint64_t sequence = worker.sequence;
  TimePoint next = TimePoint::max();
  if (worker.state == State::kJoining) {
    if (now - worker.last_join >= options_.join_retry) {
      if (send(worker, encode_join(worker.id, worker.sequence + 1))) ++stats_.joins;
      worker.last_join = now;
    }
    next = worker.last_join + options_.join_retry;
  } else {
    if (now >= worker.next_heartbeat) {
      if (send(worker, encode_heartbeat(worker.id, worker.sequence + 1))) ++stats_.heartbeats_sent;
      worker.next_heartbeat = now + options_.heartbeat_interval;
    }
    next = worker.next_heartbeat;
    if (worker.state == State::kStreaming) next = std::min(next, send_fragments(worker, now));
  }
  sent = worker.sequence != sequence;
  return next;
}

SyntheticWorkerFleet::TimePoint SyntheticWorkerFleet::send_fragments(Worker& worker, TimePoint now) {
  const bool paced = send_interval_ > Clock::duration::zero();
  while (worker.credits > 0 && (!paced || now >= worker.next_send)) {
    if (!send_fragment(worker)) return now + kRetryAfterRefusal;  // its queue is full
    if (!paced) continue;
    // Keep the rate, but do not burst to catch up after a long stall.
    worker.next_send = std::max(worker.next_send + send_interval_, now - send_interval_);
  }
  return paced && worker.credits > 0 ? worker.next_send : TimePoint::max();
}

bool SyntheticWorkerFleet::send(Worker& worker, std::vector<zmq::message_t> frames) {
  // Never block: one slow connection must not stall the fleet's other workers.
  if (!try_send(worker.socket, frames)) {
    ++stats_.sends_refused;
    return false;
  }
  ++worker.sequence;
  return true;
}

bool SyntheticWorkerFleet::send_fragment(Worker& worker) {
  if (!worker.batch || worker.batch->policy_version != worker.policy_version) {
    // Frames of the old batch may still be queued: build a new one rather than change it.
    auto batch = std::make_shared<SampleBatch>(*prototype_);
    batch->worker_id = worker.id;
    batch->policy_version = worker.policy_version;
    worker.batch = std::move(batch);
  }
  if (!send(worker, encode_sample_fragment(worker.batch, worker.sequence + 1))) return false;  // credit kept
  --worker.credits;
  ++stats_.fragments_sent;
  stats_.env_steps_sent += static_cast<uint64_t>(worker.batch->num_transitions());
  return true;
}

}  // namespace rlx
