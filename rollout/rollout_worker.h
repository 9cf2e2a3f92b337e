// RolloutWorker: the worker side of rollout (`rlx worker`). It joins a learner, builds its
// sampling from the learner's Welcome (one agent's envs and policy, or a multi-agent env's
// policies: rollout/worker_sampling.h), and streams SampleBatch fragments as credits allow,
// taking new weights as soon as they arrive. It re-joins when the learner goes quiet (e.g.
// restarted) and gives up after learner_timeout.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "core/sample_batch.h"
#include "rollout/worker_setup.h"
#include "transport/curve.h"
#include "transport/decode.h"
#include "transport/stop_reason.h"

namespace rlx {

class WorkerSampling;

struct RolloutWorkerOptions {
  std::string endpoint;                 // the learner's, e.g. tcp://head:5555
  uint64_t worker_id = 0;               // 0: drawn at random
  int num_envs = 0;                     // K; 0: as the learner's setup says
  std::chrono::milliseconds heartbeat_interval{500};
  std::chrono::milliseconds rejoin_after{3000};      // no word from the learner this long: join again
  std::chrono::milliseconds learner_timeout{30000};  // no word this long: exit
  DecodeLimits limits;
  // With keys: CURVE client with this key pair, trusting this server public key.
  std::optional<CurveKeyPair> curve_client;
  std::string curve_server_public_key;
  // Asked again before each re-join: when it gives an endpoint other than the current one (a
  // learner restarted elsewhere, e.g. a requeued job), the worker connects there instead.
  std::function<std::optional<std::string>()> endpoint_source;
};

// How a worker's run ended.
enum class WorkerExit {
  kStopped,          // the learner said stop
  kLearnerGone,      // silent past learner_timeout
  kRefusedByLearner,  // the learner's handshake refused this worker (its key, or keys on one side only)
  kSignalled          // a SIGTERM or SIGINT (with a StopSignals installed): said goodbye to the learner
};

// Counts for tests and logs.
struct RolloutWorkerStats {
  uint64_t fragments_sent = 0;       // handed to the connection
  uint64_t fragments_unsent = 0;     // dropped: the connection's queue stayed full (learner unreachable)
  uint64_t env_steps_sent = 0;       // transitions in the fragments sent (multi-agent: the lanes' agent steps)
  uint64_t weights_received = 0;     // applied (multi-agent: to any policy)
  uint64_t welcomes = 0;
  uint64_t joins = 0;                // join requests sent (the first and every re-join)
  uint64_t messages_rejected = 0;    // failed decoding, or weights naming no policy this worker acts with
  uint64_t last_policy_version = 0;
  std::string refusal;               // kRefusedByLearner: what the handshake said
};

class RolloutWorker {
 public:
  // Connects (lazily, as ZeroMQ does); throws zmq::error_t on a malformed endpoint.
  RolloutWorker(zmq::context_t& context, RolloutWorkerOptions options);
  ~RolloutWorker();
  RolloutWorker(const RolloutWorker&) = delete;
  RolloutWorker& operator=(const RolloutWorker&) = delete;

  // Runs until the learner says stop, has been silent longer than learner_timeout, or refused
  // this worker's handshake (a key it does not authorize, or CURVE on one side only). Throws
  // std::invalid_argument when the learner's setup names an unknown env or bad network, and
  // whatever its envs throw; before it does, its goodbye tells the learner why (stop_reason_of).
  WorkerExit run();

  const RolloutWorkerStats& stats() const { return stats_; }
  uint64_t worker_id() const { return options_.worker_id; }

 private:
  void apply_setup(const WorkerSetup& setup);
  void send_hello();
  // Hands weights from the learner to the sampling; counts and logs them when it rejects them.
  void take_weights(Weights weights);
  // Counts a rejected message from the learner, naming the first few in the log.
  void note_rejected(const std::string& detail);
  // Follows endpoint_source to a new endpoint, if it names one.
  void follow_endpoint();
  void send_fragment();
  WorkerExit run_until_stopped();
  // The last message, after every fragment sent (one connection keeps their order), with the
  // reason this worker stops unless the learner asked it to; the socket lingers so that the
  // queued frames leave before it closes.
  void say_goodbye(const std::optional<StopReason>& reason = std::nullopt);
  // False when the connection's queue stayed full for 100 ms (the message is then dropped).
  bool send(std::vector<zmq::message_t> frames);
  std::shared_ptr<SampleBatch> free_batch();
  // Reads the connection's monitor; true once a handshake failed for good (stats_.refusal says why).
  bool handshake_refused();

  RolloutWorkerOptions options_;
  zmq::socket_t socket_;
  zmq::socket_t monitor_;  // the socket's handshake failures
  uint64_t sequence_ = 0;
  std::optional<WorkerSetup> setup_;
  std::unique_ptr<WorkerSampling> sampling_;  // null until the first Welcome
  int64_t credits_ = 0;
  std::vector<std::shared_ptr<SampleBatch>> batches_;  // reused once ZeroMQ has released them
  RolloutWorkerStats stats_;
  bool setting_up_ = false;  // building the sampling of a Welcome's setup (an error there is bad_config)
};

// The reason a worker gives its learner for stopping with `error`: its cause by the error's type
// (env contract, Python env, config, out of memory; else bad_config while `setting_up`, error
// otherwise), its message as one sanitised line, this host and pid.
StopReason stop_reason_of(const std::exception& error, bool setting_up);

}  // namespace rlx
