// The parameter-server strategy's wire and its two ends (learner_sync: parameter_server). The
// server (on learner rank 0) owns the master weights and the optimizer: it hands out an
// iteration's tasks (one minibatch gradient each) on request, applies every gradient pushed as it
// arrives, and answers with the next task and the newest weights. No rank waits for another
// except under stale-synchronous parallel's bound: a rank that has finished max_staleness more
// tasks of the iteration than the slowest rank still working waits for it. Every applied
// gradient's staleness (updates applied between the weights it was computed at and its own) is
// counted. Messages are ZeroMQ frames (a DEALER per rank, a ROUTER on the server) in the hosts'
// byte order: "RLXP", a version, the kind, then fixed fields; each end checks what it receives
// before it uses it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <zmq.hpp>

namespace rlx {

constexpr uint32_t kParameterServerMagic = 0x50584C52;  // the bytes "RLXP"
constexpr uint16_t kParameterServerVersion = 1;

// A rank's message: pull (its first task of an iteration) or push (a task's gradient).
struct PsRequest {
  enum class Kind : uint8_t { kPull = 1, kPush = 2 };
  Kind kind = Kind::kPull;
  int32_t rank = 0;
  int64_t iteration = 0;
  int64_t task = -1;              // push: the task the gradient is for
  int64_t version = 0;            // push: the weights' version it was computed at
  std::vector<float> gradient;    // push: one value per parameter
  std::vector<float> statistics;  // push: the task's loss statistics, summed by the server
};

// The server's answer: the next task with the weights to compute it at, or "done".
struct PsReply {
  enum class Kind : uint8_t { kTask = 1, kDone = 2 };
  Kind kind = Kind::kDone;
  int64_t iteration = 0;
  int64_t task = -1;
  int64_t version = 0;
  std::vector<float> params;
};

std::string encode_ps_request(const PsRequest& request);
// std::invalid_argument naming the field when the bytes are not a request (at most max_values
// gradient and statistics values each).
PsRequest decode_ps_request(const std::string& bytes, uint64_t max_values);
std::string encode_ps_reply(const PsReply& reply);
PsReply decode_ps_reply(const std::string& bytes, uint64_t max_values);

struct ParameterServerOptions {
  int ranks = 1;                 // the ranks that pull and push
  int64_t max_staleness = 4;     // SSP's bound in tasks; 0: lock step
  size_t num_params = 0;         // every gradient's size
  size_t num_statistics = 0;     // every push's statistics
  std::string bind = "tcp://127.0.0.1:*";
  std::chrono::milliseconds timeout{60000};  // an iteration with no message for this long fails
};

// What one iteration went through.
struct ParameterServerIteration {
  int64_t applied = 0;                     // gradients applied (= tasks)
  std::vector<int64_t> tasks_per_rank;     // how the tasks were shared
  std::vector<int64_t> staleness_counts;   // [s]: gradients applied s updates late (the last bin: that or more)
  int64_t staleness_max = 0;
  double staleness_mean = 0.0;
  int64_t held_back = 0;                   // task requests SSP's bound delayed
  int64_t refused = 0;                     // messages refused (malformed, from no rank, a task not theirs)
  std::vector<double> statistics;          // the pushes' statistics, summed
};

class ParameterServer {
 public:
  // apply: one optimizer step on the master weights with this gradient; params: the master
  // weights now. Binds options.bind (std::runtime_error naming it when it cannot).
  ParameterServer(zmq::context_t& context, ParameterServerOptions options, std::function<void(const std::vector<float>&)> apply,
                  std::function<std::vector<float>()> params);

  // Where the ranks connect (the bound endpoint, its port resolved).
  const std::string& endpoint() const { return endpoint_; }
  // The master weights' version: gradients applied so far.
  int64_t version() const { return version_; }

  // Serves iteration `iteration` of `tasks` tasks until every task's gradient is applied and
  // every rank was told done; CommunicatorError when no message comes for options.timeout.
  ParameterServerIteration serve(int64_t iteration, int64_t tasks);

 private:
  struct Round;
  void handle(Round& round, const std::string& identity, const std::string& bytes);
  // Hands `rank` its next task, "done", or holds its request back (SSP).
  void assign(Round& round, int rank);
  // "waiting on rank 1 (holds 2 task(s)), rank 3 (no request this iteration)": for a timeout.
  std::string silent_ranks(const Round& round) const;
  void reply(const std::string& identity, const PsReply& reply);

  ParameterServerOptions options_;
  std::function<void(const std::vector<float>&)> apply_;
  std::function<std::vector<float>()> params_;
  zmq::socket_t socket_;
  std::string endpoint_;
  int64_t version_ = 0;
};

// A rank's end: one DEALER socket to the server.
class ParameterClient {
 public:
  // Connects to the server's endpoint as `rank`; calls throw CommunicatorError past `timeout`.
  ParameterClient(zmq::context_t& context, const std::string& endpoint, int rank, std::chrono::milliseconds timeout,
                  uint64_t max_values);

  // The rank's first task of `iteration` (nullopt: none left for it).
  std::optional<PsReply> pull(int64_t iteration);
  // Pushes `task`'s gradient and statistics; the next task (nullopt: the iteration is done for this rank).
  std::optional<PsReply> push(const PsReply& task, const std::vector<float>& gradient, const std::vector<float>& statistics);

 private:
  std::optional<PsReply> exchange(const PsRequest& request);

  zmq::socket_t socket_;
  int rank_;
  std::chrono::milliseconds timeout_;
  uint64_t max_values_;
};

}  // namespace rlx
