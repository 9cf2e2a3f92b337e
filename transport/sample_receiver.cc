#include "transport/sample_receiver.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "transport/encode.h"
#include "transport/sockets.h"
#include "transport/zap_authenticator.h"

namespace rlx {

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxMessagesPerPoll = 256;   // then look at commands and timers again
// Connections the kernel holds until the I/O thread accepts them. ZeroMQ's default (100) drops
// the SYNs of a thousand workers connecting at once (a fleet starting, or re-joining a restarted
// learner), and TCP retries them only after 1, 3, 7, 15 s; the kernel caps this at somaxconn.
constexpr int kListenBacklog = 4096;
constexpr size_t kMaxNoticesKept = 256;
// Room beyond the largest fragment for the header, descriptors and a hello's JSON.
constexpr uint64_t kMessageSlackBytes = 64 * 1024;
// Control messages a connection may have waiting beyond its fragments.
constexpr int kControlMessagesPerPeer = 32;

std::string next_wake_endpoint() {
  static std::atomic<uint64_t> counter{0};
  return "inproc://rlx-receiver-wake-" + std::to_string(counter++);
}

}  // namespace

SampleReceiver::SampleReceiver(zmq::context_t& context, ReceiverOptions options)
    : options_(std::move(options)), context_(context), peer_guard_(options_.peer_guard) {
  if (options_.credits_per_worker < 1) throw std::invalid_argument("credits_per_worker must be >= 1");
  if (!options_.make_welcome) throw std::invalid_argument("SampleReceiver needs a make_welcome function");
  if (options_.env.env_id.empty()) throw std::invalid_argument("SampleReceiver needs the expected env");
  if (options_.fragment_length < 1) throw std::invalid_argument("SampleReceiver needs fragment_length >= 1");
  if (options_.max_envs_per_worker < 1) throw std::invalid_argument("max_envs_per_worker must be >= 1");
  if (options_.max_workers < 1) throw std::invalid_argument("max_workers must be >= 1");
  // Nothing larger than the largest fragment the contract allows is decoded or even received.
  uint64_t largest_bytes = 0;
  for (const FragmentContract& largest : worker_contracts(options_, options_.max_envs_per_worker)) {
    largest_bytes = std::max(largest_bytes, max_fragment_bytes(largest));
  }
  options_.limits.num_actions = options_.env.num_actions;
  for (const PolicyExpectation& policy : options_.policies) {
    options_.limits.num_actions = std::max(options_.limits.num_actions, policy.env.num_actions);
  }
  if (multi_agent() && options_.num_agents < 1) throw std::invalid_argument("a multi-agent SampleReceiver needs num_agents");
  versions_.assign(std::max<size_t>(1, options_.policies.size()), PublishedVersions(options_.max_policy_lag));
  options_.limits.max_envs = options_.max_envs_per_worker;
  options_.limits.max_transitions = int64_t{options_.fragment_length} * options_.max_envs_per_worker;
  options_.limits.max_episodes = options_.limits.max_transitions;
  options_.limits.max_message_bytes = std::min(options_.limits.max_message_bytes, largest_bytes + kMessageSlackBytes);
  stats_.queued_bytes_bound = options_.max_workers * static_cast<uint64_t>(options_.credits_per_worker) * largest_bytes;
  if (options_.curve_server) authenticator_ = std::make_unique<ZapAuthenticator>(context_, options_.authorized_client_keys);
  SocketOptions socket_options = socket_options_for(options_.limits);
  socket_options.send_hwm = 10000;
  socket_options.recv_hwm = options_.credits_per_worker + kControlMessagesPerPeer;
  router_ = make_socket(context_, zmq::socket_type::router, socket_options);
  // No handover: a second connection under an identity in use is refused, never takes it over.
  router_.set(zmq::sockopt::router_handover, 0);
  router_.set(zmq::sockopt::backlog, kListenBacklog);
  router_.set(zmq::sockopt::handshake_ivl, static_cast<int>(options_.handshake_timeout.count()));
  if (options_.curve_server) configure_curve_server(router_, *options_.curve_server);
  endpoint_ = bind_endpoint(router_, options_.endpoint);
  // Decided on the address bound, not on the text asked for (a name may resolve anywhere).
  if (!options_.curve_server && !options_.allow_unauthenticated_remote && !is_loopback_endpoint(endpoint_)) {
    router_.close();
    throw std::invalid_argument("refusing to serve '" + options_.endpoint + "' (bound as " + endpoint_ +
                                ") without authentication: it is not a loopback address, so any host could join; "
                                "use --auth-keys DIR (rlx keys init DIR) or bind to 127.0.0.1");
  }
  wake_endpoint_ = next_wake_endpoint();
  wake_receive_ = zmq::socket_t(context_, zmq::socket_type::pull);
  wake_receive_.bind(wake_endpoint_);
  wake_send_ = zmq::socket_t(context_, zmq::socket_type::push);
  wake_send_.set(zmq::sockopt::linger, 0);
  wake_send_.connect(wake_endpoint_);
  thread_ = std::thread([this] { run(); });
}

