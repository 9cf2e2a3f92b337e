#include "learner/parameter_server.h"

#include <algorithm>
#include <limits>
#include <set>
#include <stdexcept>

#include "core/binary_io.h"
#include "core/log.h"
#include "learner/communicator.h"
#include "transport/sockets.h"

namespace rlx {

namespace {

constexpr size_t kStalenessBins = 17;  // 0..15, and 16 or more

void put_header(BinaryWriter& out, uint8_t kind) {
  out.put<uint32_t>(kParameterServerMagic);
  out.put<uint16_t>(kParameterServerVersion);
  out.put<uint8_t>(kind);
}

// The kind after a checked magic and version.
uint8_t get_header(BinaryReader& in, const std::string& what) {
  if (in.get<uint32_t>() != kParameterServerMagic) throw std::invalid_argument(what + ": not a parameter-server message");
  const auto version = in.get<uint16_t>();
  if (version != kParameterServerVersion) {
    throw std::invalid_argument(what + ": version " + std::to_string(version) + ", expected " +
                                std::to_string(kParameterServerVersion) + " (ranks of different rlx builds?)");
  }
  return in.get<uint8_t>();
}

std::string frame_text(const zmq::message_t& message) { return std::string(static_cast<const char*>(message.data()), message.size()); }

}  // namespace

std::string encode_ps_request(const PsRequest& request) {
  BinaryWriter out;
  put_header(out, static_cast<uint8_t>(request.kind));
  out.put<int32_t>(request.rank);
  out.put<int64_t>(request.iteration);
  out.put<int64_t>(request.task);
  out.put<int64_t>(request.version);
  out.put_vector(request.gradient);
  out.put_vector(request.statistics);
  return out.take();
}

PsRequest decode_ps_request(const std::string& bytes, uint64_t max_values) {
  BinaryReader in(bytes, "parameter-server request");
  PsRequest request;
  const uint8_t kind = get_header(in, "parameter-server request");
  if (kind != 1 && kind != 2) throw std::invalid_argument("parameter-server request: kind " + std::to_string(kind) + ", expected 1 pull or 2 push");
  request.kind = static_cast<PsRequest::Kind>(kind);
  request.rank = in.get<int32_t>();
  request.iteration = in.get<int64_t>();
  request.task = in.get<int64_t>();
  request.version = in.get<int64_t>();
  request.gradient = in.get_vector<float>(max_values);
  request.statistics = in.get_vector<float>(max_values);
  in.expect_end();
  return request;
}

std::string encode_ps_reply(const PsReply& reply) {
  BinaryWriter out;
  put_header(out, static_cast<uint8_t>(reply.kind));
  out.put<int64_t>(reply.iteration);
  out.put<int64_t>(reply.task);
  out.put<int64_t>(reply.version);
  out.put_vector(reply.params);
  return out.take();
}

PsReply decode_ps_reply(const std::string& bytes, uint64_t max_values) {
  BinaryReader in(bytes, "parameter-server reply");
  PsReply reply;
  const uint8_t kind = get_header(in, "parameter-server reply");
  if (kind != 1 && kind != 2) throw std::invalid_argument("parameter-server reply: kind " + std::to_string(kind) + ", expected 1 task or 2 done");
  reply.kind = static_cast<PsReply::Kind>(kind);
  reply.iteration = in.get<int64_t>();
  reply.task = in.get<int64_t>();
  reply.version = in.get<int64_t>();
  reply.params = in.get_vector<float>(max_values);
  in.expect_end();
  return reply;
}

// One iteration's bookkeeping.
struct ParameterServer::Round {
  int64_t iteration = 0;
  int64_t tasks = 0;
  int64_t next_task = 0;
  std::vector<int64_t> completed;         // per rank, this iteration
  std::vector<bool> done;                 // told "done"
  std::vector<std::string> identity;      // each rank's socket identity
  std::map<int64_t, int> handed;          // task -> rank, until its gradient is applied
  std::set<int> held_back;                // ranks whose request waits for the slowest
  double staleness_sum = 0.0;
  ParameterServerIteration result;
};

ParameterServer::ParameterServer(zmq::context_t& context, ParameterServerOptions options,
                                 std::function<void(const std::vector<float>&)> apply, std::function<std::vector<float>()> params)
    : options_(std::move(options)), apply_(std::move(apply)), params_(std::move(params)),
      socket_(make_socket(context, zmq::socket_type::router)) {
  if (options_.ranks < 1) throw std::invalid_argument("ParameterServer needs at least one rank");
  try {
    socket_.bind(options_.bind);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error("the parameter server cannot bind " + options_.bind + ": " + e.what());
  }
  endpoint_ = socket_.get(zmq::sockopt::last_endpoint);
}

ParameterServerIteration ParameterServer::serve(int64_t iteration, int64_t tasks) {
  const auto ranks = static_cast<size_t>(options_.ranks);
  Round round;
  round.iteration = iteration;
  round.tasks = tasks;
  round.completed.assign(ranks, 0);
  round.done.assign(ranks, false);
  round.identity.assign(ranks, "");
  round.result.tasks_per_rank.assign(ranks, 0);
  round.result.staleness_counts.assign(kStalenessBins, 0);
  round.result.statistics.assign(options_.num_statistics, 0.0);
  const auto finished = [&] {
    return round.result.applied == tasks && std::all_of(round.done.begin(), round.done.end(), [](bool d) { return d; });
  };
  while (!finished()) {
    zmq::pollitem_t item{static_cast<void*>(socket_), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, options_.timeout) == 0) {
      throw CommunicatorError("parameter server: no learner rank sent anything for " +
                              std::to_string(options_.timeout.count() / 1000) + " s in iteration " + std::to_string(iteration) +
                              " (" + std::to_string(round.result.applied) + " of " + std::to_string(tasks) +
                              " gradients applied; " + silent_ranks(round) + ")");
    }
    zmq::message_t identity, payload;
    if (!socket_.recv(identity) || !identity.more() || !socket_.recv(payload)) continue;
    while (payload.more()) {  // extra frames: not ours
      zmq::message_t extra;
      (void)socket_.recv(extra);
    }
    handle(round, frame_text(identity), frame_text(payload));
  }
  if (round.result.applied > 0) round.result.staleness_mean = round.staleness_sum / static_cast<double>(round.result.applied);
  return round.result;
}

