#include "rollout/rollout_worker.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>
#include <random>
#include <stdexcept>
#include <variant>

#include "core/config_error.h"
#include "core/log.h"
#include "core/stop_signal.h"
#include "envs/env.h"
#include "envs/python_env.h"
#include "rollout/worker_sampling.h"
#include "transport/encode.h"
#include "transport/sockets.h"

namespace rlx {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kMaxHeldCredits = 1 << 20;
constexpr uint64_t kMaxRejectsLogged = 10;  // rejected messages named in the log; the rest are counted

uint64_t random_worker_id() {
  std::random_device device;
  uint64_t id = 0;
  while (id == 0) id = (static_cast<uint64_t>(device()) << 32) ^ device();
  return id;
}

bool same_setup(const WorkerSetup& a, const WorkerSetup& b) { return a.to_json() == b.to_json(); }

std::string next_monitor_endpoint() {
  static std::atomic<uint64_t> counter{0};
  return "inproc://rlx-worker-monitor-" + std::to_string(counter++);
}

constexpr int kHandshakeEvents = ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL;

}  // namespace

RolloutWorker::RolloutWorker(zmq::context_t& context, RolloutWorkerOptions options) : options_(std::move(options)) {
  if (options_.worker_id == 0) options_.worker_id = random_worker_id();
  SocketOptions socket_options = socket_options_for(options_.limits);
  socket_ = make_socket(context, zmq::socket_type::dealer, socket_options);
  // No routing id of our own: the learner's ROUTER gives each connection one that no other peer
  // can claim, so a worker cannot be impersonated or knocked out by another using its id.
  if (options_.curve_client) configure_curve_client(socket_, *options_.curve_client, options_.curve_server_public_key);
  const std::string monitor_endpoint = next_monitor_endpoint();
  if (zmq_socket_monitor(socket_.handle(), monitor_endpoint.c_str(), kHandshakeEvents) != 0) throw zmq::error_t();
  monitor_ = zmq::socket_t(context, zmq::socket_type::pair);
  monitor_.connect(monitor_endpoint);
  socket_.connect(options_.endpoint);
}

RolloutWorker::~RolloutWorker() = default;

bool RolloutWorker::send(std::vector<zmq::message_t> frames) {
  // Bounded wait: a learner that stopped reading must not freeze the worker's heartbeats.
  return send_frames(socket_, frames, std::chrono::milliseconds(100));
}

void RolloutWorker::apply_setup(const WorkerSetup& incoming) {
  if (setup_ && same_setup(*setup_, incoming)) return;
  WorkerSetup setup = incoming;
  if (options_.num_envs > 0) setup.num_envs = options_.num_envs;
  sampling_.reset();  // its envs and policies go before the new ones are made
  sampling_ = make_worker_sampling(setup);
  setup_ = incoming;
}

void RolloutWorker::follow_endpoint() {
  if (!options_.endpoint_source) return;
  const std::optional<std::string> endpoint = options_.endpoint_source();
  if (!endpoint || *endpoint == options_.endpoint) return;
  logger().info("the learner's endpoint is now {} (was {}); connecting there", *endpoint, options_.endpoint);
  socket_.disconnect(options_.endpoint);
  socket_.connect(*endpoint);
  options_.endpoint = *endpoint;
}

void RolloutWorker::send_hello() {
  Hello hello;
  hello.worker_id = options_.worker_id;
  sampling_->fill_hello(hello);
  hello.pid = ::getpid();
  hello.hostname = local_host_name();
  send(encode_hello(hello, ++sequence_));
}

std::shared_ptr<SampleBatch> RolloutWorker::free_batch() {
  for (auto& batch : batches_) {
    if (batch.use_count() == 1) return batch;  // ZeroMQ has released every frame of it
  }
  batches_.push_back(std::make_shared<SampleBatch>());
  return batches_.back();
}

