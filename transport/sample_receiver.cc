#include "transport/sample_receiver.h"

#include <arpa/inet.h>

#include <algorithm>
#include <stdexcept>

#include "core/observation_layout.h"
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
constexpr size_t kMaxEpisodesKept = 1 << 20;
constexpr size_t kMaxNoticesKept = 256;
constexpr size_t kMaxVersionsKept = 4096;  // published versions remembered for the check
// Room beyond the largest fragment for the header, descriptors and a hello's JSON.
constexpr uint64_t kMessageSlackBytes = 64 * 1024;
// Control messages a connection may have waiting beyond its fragments.
constexpr int kControlMessagesPerPeer = 32;

// The contract of a worker announcing num_envs envs.
FragmentContract contract_for(const ReceiverOptions& options, int64_t num_envs) {
  FragmentContract contract;
  contract.num_steps = options.fragment_length;
  contract.num_envs = static_cast<int32_t>(num_envs);
  contract.obs_size = options.env.obs_size;
  contract.obs_bytes = options.env.obs_bytes;
  contract.action_size = options.env.action_size;
  contract.action_categories = options.env.action_categories;
  if (contract.action_categories.empty() && options.env.num_actions > 0) contract.action_categories = {options.env.num_actions};
  contract.mask_offset = options.env.mask_offset;
  contract.mask_size = options.env.mask_size;
  contract.policy_outputs = options.policy_outputs;
  contract.state_size = options.state_size;
  return contract;
}

std::string next_wake_endpoint() {
  static std::atomic<uint64_t> counter{0};
  return "inproc://rlx-receiver-wake-" + std::to_string(counter++);
}

}  // namespace

bool is_loopback_endpoint(const std::string& endpoint) {
  if (endpoint.rfind("ipc://", 0) == 0 || endpoint.rfind("inproc://", 0) == 0) return true;
  const std::string tcp = "tcp://";
  const size_t colon = endpoint.rfind(':');
  if (endpoint.rfind(tcp, 0) != 0 || colon == std::string::npos || colon < tcp.size()) return false;
  std::string host = endpoint.substr(tcp.size(), colon - tcp.size());
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    in6_addr address{};
    if (inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), &address) != 1) return false;
    if (IN6_IS_ADDR_LOOPBACK(&address)) return true;
    return IN6_IS_ADDR_V4MAPPED(&address) && address.s6_addr[12] == 127;
  }
  in_addr address{};
  if (inet_pton(AF_INET, host.c_str(), &address) != 1) return false;  // a name: not resolved here
  return (ntohl(address.s_addr) >> 24) == 127;
}

SampleReceiver::SampleReceiver(zmq::context_t& context, ReceiverOptions options)
    : options_(std::move(options)), context_(context), peer_guard_(options_.peer_guard) {
  if (options_.credits_per_worker < 1) throw std::invalid_argument("credits_per_worker must be >= 1");
  if (!options_.make_welcome) throw std::invalid_argument("SampleReceiver needs a make_welcome function");
  if (options_.env.env_id.empty()) throw std::invalid_argument("SampleReceiver needs the expected env");
  if (options_.fragment_length < 1) throw std::invalid_argument("SampleReceiver needs fragment_length >= 1");
  if (options_.max_envs_per_worker < 1) throw std::invalid_argument("max_envs_per_worker must be >= 1");
  if (options_.max_workers < 1) throw std::invalid_argument("max_workers must be >= 1");
  // Nothing larger than the largest fragment the contract allows is decoded or even received.
  const FragmentContract largest = contract_for(options_, options_.max_envs_per_worker);
  const uint64_t largest_bytes = max_fragment_bytes(largest);
  options_.limits.num_actions = options_.env.num_actions;
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
  {
    std::lock_guard<std::mutex> lock(mutex_);
    current_weights_ = weights;
    current_version_ = weights->policy_version;
    if (!first_published_version_) first_published_version_ = weights->policy_version;
    published_versions_.push_back(weights->policy_version);
    if (published_versions_.size() > kMaxVersionsKept) published_versions_.pop_front();
  }
  post(Command{Command::Kind::kWeights, {}});
}

void SampleReceiver::stop_workers() { post(Command{Command::Kind::kStopWorkers, {}}); }

bool SampleReceiver::stale(uint64_t policy_version) const {
  const uint64_t current = current_version_.load();
  return current > policy_version && current - policy_version > options_.max_policy_lag;
}