SampleReceiver::~SampleReceiver() {
  if (stop_workers_on_exit_) stop_workers();
  running_ = false;
  post(Command{Command::Kind::kWeights, {}});  // wakes the thread
  thread_.join();
}

void SampleReceiver::post(Command command) {
  std::lock_guard<std::mutex> lock(mutex_);
  commands_.push_back(std::move(command));
  wake_send_.send(zmq::const_buffer("", 0), zmq::send_flags::dontwait);
}

void SampleReceiver::publish_weights(std::shared_ptr<const Weights> weights) {
  if (!weights) throw std::invalid_argument("publish_weights needs weights");
  const int32_t policy = weights->policy_index;
  if (multi_agent() ? policy < 0 || static_cast<size_t>(policy) >= versions_.size() : policy != -1) {
    throw std::invalid_argument("publish_weights: policy index " + std::to_string(policy) + " in a run of " +
                                std::to_string(options_.policies.size()) + " multi-agent policies");
  }
  const size_t index = static_cast<size_t>(std::max(policy, 0));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    versions_[index].publish(std::move(weights));
  }
  post(Command{Command::Kind::kWeights, {}, index});
}

void SampleReceiver::stop_workers() { post(Command{Command::Kind::kStopWorkers, {}}); }

std::optional<SampleBatch> SampleReceiver::pop(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (!queue_ready_.wait_until(lock, deadline, [this] { return !queue_.empty(); })) return std::nullopt;
    auto [identity, batch] = std::move(queue_.front());
    queue_.pop_front();
    --stats_.queued;
    stats_.queued_bytes -= fragment_bytes(batch);
    commands_.push_back(Command{Command::Kind::kCredit, identity});
    wake_send_.send(zmq::const_buffer("", 0), zmq::send_flags::dontwait);
    if (versions_of(batch).stale(batch.policy_version)) {
      ++stats_.dropped_stale;
      continue;
    }
    ++stats_.fragments_consumed;
    stats_.env_steps_consumed += static_cast<uint64_t>(batch.num_transitions());
    return std::move(batch);
  }
}

std::vector<std::string> SampleReceiver::take_notices() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> taken = std::move(notices_);
  notices_.clear();
  return taken;
}

ReceiverStats SampleReceiver::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  ReceiverStats copy = stats_;
  copy.reject_counts = reject_counters_.snapshot();
  copy.fault_counts = fault_counters_.snapshot();
  if (authenticator_) {
    copy.handshakes_accepted = authenticator_->accepted();
    copy.handshakes_refused = authenticator_->rejected();
  }
  return copy;
}

void SampleReceiver::run() {
  zmq::pollitem_t items[] = {{router_.handle(), 0, ZMQ_POLLIN, 0}, {wake_receive_.handle(), 0, ZMQ_POLLIN, 0}};
  auto next_heartbeat = Clock::now() + options_.heartbeat_interval;
  while (running_) {
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_heartbeat - Clock::now());
    zmq::poll(items, 2, std::max(wait, std::chrono::milliseconds(0)));
    for (size_t n = 0; n < kMaxMessagesPerPoll; ++n) {
      std::optional<std::vector<zmq::message_t>> frames = recv_frames(router_, std::chrono::milliseconds(0));
      if (!frames) break;
      if (frames->size() < 2) continue;  // an identity alone: nothing to decode
      const std::string identity = take_identity(*frames);
      handle_message(identity, *frames);
    }
    zmq::message_t wake;
    while (wake_receive_.recv(wake, zmq::recv_flags::dontwait)) {
    }
    run_commands();
    if (Clock::now() >= next_heartbeat) {
      heartbeat_and_expire();
      next_heartbeat = Clock::now() + options_.heartbeat_interval;
    }
  }
  run_commands();  // the last commands, e.g. the destructor's stop_workers()
  router_.set(zmq::sockopt::linger, 500);  // let those stops leave before the socket closes
  router_.close();
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.dropped_at_stop += queue_.size();
  stats_.queued = 0;
  stats_.queued_bytes = 0;
  queue_.clear();
}

