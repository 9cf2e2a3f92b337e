// SampleReceiver: the learner's side of rollout. One ingestion thread serves any number of
// workers on one ROUTER socket without blocking on any of them: it welcomes joining workers,
// checks their env against the learner's, sends them the current weights, grants each a
// bounded number of fragments in flight (credits), drops fragments older than
// max_policy_lag versions and counts every fragment it does not hand to the learner.
//
// Peers are untrusted. Every fragment is checked against the run's contract (the env's sizes,
// T and K as granted, the algorithm's columns, finite values, a published policy version, a
// credit held) before it is queued; one that fails is refused and counted by fault, and its
// sender is dropped: its later messages are discarded undecoded. Episode returns and lengths
// are computed here from the accepted fragments, never taken from a worker's report. Identities
// are the ROUTER's own, one per connection: a peer cannot take over another's.
//
// Memory: fragments queued for the learner take at most
//   max_workers x credits_per_worker x max_fragment_bytes(T, max_envs_per_worker, O, A)
// bytes (ReceiverStats::queued_bytes_bound); ZeroMQ holds at most recv_hwm messages of at
// most max_message_bytes per connection, and drops a connection that announces a bigger frame
// or has not finished its handshake within handshake_timeout.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <zmq.hpp>

#include "core/env_spec.h"
#include "transport/curve.h"
#include "transport/decode.h"
#include "transport/episode_tracker.h"
#include "transport/fragment_contract.h"
#include "transport/messages.h"
#include "transport/peer_guard.h"
#include "transport/published_versions.h"
#include "transport/worker_stops.h"

namespace rlx {

class ZapAuthenticator;

// What every worker's env must look like (from the learner's EnvSpec).
struct ExpectedEnv {
  std::string env_id;
  int64_t obs_size = 0;      // floats per observation
  int64_t action_size = 0;   // A for Box, 0 for indexed actions
  int64_t num_actions = 0;   // indexed actions: the sum of their categories (n for Discrete); 0 for Box
  int max_episode_steps = 0;  // the env's time limit (0: none); a longer episode is refused
  int64_t obs_bytes = 0;     // bytes per observation (uint8 leaves, action mask)
  std::vector<int64_t> action_categories;  // indexed actions: each element's categories (empty: {num_actions})
  int64_t mask_offset = 0;   // the action mask in an observation's bytes
  int64_t mask_size = 0;