void RolloutWorker::send_fragment() {
  std::shared_ptr<SampleBatch> batch = free_batch();
  sampling_->next_fragment(*batch);
  batch->worker_id = options_.worker_id;
  --credits_;
  if (!send(encode_sample_fragment(batch, ++sequence_))) {
    // The connection's queue is full (a learner unreachable for long): the fragment is lost here.
    ++stats_.fragments_unsent;
    logger().debug("a fragment could not be queued for the learner (full connection queue); dropped");
  } else {
    ++stats_.fragments_sent;
    stats_.env_steps_sent += static_cast<uint64_t>(batch->num_transitions());
  }
  for (const EpisodeStats& report : sampling_->take_reports()) {
    send(encode_episode_stats(report, options_.worker_id, ++sequence_));
  }
}

void RolloutWorker::take_weights(Weights weights) {
  const WeightsOutcome outcome = sampling_->apply(std::make_shared<Weights>(std::move(weights)));
  if (!outcome.accepted) {
    note_rejected(outcome.rejection);
    return;
  }
  ++stats_.weights_received;
  stats_.last_policy_version = outcome.acting_version;
  logger().debug("policy version {} ({} parameters)", outcome.acting_version, outcome.params);
}

void RolloutWorker::note_rejected(const std::string& detail) {
  if (++stats_.messages_rejected <= kMaxRejectsLogged) {
    logger().warn("rejected a message from the learner: {}{}", detail,
                  stats_.messages_rejected == kMaxRejectsLogged ? " (further ones are only counted)" : "");
  }
}

bool RolloutWorker::handshake_refused() {
  zmq::message_t event;
  while (monitor_.recv(event, zmq::recv_flags::dontwait)) {
    zmq::message_t address;
    if (!event.more() || !monitor_.recv(address, zmq::recv_flags::dontwait)) continue;
    if (event.size() < 6) continue;
    uint16_t kind = 0;
    uint32_t value = 0;
    std::memcpy(&kind, event.data(), sizeof kind);
    std::memcpy(&value, static_cast<const char*>(event.data()) + 2, sizeof value);
    const std::string where = address.to_string();
    if (kind == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) {
      stats_.refusal = "the learner at " + where + " refused this worker's key (CURVE authentication failed, status " +
                       std::to_string(value) + "): its public key is not among the learner's authorized keys";
    } else if (value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH) {
      stats_.refusal = "the learner at " + where + " uses " + (options_.curve_client ? "no" : "CURVE") +
                       " authentication and this worker " + (options_.curve_client ? "does" : "does not") +
                       ": give both --auth-keys, or neither";
    } else {
      stats_.refusal = "the handshake with the learner at " + where + " failed (ZeroMQ protocol error " +
                       std::to_string(value) + "): is it an rlx learner, with the same keys?";
    }
  }
  return !stats_.refusal.empty();
}

void RolloutWorker::say_goodbye(const std::optional<StopReason>& reason) {
  send(reason ? encode_stop(options_.worker_id, ++sequence_, *reason) : encode_stop(options_.worker_id, ++sequence_));
  socket_.set(zmq::sockopt::linger, 2000);
}

StopReason stop_reason_of(const std::exception& error, bool setting_up) {
  StopCause cause = setting_up ? StopCause::kBadConfig : StopCause::kError;
  if (dynamic_cast<const std::bad_alloc*>(&error)) {
    cause = StopCause::kOutOfMemory;
  } else if (dynamic_cast<const PythonEnvError*>(&error)) {
    cause = StopCause::kPythonError;
  } else if (dynamic_cast<const EnvContractError*>(&error)) {
    cause = StopCause::kEnvContract;
  } else if (dynamic_cast<const ConfigError*>(&error)) {
    cause = StopCause::kBadConfig;
  }
  return StopReason{cause, sanitize_stop_detail(error.what()), local_host_name(), ::getpid()};
}

WorkerExit RolloutWorker::run() {
  try {
    return run_until_stopped();
  } catch (const std::exception& error) {
    // The learner hears why this worker is going away (its id and host are known there), then
    // the error goes on to the caller, which exits with it.
    say_goodbye(stop_reason_of(error, setting_up_));
    throw;
  }
}