bool SampleReceiver::published(uint64_t policy_version) const {
  if (!first_published_version_ || policy_version < *first_published_version_) return false;
  if (policy_version > current_version_.load()) return false;
  // Older than every version remembered: published long ago (versions only grow).
  if (policy_version < published_versions_.front()) return true;
  // Published in increasing order, so the deque is sorted.
  return std::binary_search(published_versions_.begin(), published_versions_.end(), policy_version);
}

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
    if (stale(batch.policy_version)) {
      ++stats_.dropped_stale;
      continue;
    }
    ++stats_.fragments_consumed;
    stats_.env_steps_consumed += static_cast<uint64_t>(batch.num_transitions());
    return std::move(batch);
  }
}

EpisodeReport SampleReceiver::take_episodes() {
  std::lock_guard<std::mutex> lock(mutex_);
  EpisodeReport taken = std::move(episodes_);
  episodes_ = {};
  return taken;
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
  } else if (std::holds_alternative<Stop>(message)) {
    // The worker is leaving (its last message, after all its fragments): forget it.
    const bool was_ready = it != workers_.end() && it->second.ready;
    if (it != workers_.end()) close_clock(it->second, Clock::now());
    workers_.erase(identity);
    std::lock_guard<std::mutex> lock(mutex_);
    if (was_ready) ++stats_.workers_left;
    stats_.workers_active = workers_.size();
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
  const bool matches = hello.env_id == env.env_id && hello.obs_size == env.obs_size && hello.obs_bytes == env.obs_bytes &&
                       hello.action_size == env.action_size && hello.num_actions == env.num_actions &&
                       hello.action_components == std::max<int64_t>(1, static_cast<int64_t>(env.action_categories.size())) &&
                       hello.num_envs >= 1 && hello.num_envs <= options_.max_envs_per_worker;
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
  const FragmentContract contract = contract_for(options_, hello.num_envs);
  if (contract.num_envs != worker.contract.num_envs) worker.episodes = EpisodeTracker(env.max_episode_steps);
  worker.contract = contract;
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
  if (auto refusal = check_fragment(batch, worker.contract)) return refusal;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!published(batch.policy_version) && !stale(batch.policy_version)) {
      return FragmentRefusal{FragmentFault::kUnpublishedVersion,
                             "policy version " + std::to_string(batch.policy_version) + " was never published (latest " +
                                 std::to_string(current_version_.load()) + ")"};
    }
  }
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
  if (episodes_.returns.size() + finished.returns.size() <= kMaxEpisodesKept) {  // else the learner is not reading
    episodes_.returns.insert(episodes_.returns.end(), finished.returns.begin(), finished.returns.end());
    episodes_.lengths.insert(episodes_.lengths.end(), finished.lengths.begin(), finished.lengths.end());
  }
  if (stale(batch.policy_version)) {
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

void SampleReceiver::handle_episode_stats(const std::string& identity, const EpisodeStats& stats) {
  // Only the count of episodes a worker dropped for a non-finite step is taken from it; returns
  // and lengths come from the fragments. The count is bounded by the steps a fragment holds.
  auto it = workers_.find(identity);
  if (it == workers_.end() || !it->second.ready) return;
  const int64_t most = it->second.contract.num_steps * int64_t{it->second.contract.num_envs};
  std::lock_guard<std::mutex> lock(mutex_);
  if (stats.dropped < 0 || stats.dropped > most) {
    ++stats_.unexpected_messages;
    return;
  }
  stats_.episodes_dropped += static_cast<uint64_t>(stats.dropped);
}

void SampleReceiver::run_commands() {
  std::vector<Command> commands;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    commands.swap(commands_);
  }
  bool weights_changed = false;
  for (const Command& command : commands) {
    switch (command.kind) {
      case Command::Kind::kWeights: weights_changed = true; break;
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
  if (weights_changed) {
    for (const auto& [identity, worker] : workers_) {
      if (worker.ready) send_weights(identity);
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

void SampleReceiver::send_weights(const std::string& identity) {
  std::shared_ptr<const Weights> weights;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    weights = current_weights_;
  }
  if (weights) send(identity, encode_weights(weights, 0, ++sequence_));
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

ExpectedEnv ExpectedEnv::of(const EnvSpec& spec) {
  ExpectedEnv env;
  const ObservationLayout layout = observation_layout(spec);
  env.env_id = spec.id;
  env.obs_size = layout.float_slots;
  env.obs_bytes = layout.byte_slots;
  env.action_size = spec.action_space.is_box() ? spec.action_space.size() : 0;
  env.action_categories = rlx::action_categories(spec.action_space);
  for (int64_t count : env.action_categories) env.num_actions += count;
  env.mask_offset = layout.mask_offset;
  env.mask_size = layout.mask_size;
  env.max_episode_steps = spec.max_episode_steps;
  return env;
}

}  // namespace rlx