  // The contract of an env with this spec.
  static ExpectedEnv of(const EnvSpec& spec);
};

// A multi-agent run: what the fragments of one policy must be.
struct PolicyExpectation {
  ExpectedEnv env;              // its agents' spaces (env_id is the run's)
  bool policy_outputs = true;   // as ReceiverOptions::policy_outputs, for this policy's algorithm
  int64_t state_size = 0;       // as ReceiverOptions::state_size, for this policy's model
  bool trains = true;           // false: a frozen or scripted policy, whose fragments are refused
};

struct ReceiverOptions {
  std::string endpoint = "tcp://127.0.0.1:*";  // ":*" picks a free port; see endpoint()
  ExpectedEnv env;
  int32_t fragment_length = 0;                  // T every fragment must have (required)
  int max_envs_per_worker = 64;                 // K a hello may announce, at most
  bool policy_outputs = true;                   // fragments carry log_probs, maybe values (PPO), or neither (DQN)
  int64_t state_size = 0;                       // S of the learner's model (actor_critic_layout(spec).state_size):
                                                // fragments carry initial_states [K, S] exactly when S > 0
  size_t max_workers = 4096;                    // workers welcomed at once; more joins wait
  std::chrono::milliseconds handshake_timeout{5000};  // a connection that has not finished ZMTP by then is closed
  int credits_per_worker = 2;                   // fragments a worker may have in flight or queued
  uint64_t max_policy_lag = 1;                  // older fragments are dropped as stale
  std::chrono::milliseconds heartbeat_interval{500};
  std::chrono::milliseconds worker_timeout{10000};  // a silent worker is forgotten after this
  DecodeLimits limits;
  PeerGuardOptions peer_guard;
  // Setup JSON (rollout/worker_setup.h) for the worker_index-th worker to join.
  std::function<std::string(int worker_index)> make_welcome;
  // With keys: CURVE server, accepting only the authorized client keys.
  std::optional<CurveKeyPair> curve_server;
  std::vector<std::string> authorized_client_keys;
  // Without CURVE keys the receiver refuses endpoints other than loopback unless this is set.
  bool allow_unauthenticated_remote = false;
  // A multi-agent run: each policy's expectation, by its index in the run's map, and the env's
  // agents. Every fragment then holds one lane (K = 1) and names its policy; a hello announces
  // the worker's lanes as num_envs (its spaces are not compared: env's id is); weights name their
  // policy; episodes (with each agent's return) come from the workers' reports. Empty: one agent.
  std::vector<PolicyExpectation> policies;
  int num_agents = 0;
};

// The contracts of a worker announcing num_envs envs (lanes): one, or one per policy of a
// multi-agent run.
std::vector<FragmentContract> worker_contracts(const ReceiverOptions& options, int64_t num_envs);

// True for a bound endpoint (numeric, as ZMQ_LAST_ENDPOINT gives it) on a loopback address
// (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104), and for ipc:// and inproc://. Host and interface
// names are not resolved here: bind first, then ask about the endpoint bound.
bool is_loopback_endpoint(const std::string& endpoint);

// Counts since the receiver started. Every fragment received ends as exactly one of:
// consumed, dropped_stale, dropped_unknown_worker, refused, dropped_at_stop, or still queued.
struct ReceiverStats {
  uint64_t fragments_received = 0;
  uint64_t fragments_consumed = 0;        // handed to the learner by pop()
  uint64_t dropped_stale = 0;             // older than max_policy_lag, at arrival or at pop
  uint64_t dropped_unknown_worker = 0;    // from a peer that has not completed its hello
  uint64_t dropped_at_stop = 0;           // still queued when the receiver stopped
  uint64_t refused = 0;                   // broke the run's contract (reasons in fault_counts); sender dropped
  uint64_t queued = 0;
  uint64_t queued_bytes = 0;              // memory the queued fragments take
  uint64_t peak_queued_bytes = 0;
  uint64_t queued_bytes_bound = 0;        // the bound above: max_workers x credits x largest fragment
  uint64_t env_steps_consumed = 0;
  uint64_t messages_rejected = 0;         // failed decoding (reasons in reject_counts)
  uint64_t unexpected_messages = 0;       // well-formed, but not a worker's to send
  uint64_t peers_dropped = 0;             // for bad messages (peer guard) or a refused fragment
  uint64_t messages_from_dropped_peers = 0;  // discarded undecoded
  uint64_t joins_refused_full = 0;        // not welcomed: max_workers are welcomed already
  uint64_t hellos_refused = 0;            // env did not match
  uint64_t workers_joined = 0;
  uint64_t workers_lost = 0;              // timed out
  uint64_t workers_left = 0;              // said goodbye (a Stop) after their last fragment
  uint64_t workers_failed = 0;            // said goodbye giving a failure as the reason (WorkerStops)
  std::map<std::string, uint64_t> worker_failures;  // those by stop_cause_name
  uint64_t workers_restarted = 0;         // re-joined on the same connection (the learner went quiet)
  uint64_t workers_active = 0;
  // Summed over workers since their hello: seconds ready (welcomed, hello accepted) and seconds
  // of those without a credit (every fragment they may send queued here or in flight): their
  // idle time, as the learner sees it; updated every heartbeat interval.
  double worker_ready_s = 0.0;
  double worker_starved_s = 0.0;
  uint64_t episodes = 0;                  // finished in accepted fragments
  uint64_t episodes_dropped = 0;          // ended by a non-finite env step (drop_nonfinite_episodes), as fragments mark them
  uint64_t handshakes_accepted = 0;       // CURVE handshakes authorized (0 without keys)
  uint64_t handshakes_refused = 0;        // CURVE handshakes of keys not authorized
  std::string reject_counts;              // RejectCounters::snapshot()
  std::string fault_counts;               // FragmentFaultCounters::snapshot()
};

class SampleReceiver {
 public:
  // Binds and starts the ingestion thread; throws zmq::error_t if the endpoint cannot be bound,
  // std::invalid_argument on bad options.
  SampleReceiver(zmq::context_t& context, ReceiverOptions options);
  // Tells every worker to stop, then joins the thread.
  ~SampleReceiver();
  SampleReceiver(const SampleReceiver&) = delete;
  SampleReceiver& operator=(const SampleReceiver&) = delete;

  // The bound endpoint (with the real port), e.g. "tcp://127.0.0.1:40123".
  const std::string& endpoint() const { return endpoint_; }

  // Makes these the current weights (of weights->policy_index in a multi-agent run): sent to every
  // worker now and to each that joins later. Fragments more than max_policy_lag versions behind
  // weights->policy_version become stale. Throws std::invalid_argument for a policy index that
  // the run does not have (or any in a single-agent run).
  void publish_weights(std::shared_ptr<const Weights> weights);

  // The next fresh fragment, waiting up to timeout; its worker gets a new credit.
  std::optional<SampleBatch> pop(std::chrono::milliseconds timeout);

  // Episodes finished in accepted fragments since the last call, as computed here.
  EpisodeReport take_episodes();

  // One line for each peer dropped since the last call: who, and why.
  std::vector<std::string> take_notices();

  // One line for each distinct reason a worker gave for stopping since the last call (who, the
  // cause, the detail), as WorkerStops::record bounds them.
  std::vector<StopNotice> take_stop_notices();

  // The workers' failures so far, a line per distinct reason (WorkerStops::summary).
  std::vector<std::string> worker_failure_summary() const;

  // Sends Stop to every known worker (the receiver keeps running).
  void stop_workers();

  // Whether the destructor tells workers to stop (default true; false leaves them to re-join
  // a restarted learner, as after a crash).
  void stop_workers_on_exit(bool stop) { stop_workers_on_exit_ = stop; }

  ReceiverStats stats() const;

