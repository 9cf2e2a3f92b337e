#include "learner/data_parallel.h"

#include <chrono>
#include <sstream>

namespace rlx {

namespace {

std::function<void(std::vector<torch::Tensor>&)> gradient_reducer(Communicator& comm, AllreduceClock* clock) {
  return [&comm, clock](std::vector<torch::Tensor>& grads) {
    const auto start = std::chrono::steady_clock::now();
    for (torch::Tensor& g : grads) comm.allreduce(g, ReduceOp::kSum);
    if (clock != nullptr) {
      clock->seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      ++clock->calls;
    }
  };
}

template <typename Learner>
void broadcast_state(Communicator& comm, Learner& learner) {
  std::string archive, state;
  if (comm.rank() == 0) {
    std::ostringstream out;
    learner.save(out);
    archive = out.str();
    state = learner.state_json().dump();
  }
  broadcast_bytes(comm, archive, 0);
  broadcast_bytes(comm, state, 0);
  if (comm.rank() != 0) {
    std::istringstream in(archive);
    learner.load(in);
    learner.load_state_json(nlohmann::json::parse(state));
  }
}

}  // namespace

PpoDataParallelHooks make_ppo_hooks(Communicator& device_comm, Communicator& host_comm, AllreduceClock* clock) {
  PpoDataParallelHooks hooks;
  hooks.allreduce_gradients = gradient_reducer(device_comm, clock);
  hooks.allreduce_advantage_moments = [&device_comm](torch::Tensor& moments) {
    if (moments.device() == device_comm.device() && moments.is_contiguous()) {
      device_comm.allreduce(moments, ReduceOp::kSum);
      return;
    }
    torch::Tensor staged = moments.to(device_comm.device()).contiguous();
    device_comm.allreduce(staged, ReduceOp::kSum);
    moments.copy_(staged);
  };
  hooks.allreduce_host = [&host_comm](std::vector<double>& values) { allreduce_host(host_comm, values, ReduceOp::kSum); };
  return hooks;
}

DqnDataParallelHooks make_dqn_hooks(Communicator& device_comm, Communicator& host_comm, AllreduceClock* clock) {
  DqnDataParallelHooks hooks;
  hooks.rank = device_comm.rank();
  hooks.world_size = device_comm.size();
  hooks.allreduce_gradients = gradient_reducer(device_comm, clock);
  hooks.allreduce_host = [&host_comm](std::vector<double>& values, ReduceOp op) { allreduce_host(host_comm, values, op); };
  return hooks;
}

void broadcast_learner_state(Communicator& host_comm, PpoLearner& learner) { broadcast_state(host_comm, learner); }
void broadcast_learner_state(Communicator& host_comm, DqnLearner& learner) { broadcast_state(host_comm, learner); }

}  // namespace rlx