WorkerExit RolloutWorker::run_until_stopped() {
  auto last_heard = Clock::now();
  auto last_join = Clock::now() - options_.rejoin_after;
  auto next_heartbeat = Clock::now();
  bool joined = false;  // the learner has welcomed us since the last (re-)join
  bool awaiting_hello_answer = false;  // hello sent after a welcome; no weights or credits since
  for (;;) {
    const bool can_sample = sampling_ && sampling_->ready() && credits_ > 0;
    const auto now = Clock::now();
    // Wait for the learner only when there is nothing to sample; otherwise just drain.
    const auto wait = can_sample ? std::chrono::milliseconds(0)
                                 : std::chrono::duration_cast<std::chrono::milliseconds>(
                                       std::max(next_heartbeat - now, Clock::duration::zero()));
    std::optional<std::vector<zmq::message_t>> frames = recv_frames(socket_, wait);
    while (frames) {
      DecodeResult result = decode_message(*frames, options_.limits);
      if (!result.ok()) {
        note_rejected(result.detail);
      } else {
        last_heard = Clock::now();
        Message& message = *result.message;
        if (auto* welcome = std::get_if<Welcome>(&message)) {
          if (awaiting_hello_answer) {
            // The learner answers our hello (weights, credits) only after every message we sent
            // before it; a welcome before that answers one of the joins or heartbeats that
            // queued up while the learner was out of reach, and our hello answers it too.
            logger().debug("a repeated welcome, ignored");
            frames = recv_frames(socket_, std::chrono::milliseconds(0));
            continue;
          }
          awaiting_hello_answer = true;
          ++stats_.welcomes;
          setting_up_ = true;
          apply_setup(WorkerSetup::from_json(welcome->setup_json));
          setting_up_ = false;
          logger().info("{} the learner at {}: {}, fragments of {} steps", stats_.welcomes == 1 ? "joined" : "joined again",
                        options_.endpoint, sampling_->describe(), setup_->fragment_length);
          joined = true;
          credits_ = 0;  // the learner grants afresh after our hello
          send_hello();
        } else if (auto* weights = std::get_if<Weights>(&message)) {
          awaiting_hello_answer = false;
          if (sampling_) take_weights(std::move(*weights));
        } else if (auto* grant = std::get_if<CreditGrant>(&message)) {
          awaiting_hello_answer = false;
          credits_ = std::min(credits_ + grant->credits, kMaxHeldCredits);
        } else if (std::holds_alternative<Stop>(message)) {
          say_goodbye();
          return WorkerExit::kStopped;
        }
      }
      frames = recv_frames(socket_, std::chrono::milliseconds(0));
    }

    if (stop_requested()) {  // a scheduler's SIGTERM: the learner hears that we left, not that we vanished
      say_goodbye(StopReason{StopCause::kSignal, std::string("stopped by ") + stop_signal_name(stop_signal()),
                             local_host_name(), ::getpid()});
      return WorkerExit::kSignalled;
    }
    const auto after = Clock::now();
    if (handshake_refused()) return WorkerExit::kRefusedByLearner;
    if (after - last_heard > options_.learner_timeout) return WorkerExit::kLearnerGone;
    if (after - last_heard > options_.rejoin_after && after - last_join > options_.rejoin_after) {
      if (joined) {
        logger().warn("the learner at {} has been silent for {} ms; joining again", options_.endpoint,
                      std::chrono::duration_cast<std::chrono::milliseconds>(after - last_heard).count());
      }
      joined = false;  // the learner went quiet: maybe it restarted and forgot us
      awaiting_hello_answer = false;
      credits_ = 0;
    }
    if (!joined && after - last_join >= options_.rejoin_after) {
      if (stats_.joins > 0) follow_endpoint();
      send(encode_join(options_.worker_id, ++sequence_));  // answered with a Welcome
      last_join = after;
      ++stats_.joins;
      next_heartbeat = after + options_.heartbeat_interval;
    } else if (after >= next_heartbeat) {
      send(encode_heartbeat(options_.worker_id, ++sequence_));
      next_heartbeat = after + options_.heartbeat_interval;
    }
    if (sampling_ && sampling_->ready() && credits_ > 0) send_fragment();
  }
}

}  // namespace rlx