 private:
  static constexpr size_t kMaxEpisodesKept = 1 << 20;  // episodes held for take_episodes
  struct Worker {
    uint64_t worker_id = 0;
    int worker_index = 0;
    bool ready = false;    // hello accepted: fragments are welcome
    int64_t queued = 0;    // its fragments waiting in the queue (each holds one credit)
    int64_t credits = 0;   // granted since its hello and not yet used
    // The sequence number of its latest hello: a message numbered below it was sent before
    // (queued while the link was down, say) and belongs to an earlier setup.
    uint64_t hello_sequence = 0;
    std::vector<FragmentContract> contracts;  // worker_contracts()
    EpisodeTracker episodes;
    std::string who;       // "worker ID (pid P on HOST)" for notices
    std::chrono::steady_clock::time_point last_seen;
    std::chrono::steady_clock::time_point last_welcome;
    // Its clock: ready since (hello accepted), and since when it has held no credit (starved).
    std::chrono::steady_clock::time_point ready_since;
    std::optional<std::chrono::steady_clock::time_point> starved_since;
  };
  struct Command {
    enum class Kind { kWeights, kCredit, kStopWorkers } kind;
    std::string identity;  // kCredit
    size_t policy = 0;     // kWeights: whose
  };
  void run();
  void handle_message(const std::string& identity, std::vector<zmq::message_t>& frames);
  void welcome(const std::string& identity, uint64_t sender_id);
  void handle_hello(const std::string& identity, const Hello& hello, uint64_t sequence);
  void handle_fragment(const std::string& identity, SampleBatch&& batch, uint64_t sequence);
  void handle_episode_stats(const std::string& identity, const EpisodeStats& stats);
  // A worker's goodbye: forgets it, and records the reason it gave (if it had joined).
  void handle_stop(const std::string& identity, const Stop& stop);
  // A multi-agent worker's episodes, checked (agents, policies, finite returns) and kept; false
  // when they are not what the run's workers send.
  bool take_agent_episodes(const EpisodeStats& stats);
  // Checks a fragment of a ready worker; nothing when it may be queued.
  std::optional<FragmentRefusal> check(Worker& worker, const SampleBatch& batch, EpisodeReport& finished);
  // Refuses a fragment: counts it, drops its sender and says why in a notice.
  void refuse(const std::string& identity, const FragmentRefusal& refusal);
  // Drops a worker for good: tells it to stop, discards its later messages, says why in a notice.
  void drop_worker(const std::string& identity, const std::string& reason);
  // Forgets a worker (under mutex_ for the counts).
  void forget_worker(const std::string& identity);
  void run_commands();
  void heartbeat_and_expire();
  void send(const std::string& identity, std::vector<zmq::message_t> frames);
  // The latest weights of `policy` (every policy's when none is named), each that was published.
  void send_weights(const std::string& identity, std::optional<size_t> policy = std::nullopt);
  void send_credits(const std::string& identity, Worker& worker, int64_t credits);
  void post(Command command);
  // The worker's ready and starved time so far into the closed totals (it is being forgotten,
  // or its clock restarts).
  void close_clock(Worker& worker, std::chrono::steady_clock::time_point now);
  // Publishes the workers' ready and starved seconds (closed totals plus the live ones) in stats_.
  void publish_clocks(std::chrono::steady_clock::time_point now);
  bool multi_agent() const { return !options_.policies.empty(); }
  // The versions of a fragment's policy (under mutex_).
  const PublishedVersions& versions_of(const SampleBatch& batch) const {
    return versions_[static_cast<size_t>(std::max(batch.policy_index, 0))];
  }

  ReceiverOptions options_;
  zmq::context_t& context_;
  std::unique_ptr<ZapAuthenticator> authenticator_;
  zmq::socket_t router_;
  zmq::socket_t wake_receive_;
  std::string endpoint_;
  std::string wake_endpoint_;

  // Ingestion-thread state.
  std::unordered_map<std::string, Worker> workers_;  // by ROUTER identity
  PeerGuard peer_guard_;
  RejectCounters reject_counters_;
  FragmentFaultCounters fault_counters_;
  uint64_t sequence_ = 0;
  int next_worker_index_ = 0;
  double ready_closed_s_ = 0.0;    // ready seconds of workers forgotten or re-clocked
  double starved_closed_s_ = 0.0;  // starved seconds, likewise, and of ended starvations

  // Shared with public methods.
  mutable std::mutex mutex_;
  std::condition_variable queue_ready_;
  std::deque<std::pair<std::string, SampleBatch>> queue_;
  std::vector<Command> commands_;
  zmq::socket_t wake_send_;  // guarded by mutex_
  std::vector<PublishedVersions> versions_;  // per policy (one in a single-agent run)
  EpisodeReport episodes_;
  std::vector<std::string> notices_;
  WorkerStops worker_stops_;
  std::vector<StopNotice> stop_notices_;
  ReceiverStats stats_;
  std::atomic<bool> running_{true};
  bool stop_workers_on_exit_ = true;
  std::thread thread_;
};

}  // namespace rlx
