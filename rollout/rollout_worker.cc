#include "rollout/rollout_worker.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <random>
#include <stdexcept>
#include <variant>

#include "core/log.h"
#include "envs/python_env.h"
#include "envs/registry.h"
#include "transport/sample_receiver.h"
#include "envs/vector_env.h"
#include "rollout/fragment_collector.h"
#include "rollout/policy_factory.h"
#include "models/rollout_policy.h"
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
  if (is_python_env_id(setup.env_id)) register_python_env(setup.env_id, setup.env_config);
  auto envs = std::make_unique<VectorEnv>(setup.env_factory(), setup.num_envs, setup.non_finite_policy());
  collector_.reset();
  policy_ = make_rollout_policy(setup, envs->spec());
  collector_ = std::make_unique<FragmentCollector>(std::move(envs), *policy_, setup.fragment_length,
                                                   setup.worker_seed());
  have_weights_ = false;
  weight_delay_ = WeightDelay(setup.weight_delay);
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
  const EnvSpec& spec = collector_->envs().spec();
  Hello hello;
  hello.worker_id = options_.worker_id;
  hello.env_id = spec.id;
  hello.num_envs = collector_->num_envs();
  const ExpectedEnv expected = ExpectedEnv::of(spec);  // the learner holds this worker's env to the same
  hello.obs_size = expected.obs_size;
  hello.obs_bytes = expected.obs_bytes;
  hello.action_size = expected.action_size;
  hello.num_actions = expected.num_actions;
  hello.action_components = std::max<int64_t>(1, static_cast<int64_t>(expected.action_categories.size()));
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
  collector_->collect(*batch);
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
  const std::vector<FinishedEpisode> finished = collector_->take_finished_episodes();
  EpisodeStats report;
  report.dropped = collector_->take_episodes_dropped();
  if (finished.empty() && report.dropped == 0) return;
  for (const FinishedEpisode& episode : finished) {
    report.returns.push_back(episode.episode_return);
    report.lengths.push_back(episode.length);
  }
  send(encode_episode_stats(report, options_.worker_id, ++sequence_));
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

WorkerExit RolloutWorker::run() {
  auto last_heard = Clock::now();
  auto last_join = Clock::now() - options_.rejoin_after;
  auto next_heartbeat = Clock::now();
  bool joined = false;  // the learner has welcomed us since the last (re-)join
  bool awaiting_hello_answer = false;  // hello sent after a welcome; no weights or credits since
  for (;;) {
    const bool can_sample = collector_ && have_weights_ && credits_ > 0;
    const auto now = Clock::now();
    // Wait for the learner only when there is nothing to sample; otherwise just drain.
    const auto wait = can_sample ? std::chrono::milliseconds(0)
                                 : std::chrono::duration_cast<std::chrono::milliseconds>(
                                       std::max(next_heartbeat - now, Clock::duration::zero()));
    std::optional<std::vector<zmq::message_t>> frames = recv_frames(socket_, wait);
    while (frames) {
      DecodeResult result = decode_message(*frames, options_.limits);
      if (!result.ok()) {
        if (++stats_.messages_rejected <= kMaxRejectsLogged) {
          logger().warn("rejected a message from the learner: {}{}", result.detail,
                        stats_.messages_rejected == kMaxRejectsLogged ? " (further ones are only counted)" : "");
        }
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
          apply_setup(WorkerSetup::from_json(welcome->setup_json));
          logger().info("{} the learner at {}: {} x {} envs, fragments of {} steps", stats_.welcomes == 1 ? "joined" : "joined again",
                        options_.endpoint, setup_->env_id, collector_->num_envs(), setup_->fragment_length);
          joined = true;
          credits_ = 0;  // the learner grants afresh after our hello
          send_hello();
        } else if (auto* weights = std::get_if<Weights>(&message)) {
          awaiting_hello_answer = false;
          if (policy_) {
            const std::shared_ptr<const Weights> act_with = weight_delay_.push(std::make_shared<Weights>(std::move(*weights)));
            apply_weights(*policy_, *act_with);
            have_weights_ = true;
            ++stats_.weights_received;
            stats_.last_policy_version = act_with->policy_version;
            logger().debug("policy version {} ({} parameters)", act_with->policy_version, act_with->params.size());
          }
        } else if (auto* grant = std::get_if<CreditGrant>(&message)) {
          awaiting_hello_answer = false;
          credits_ = std::min(credits_ + grant->credits, kMaxHeldCredits);
        } else if (std::holds_alternative<Stop>(message)) {
          // Goodbye after every fragment sent (one connection keeps their order); linger so
          // the queued frames leave before the socket closes.
          send(encode_stop(options_.worker_id, ++sequence_));
          socket_.set(zmq::sockopt::linger, 2000);
          return WorkerExit::kStopped;
        }
      }
      frames = recv_frames(socket_, std::chrono::milliseconds(0));
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
    if (collector_ && have_weights_ && credits_ > 0) send_fragment();
  }
}

}  // namespace rlx