std::string ParameterServer::silent_ranks(const Round& round) const {
  std::map<int, int64_t> holding;  // rank -> tasks handed to it and not pushed back
  for (const auto& [task, rank] : round.handed) ++holding[rank];
  std::string out;
  for (int rank = 0; rank < options_.ranks; ++rank) {
    const auto r = static_cast<size_t>(rank);
    if (round.done[r]) continue;
    out += (out.empty() ? "waiting on rank " : ", rank ") + std::to_string(rank);
    if (round.identity[r].empty()) out += " (no request this iteration)";
    else if (holding.count(rank) > 0) out += " (holds " + std::to_string(holding[rank]) + " task(s))";
    else if (round.held_back.count(rank) > 0) out += " (held back)";
  }
  return out.empty() ? "every rank is done" : out;
}

void ParameterServer::handle(Round& round, const std::string& identity, const std::string& bytes) {
  PsRequest request;
  try {
    request = decode_ps_request(bytes, std::max(options_.num_params, options_.num_statistics));
  } catch (const std::invalid_argument& e) {
    ++round.result.refused;
    logger().warn("parameter server: refused a message: {}", e.what());
    return;
  }
  const auto refuse = [&](const std::string& why) {
    ++round.result.refused;
    logger().warn("parameter server: refused a {} from rank {}: {}", request.kind == PsRequest::Kind::kPull ? "pull" : "push",
                  request.rank, why);
  };
  if (request.rank < 0 || request.rank >= options_.ranks) return refuse("no such rank");
  if (request.iteration != round.iteration) return refuse("iteration " + std::to_string(request.iteration) + ", not " + std::to_string(round.iteration));
  const auto rank = static_cast<size_t>(request.rank);
  // A rank's first pull of the iteration names its socket; its pushes must come from that one.
  if (!round.identity[rank].empty() && round.identity[rank] != identity) return refuse("another socket holds that rank");
  if (request.kind == PsRequest::Kind::kPull) round.identity[rank] = identity;
  if (request.kind == PsRequest::Kind::kPush) {
    if (round.identity[rank].empty()) return refuse("a push before the rank's pull");
    const auto handed = round.handed.find(request.task);
    if (handed == round.handed.end() || handed->second != request.rank) return refuse("task " + std::to_string(request.task) + " is not its");
    if (request.gradient.size() != options_.num_params || request.statistics.size() != options_.num_statistics) {
      return refuse("a gradient of " + std::to_string(request.gradient.size()) + " values, expected " + std::to_string(options_.num_params));
    }
    if (request.version > version_) return refuse("weights of version " + std::to_string(request.version) + " do not exist yet");
    const int64_t staleness = version_ - request.version;
    apply_(request.gradient);
    ++version_;
    round.handed.erase(handed);
    ++round.completed[rank];
    ++round.result.applied;
    ++round.result.tasks_per_rank[rank];
    round.staleness_sum += static_cast<double>(staleness);
    round.result.staleness_max = std::max(round.result.staleness_max, staleness);
    ++round.result.staleness_counts[static_cast<size_t>(std::min<int64_t>(staleness, kStalenessBins - 1))];
    for (size_t s = 0; s < request.statistics.size(); ++s) round.result.statistics[s] += request.statistics[s];
  }
  assign(round, request.rank);
  // The slowest rank moved on: requests held back may go now.
  const std::set<int> waiting = round.held_back;
  for (const int other : waiting) {
    round.held_back.erase(other);
    assign(round, other);
  }
}

