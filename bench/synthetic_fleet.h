// SyntheticWorkerFleet: many protocol-faithful rollout workers in one thread, each its own
// DEALER socket and connection to a learner's SampleReceiver. They speak the real protocol
// (Join, Hello after the Welcome, wait for Weights, send prebuilt fragments as credits allow,
// heartbeats, a goodbye Stop after the learner's Stop) but step no env: every fragment is one
// prebuilt SampleBatch (a copy per worker and policy version), sent without copies. One epoll
// waits on every socket's ZMQ_FD, so a pass costs what is ready, not the number of workers.
// For scale tests and benchmarks.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "core/sample_batch.h"
#include "transport/decode.h"

namespace rlx {

struct SyntheticFleetOptions {
  std::string endpoint;            // the receiver's, e.g. "tcp://127.0.0.1:40123"
  int workers = 1;
  uint64_t first_worker_id = 1;    // worker i has id first_worker_id + i and routing id "s<id>"
  // Env description sent in every Hello (env_id comes from the Welcome).
  int64_t obs_size = 4;
  int64_t action_size = 0;         // A for Box, 0 for Discrete
  int64_t num_actions = 2;         // n for Discrete, 0 for Box
  int32_t fragment_length = 32;    // T of every fragment
  int32_t num_envs = 8;            // K of every fragment
  double max_fragments_per_s = 0;  // per worker; 0: as fast as credits allow
  std::chrono::milliseconds heartbeat_interval{500};
  std::chrono::milliseconds join_retry{2000};      // a Join not welcomed this long is sent again
  std::chrono::milliseconds goodbye_linger{2000};  // how long queued frames may take to leave at close
  DecodeLimits limits;
  int abort_fd = -1;               // when >= 0: run() returns once this fd is readable (data or EOF)
};

// Counts over all workers of a fleet.
struct FleetStats {
  uint64_t fragments_sent = 0;
  uint64_t env_steps_sent = 0;
  uint64_t joins = 0;              // Join messages sent
  uint64_t welcomes = 0;
  uint64_t hellos = 0;
  uint64_t weights_received = 0;
  uint64_t credits_received = 0;   // credits granted, summed
  uint64_t heartbeats_sent = 0;
  uint64_t stops = 0;              // Stops received and answered with a goodbye
  uint64_t messages_rejected = 0;  // failed decoding, or a Welcome without a usable env_id
  uint64_t unexpected_messages = 0;  // well-formed, but not a learner's to send
  uint64_t sends_refused = 0;      // a socket would have blocked; the message was not sent
};

class SyntheticWorkerFleet {
 public:
  // Creates and connects every worker's socket (context needs room for options.workers
  // sockets); throws std::invalid_argument on bad options, zmq::error_t on socket errors.
  SyntheticWorkerFleet(zmq::context_t& context, SyntheticFleetOptions options);
  ~SyntheticWorkerFleet();
  SyntheticWorkerFleet(const SyntheticWorkerFleet&) = delete;
  SyntheticWorkerFleet& operator=(const SyntheticWorkerFleet&) = delete;

  // Runs every worker until each has been told to stop (and said goodbye), timeout passes or
  // abort_fd becomes readable; returns true if every worker stopped. Throws zmq::error_t,
  // std::system_error if waiting fails.
  bool run(std::chrono::milliseconds timeout);

  // Workers that have not yet been told to stop.
  int active_workers() const { return active_; }

  // Counts so far, over every worker.
  const FleetStats& stats() const { return stats_; }

 private:
  using TimePoint = std::chrono::steady_clock::time_point;
  enum class State { kJoining, kHelloSent, kStreaming, kStopped };
  struct Worker {
    uint64_t id = 0;
    zmq::socket_t socket;
    int fd = -1;  // ZMQ_FD: readable when the socket may have news
    State state = State::kJoining;
    uint64_t sequence = 0;
    int64_t credits = 0;
    uint64_t policy_version = 0;
    std::string env_id;                        // from the last Welcome
    std::shared_ptr<const SampleBatch> batch;  // prebuilt fragment at policy_version
    TimePoint last_join;
    TimePoint next_heartbeat;
    TimePoint next_send;
  };
  // Owns the epoll instance that waits on every worker's ZMQ_FD at once.
  class Epoll {
   public:
    Epoll();
    ~Epoll();
    Epoll(const Epoll&) = delete;
    Epoll& operator=(const Epoll&) = delete;
    void add(int fd, uint64_t tag);
    void remove(int fd);
    int get() const { return fd_; }

   private:
    int fd_ = -1;
  };

  // Answers everything that arrived for a worker and sends what its credits allow, until the
  // socket has nothing more to read.
  void pump(size_t index);
  void handle(size_t index, std::vector<zmq::message_t>& frames);
  // Joins and heartbeats due at now, then fragments; returns when the worker next has something
  // to do. sent tells whether it sent anything.
  TimePoint service(Worker& worker, TimePoint now, bool& sent);
  // Sends the fragments that credits (and pacing) allow; returns when the next paced one is due.
  TimePoint send_fragments(Worker& worker, TimePoint now);
  // Sends without blocking; false (and counted) if the socket would have blocked.
  bool send(Worker& worker, std::vector<zmq::message_t> frames);
  // Sends one fragment for one credit; false (credit kept) if the socket would have blocked.
  bool send_fragment(Worker& worker);
  void say_goodbye(size_t index);

  SyntheticFleetOptions options_;
  std::shared_ptr<const SampleBatch> prototype_;  // columns every fragment copies
  std::vector<Worker> workers_;
  Epoll epoll_;
  TimePoint next_sweep_{};  // when some worker's timers are next due
  std::chrono::steady_clock::duration send_interval_{};
  int active_ = 0;
  FleetStats stats_;
};

}  // namespace rlx