void SampleReceiver::forget_worker(const std::string& identity) {
  if (auto it = workers_.find(identity); it != workers_.end()) close_clock(it->second, Clock::now());
  const size_t erased = workers_.erase(identity);
  std::lock_guard<std::mutex> lock(mutex_);
  if (erased > 0) stats_.workers_active = workers_.size();
}

void SampleReceiver::handle_message(const std::string& identity, std::vector<zmq::message_t>& frames) {
  if (peer_guard_.should_drop(identity)) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.messages_from_dropped_peers;  // not even decoded
    return;
  }
  DecodeResult result = decode_message(frames, options_.limits, &reject_counters_);
  if (!result.ok()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.messages_rejected;
    }
    auto it = workers_.find(identity);
    if (result.info.type == MessageType::kSampleFragment && result.reject && it != workers_.end() && it->second.ready) {
      // A worker's fragment that cannot even be decoded: the worker is as broken as one whose
      // fragment breaks the contract.
      drop_worker(identity, std::string("a fragment failed decoding: ") + reject_reason_name(*result.reject) +
                                (result.detail.empty() ? "" : " (" + result.detail + ")"));
      return;
    }
    if (peer_guard_.record_bad(identity)) {
      // Forget the peer: no more credits or weights; its messages are discarded from now on.
      forget_worker(identity);
      std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.peers_dropped;
    }
    return;
  }
  peer_guard_.record_good(identity);
  Message& message = *result.message;
  auto it = workers_.find(identity);
  if (it != workers_.end()) it->second.last_seen = Clock::now();

  const bool join = std::holds_alternative<Join>(message);
  if (join || std::holds_alternative<Heartbeat>(message)) {
    // A join sent before the worker's latest hello was answered already (joins that queued up
    // while the learner was out of reach arrive together): it must not set the worker up again.
    const bool answered = join && it != workers_.end() && result.info.sequence < it->second.hello_sequence;
    if ((!join || answered) && it != workers_.end() && it->second.ready) {
      send(identity, encode_heartbeat(0, ++sequence_));
      return;
    }
    // A join, or a heartbeat from a peer this learner does not know (it restarted): welcome
    // it, at most once per heartbeat interval.
    welcome(identity, result.info.sender_id);
  } else if (auto* hello = std::get_if<Hello>(&message)) {
    handle_hello(identity, *hello, result.info.sequence);
  } else if (auto* batch = std::get_if<SampleBatch>(&message)) {
    handle_fragment(identity, std::move(*batch), result.info.sequence);
  } else if (auto* stats = std::get_if<EpisodeStats>(&message)) {
    handle_episode_stats(identity, *stats);
  } else if (auto* stop = std::get_if<Stop>(&message)) {
    handle_stop(identity, *stop);
  } else {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.unexpected_messages;
  }
}

void SampleReceiver::welcome(const std::string& identity, uint64_t sender_id) {
  const auto now = Clock::now();
  auto it = workers_.find(identity);
  if (it == workers_.end()) {
    if (workers_.size() >= options_.max_workers) {
      std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.joins_refused_full;
      return;
    }
    Worker fresh;
    fresh.worker_index = next_worker_index_++;
    fresh.last_welcome = now - options_.heartbeat_interval;
    it = workers_.emplace(identity, fresh).first;
  }
  Worker& worker = it->second;
  worker.worker_id = sender_id;
  worker.last_seen = now;
  if (worker.ready) {
    // A restarted worker process under the same identity: it holds no credits now and must
    // send its hello again; its queued fragments keep their credits until popped.
    close_clock(worker, now);
    worker.ready = false;
    worker.starved_since.reset();
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.workers_restarted;
  }
  if (now - worker.last_welcome < options_.heartbeat_interval) return;
  worker.last_welcome = now;
  send(identity, encode_welcome(Welcome{options_.make_welcome(worker.worker_index)}, 0, ++sequence_));
}

