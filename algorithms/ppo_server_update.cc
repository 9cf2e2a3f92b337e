// PpoAlgorithm's parameter-server strategy (learner_sync: parameter_server): rank 0 serves the
// update's minibatch steps as tasks (learner/parameter_server.h) and applies each gradient to its
// learner, the master weights, as it arrives; every rank (rank 0 too, from a thread of its own)
// computes the tasks it is handed at the weights it is sent.
#include <exception>
#include <thread>

#include "algorithms/ppo_algorithm.h"
#include "learner/data_parallel.h"

namespace rlx {

namespace {

constexpr const char* kServerEndpointKey = "rlx/ps/endpoint";

// The host part of a bound ZeroMQ TCP endpoint's port: "tcp://0.0.0.0:41234" -> "41234".
std::string endpoint_port(const std::string& endpoint) { return endpoint.substr(endpoint.rfind(':') + 1); }

}  // namespace

void PpoAlgorithm::start_parameter_server() {
  if (server_) return;
  ps_context_ = std::make_unique<zmq::context_t>(1);
  ParameterServerOptions options;
  options.ranks = link_->world();
  options.max_staleness = max_staleness_;
  options.num_params = learner_->flat_parameters().size();
  options.num_statistics = PpoLossStat::kCount;
  options.bind = remote_ranks_ ? "tcp://0.0.0.0:*" : "tcp://127.0.0.1:*";
  options.timeout = timeout_;
  server_ = std::make_unique<ParameterServer>(
      *ps_context_, options, [this](const std::vector<float>& gradient) { learner_->apply_task_gradient(gradient); },
      [this] { return learner_->flat_parameters(); });
  const std::string endpoint = remote_ranks_ ? "tcp://" + server_host_ + ":" + endpoint_port(server_->endpoint())
                                             : server_->endpoint();
  link_->member().publish(kServerEndpointKey, endpoint);
  task_learner_ = std::make_unique<PpoLearner>(setup_.model, learner_config_, setup_.seed, link_->device());
}

ParameterClient& PpoAlgorithm::parameter_client() {
  if (!client_) {
    if (!ps_context_) ps_context_ = std::make_unique<zmq::context_t>(1);
    const std::string endpoint = link_->member().read(kServerEndpointKey);
    client_ = std::make_unique<ParameterClient>(*ps_context_, endpoint, link_->member().rank(), timeout_,
                                                learner_->flat_parameters().size());
  }
  return *client_;
}

void PpoAlgorithm::run_server_tasks(PpoLearner& learner, const std::vector<SampleBatch>& batches,
                                    int64_t timesteps_done, int64_t iteration) {
  ParameterClient& client = parameter_client();
  learner.begin_tasks(batches, timesteps_done);
  const bool slow = straggler_.rank >= 0 && straggler_.rank == link_->member().rank();
  std::vector<float> gradient, statistics;
  for (std::optional<PsReply> task = client.pull(iteration); task; task = client.push(*task, gradient, statistics)) {
    const auto start = std::chrono::steady_clock::now();
    learner.task_gradient(task->task, task->params, gradient, statistics);
    if (slow) std::this_thread::sleep_for((std::chrono::steady_clock::now() - start) * (straggler_.factor - 1.0));
  }
  learner.end_tasks({}, 0);
}

PpoUpdateMetrics PpoAlgorithm::server_update(const std::vector<SampleBatch>& batches, int64_t timesteps_done,
                                             double& scatter_s) {
  start_parameter_server();
  std::vector<SampleBatch> scaled = batches;
  learner_->scale_rewards(scaled);
  const int world = link_->world();
  const auto scatter_start = std::chrono::steady_clock::now();
  // Every rank starts the update from the master's weights and statistics.
  for (int rank = 1; rank < world; ++rank) link_->send(rank, SyncLearnerState{});
  broadcast_learner_state(link_->member().host(), *learner_);
  LearnerRollback(*learner_).restore(*task_learner_);
  ++ps_iteration_;
  std::vector<const SampleBatch*> all;
  for (const SampleBatch& batch : scaled) all.push_back(&batch);
  for (int rank = 1; rank < world; ++rank) link_->send(rank, PsUpdateCommand{timesteps_done, ps_iteration_}, all);
  scatter_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - scatter_start).count();

  const int64_t tasks = learner_->begin_tasks(scaled, timesteps_done);
  std::exception_ptr failed;
  std::thread own_rank([&] {
    try {
      run_server_tasks(*task_learner_, scaled, timesteps_done, ps_iteration_);
    } catch (const std::exception&) {
      failed = std::current_exception();  // rethrown on the driver's thread below
    }
  });
  try {
    last_iteration_ = server_->serve(ps_iteration_, tasks);
  } catch (const std::exception&) {
    own_rank.join();
    throw;
  }
  own_rank.join();
  if (failed) std::rethrow_exception(failed);
  return learner_->end_tasks(last_iteration_.statistics, last_iteration_.applied);
}

}  // namespace rlx