void ParameterServer::assign(Round& round, int rank) {
  const auto r = static_cast<size_t>(rank);
  PsReply answer;
  answer.iteration = round.iteration;
  if (round.next_task >= round.tasks) {
    answer.kind = PsReply::Kind::kDone;
    round.done[r] = true;
    reply(round.identity[r], answer);
    return;
  }
  int64_t slowest = std::numeric_limits<int64_t>::max();
  for (size_t other = 0; other < round.completed.size(); ++other) {
    if (!round.done[other]) slowest = std::min(slowest, round.completed[other]);
  }
  if (round.completed[r] > slowest + options_.max_staleness) {
    ++round.result.held_back;
    round.held_back.insert(rank);
    return;
  }
  answer.kind = PsReply::Kind::kTask;
  answer.task = round.next_task++;
  answer.version = version_;
  answer.params = params_();
  round.handed[answer.task] = rank;
  reply(round.identity[r], answer);
}

void ParameterServer::reply(const std::string& identity, const PsReply& reply) {
  const std::string bytes = encode_ps_reply(reply);
  socket_.send(zmq::buffer(identity), zmq::send_flags::sndmore);
  socket_.send(zmq::buffer(bytes), zmq::send_flags::none);
}

ParameterClient::ParameterClient(zmq::context_t& context, const std::string& endpoint, int rank,
                                 std::chrono::milliseconds timeout, uint64_t max_values)
    : socket_(make_socket(context, zmq::socket_type::dealer)), rank_(rank), timeout_(timeout), max_values_(max_values) {
  socket_.connect(endpoint);
}

std::optional<PsReply> ParameterClient::pull(int64_t iteration) {
  PsRequest request;
  request.kind = PsRequest::Kind::kPull;
  request.rank = rank_;
  request.iteration = iteration;
  return exchange(request);
}

std::optional<PsReply> ParameterClient::push(const PsReply& task, const std::vector<float>& gradient,
                                             const std::vector<float>& statistics) {
  PsRequest request;
  request.kind = PsRequest::Kind::kPush;
  request.rank = rank_;
  request.iteration = task.iteration;
  request.task = task.task;
  request.version = task.version;
  request.gradient = gradient;
  request.statistics = statistics;
  return exchange(request);
}

std::optional<PsReply> ParameterClient::exchange(const PsRequest& request) {
  const std::string bytes = encode_ps_request(request);
  socket_.send(zmq::buffer(bytes), zmq::send_flags::none);
  zmq::pollitem_t item{static_cast<void*>(socket_), 0, ZMQ_POLLIN, 0};
  if (zmq::poll(&item, 1, timeout_) == 0) {
    throw CommunicatorError("learner rank " + std::to_string(rank_) + ": the parameter server did not answer within " +
                            std::to_string(timeout_.count() / 1000) + " s");
  }
  zmq::message_t message;
  if (!socket_.recv(message)) throw CommunicatorError("learner rank " + std::to_string(rank_) + ": no answer from the parameter server");
  PsReply reply;
  try {
    reply = decode_ps_reply(frame_text(message), max_values_);
  } catch (const std::invalid_argument& e) {
    throw CommunicatorError(std::string("learner rank ") + std::to_string(rank_) + ": " + e.what());
  }
  if (reply.iteration != request.iteration) {
    throw CommunicatorError("learner rank " + std::to_string(rank_) + ": the parameter server answered for iteration " +
                            std::to_string(reply.iteration) + ", not " + std::to_string(request.iteration));
  }
  if (reply.kind == PsReply::Kind::kDone) return std::nullopt;
  return reply;
}

}  // namespace rlx