void SampleReceiver::handle_hello(const std::string& identity, const Hello& hello, uint64_t sequence) {
  auto it = workers_.find(identity);
  const ExpectedEnv& env = options_.env;
  const bool same_spaces = multi_agent() ||  // each policy's are checked on its fragments
                           (hello.obs_size == env.obs_size && hello.obs_bytes == env.obs_bytes &&
                            hello.action_size == env.action_size && hello.num_actions == env.num_actions &&
                            hello.action_components == std::max<int64_t>(1, static_cast<int64_t>(env.action_categories.size())));
  const bool matches = hello.env_id == env.env_id && same_spaces && hello.num_envs >= 1 &&
                       hello.num_envs <= options_.max_envs_per_worker;
  if (it == workers_.end() || !matches) {
    // Not welcomed first, or stepping another env: tell it to stop.
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.hellos_refused;
    if (it != workers_.end()) {
      close_clock(it->second, Clock::now());
      workers_.erase(it);
    }
    stats_.workers_active = workers_.size();
    send(identity, encode_stop(0, ++sequence_));
    return;
  }
  Worker& worker = it->second;
  if (!worker.ready) {
    worker.ready = true;
    worker.ready_since = Clock::now();
    worker.starved_since.reset();
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.workers_joined;
    stats_.workers_active = workers_.size();
  }
  worker.worker_id = hello.worker_id;
  worker.hello_sequence = sequence;
  std::vector<FragmentContract> contracts = worker_contracts(options_, hello.num_envs);
  if (worker.contracts.empty() || contracts[0].num_envs != worker.contracts[0].num_envs) {
    worker.episodes = EpisodeTracker(env.max_episode_steps);
  }
  worker.contracts = std::move(contracts);
  worker.who = "worker " + std::to_string(hello.worker_id) + " (pid " + std::to_string(hello.pid) + " on " +
               hello.hostname + ")";
  send_weights(identity);
  // A hello means the worker holds no credits: grant what its queued fragments leave free.
  worker.credits = 0;
  const int64_t grant = options_.credits_per_worker - worker.queued;
  if (grant > 0) send_credits(identity, worker, grant);
}

std::optional<FragmentRefusal> SampleReceiver::check(Worker& worker, const SampleBatch& batch,
                                                     EpisodeReport& finished) {
  if (worker.credits <= 0) {
    return FragmentRefusal{FragmentFault::kNoCredit, "a fragment beyond the " +
                                                         std::to_string(options_.credits_per_worker) + " credits granted"};
  }
  --worker.credits;
  if (worker.credits == 0) worker.starved_since = Clock::now();
  const int32_t policy = batch.policy_index;
  if (!multi_agent() && policy != -1) {
    return FragmentRefusal{FragmentFault::kWrongPolicy, "policy " + std::to_string(policy) + " in a single-agent run"};
  }
  if (multi_agent() && (policy < 0 || static_cast<size_t>(policy) >= options_.policies.size() ||
                        !options_.policies[static_cast<size_t>(policy)].trains)) {
    return FragmentRefusal{FragmentFault::kWrongPolicy, "policy " + std::to_string(policy) + " is not one of the " +
                                                            std::to_string(options_.policies.size()) +
                                                            " policies of the run that train"};
  }
  if (auto refusal = check_fragment(batch, worker.contracts[static_cast<size_t>(std::max(policy, 0))])) return refusal;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const PublishedVersions& versions = versions_of(batch);
    if (!versions.published(batch.policy_version) && !versions.stale(batch.policy_version)) {
      return FragmentRefusal{FragmentFault::kUnpublishedVersion,
                             "policy version " + std::to_string(batch.policy_version) + " was never published (latest " +
                                 std::to_string(versions.latest_version()) + ")"};
    }
  }
  if (multi_agent()) return std::nullopt;  // a lane's episodes: the worker's report
  if (auto too_long = worker.episodes.add(batch, finished)) return FragmentRefusal{FragmentFault::kEpisodeTooLong, *too_long};
  return std::nullopt;
}

void SampleReceiver::refuse(const std::string& identity, const FragmentRefusal& refusal) {
  fault_counters_.record(refusal.fault);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.refused;
  }
  drop_worker(identity, std::string("refused a fragment: ") + fragment_fault_name(refusal.fault) + ": " + refusal.detail);
}

void SampleReceiver::drop_worker(const std::string& identity, const std::string& reason) {
  auto it = workers_.find(identity);
  const std::string who = it != workers_.end() ? it->second.who : "an unknown peer";
  {
    // Counted and told before the stop goes out, so whoever sees the stop also sees the notice.
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.peers_dropped;
    if (notices_.size() < kMaxNoticesKept) notices_.push_back(who + ": " + reason + "; that worker is dropped");
  }
  send(identity, encode_stop(0, ++sequence_));  // an honest but broken worker stops; others are ignored
  forget_worker(identity);
  peer_guard_.drop(identity);
}

void SampleReceiver::handle_fragment(const std::string& identity, SampleBatch&& batch, uint64_t sequence) {
  auto it = workers_.find(identity);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.fragments_received;
    if (it == workers_.end() || !it->second.ready || sequence < it->second.hello_sequence) {
      ++stats_.dropped_unknown_worker;
      if (it != workers_.end()) it->second.episodes.lose_track();  // sent before it was set up again
      return;
    }
  }
  Worker& worker = it->second;
  EpisodeReport finished;
  if (auto refusal = check(worker, batch, finished)) {
    refuse(identity, *refusal);
    return;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  stats_.episodes += finished.returns.size();
  stats_.episodes_dropped += static_cast<uint64_t>(finished.dropped);
  if (episodes_.returns.size() + finished.returns.size() <= kMaxEpisodesKept) {  // else the learner is not reading
    episodes_.returns.insert(episodes_.returns.end(), finished.returns.begin(), finished.returns.end());
    episodes_.lengths.insert(episodes_.lengths.end(), finished.lengths.begin(), finished.lengths.end());
  }
  if (versions_of(batch).stale(batch.policy_version)) {
    ++stats_.dropped_stale;
    lock.unlock();
    send_credits(identity, worker, 1);
    return;
  }
  // The fragment keeps its credit while queued; pop() returns it (Command::kCredit).
  ++worker.queued;
  stats_.queued_bytes += fragment_bytes(batch);
  stats_.peak_queued_bytes = std::max(stats_.peak_queued_bytes, stats_.queued_bytes);
  queue_.emplace_back(identity, std::move(batch));
  ++stats_.queued;
  lock.unlock();
  queue_ready_.notify_one();
}

void SampleReceiver::run_commands() {
  std::vector<Command> commands;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    commands.swap(commands_);
  }
  std::vector<bool> weights_changed(versions_.size(), false);
  for (const Command& command : commands) {
    switch (command.kind) {
      case Command::Kind::kWeights: weights_changed[command.policy] = true; break;
      case Command::Kind::kCredit: {
        auto it = workers_.find(command.identity);
        if (it == workers_.end() || !it->second.ready) break;  // forgotten meanwhile
        --it->second.queued;
        send_credits(command.identity, it->second, 1);
        break;
      }
      case Command::Kind::kStopWorkers:
        for (const auto& [identity, worker] : workers_) send(identity, encode_stop(0, ++sequence_));
        break;
    }
  }
  for (size_t policy = 0; policy < weights_changed.size(); ++policy) {
    if (!weights_changed[policy]) continue;
    for (const auto& [identity, worker] : workers_) {
      if (worker.ready) send_weights(identity, policy);
    }
  }
}

void SampleReceiver::heartbeat_and_expire() {
  const auto now = Clock::now();
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (now - it->second.last_seen > options_.worker_timeout) {
      const bool was_ready = it->second.ready;
      close_clock(it->second, now);
      it = workers_.erase(it);
      std::lock_guard<std::mutex> lock(mutex_);
      if (was_ready) ++stats_.workers_lost;
      stats_.workers_active = workers_.size();
      continue;
    }
    ++it;
  }
  publish_clocks(now);
}

void SampleReceiver::send(const std::string& identity, std::vector<zmq::message_t> frames) {
  prepend_identity(frames, identity);
  // A ROUTER never blocks: a peer that is gone or full simply misses this message.
  send_frames(router_, frames, std::chrono::milliseconds(0));
}

void SampleReceiver::send_weights(const std::string& identity, std::optional<size_t> policy) {
  std::vector<std::shared_ptr<const Weights>> latest;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t p = 0; p < versions_.size(); ++p) {
      if ((!policy || *policy == p) && versions_[p].latest()) latest.push_back(versions_[p].latest());
    }
  }
  for (auto& weights : latest) send(identity, encode_weights(std::move(weights), 0, ++sequence_));
}

void SampleReceiver::close_clock(Worker& worker, Clock::time_point now) {
  if (!worker.ready) return;
  ready_closed_s_ += std::chrono::duration<double>(now - worker.ready_since).count();
  worker.ready_since = now;
  if (worker.starved_since) {
    starved_closed_s_ += std::chrono::duration<double>(now - *worker.starved_since).count();
    worker.starved_since = now;
  }
}

void SampleReceiver::publish_clocks(Clock::time_point now) {
  double ready = ready_closed_s_, starved = starved_closed_s_;
  for (const auto& [identity, worker] : workers_) {
    if (!worker.ready) continue;
    ready += std::chrono::duration<double>(now - worker.ready_since).count();
    if (worker.starved_since) starved += std::chrono::duration<double>(now - *worker.starved_since).count();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.worker_ready_s = ready;
  stats_.worker_starved_s = starved;
}

void SampleReceiver::send_credits(const std::string& identity, Worker& worker, int64_t credits) {
  if (worker.starved_since && credits > 0) {
    starved_closed_s_ += std::chrono::duration<double>(Clock::now() - *worker.starved_since).count();
    worker.starved_since.reset();
  }
  worker.credits += credits;
  send(identity, encode_credit_grant(CreditGrant{credits}, 0, ++sequence_));
}

}  // namespace rlx
