#include "learner/data_parallel.h"

#include <chrono>
#include <optional>
#include <sstream>
#include <thread>

namespace rlx {

namespace {

using Clock = std::chrono::steady_clock;

// When the straggler's last collective returned (shared by its hooks), and the wait it adds.
struct StragglerClock {
  Straggler straggler;
  std::optional<Clock::time_point> last_done;

  // Sleeps (factor - 1) x the compute since the last collective on the straggler's rank.
  void before_gradients(const Communicator& comm) {
    if (straggler.rank < 0 || comm.rank() != straggler.rank || !last_done) return;
    const auto computed = Clock::now() - *last_done;
    std::this_thread::sleep_for(std::chrono::duration_cast<Clock::duration>(computed * (straggler.factor - 1.0)));
  }
  void after_collective() {
    if (straggler.rank >= 0) last_done = Clock::now();
  }
};

std::function<void(std::vector<torch::Tensor>&)> gradient_reducer(Communicator& comm, AllreduceClock* clock,
                                                                  std::shared_ptr<StragglerClock> slow = nullptr) {
  return [&comm, clock, slow](std::vector<torch::Tensor>& grads) {
    if (slow) slow->before_gradients(comm);
    const auto start = Clock::now();
    for (torch::Tensor& g : grads) comm.allreduce(g, ReduceOp::kSum);
    if (clock != nullptr) {
      clock->seconds += std::chrono::duration<double>(Clock::now() - start).count();
      ++clock->calls;
    }
    if (slow) slow->after_collective();
  };
}

template <typename Learner>
void capture_state(const Learner& learner, std::string& archive, std::string& state) {
  std::ostringstream out;
  learner.save(out);
  archive = out.str();
  state = learner.state_json().dump();
}

template <typename Learner>
void apply_state(Learner& learner, const std::string& archive, const std::string& state) {
  std::istringstream in(archive);
  learner.load(in);
  learner.load_state_json(nlohmann::json::parse(state));
}

template <typename Learner>
void broadcast_state(Communicator& comm, Learner& learner) {
  std::string archive, state;
  if (comm.rank() == 0) capture_state(learner, archive, state);
  broadcast_bytes(comm, archive, 0);
  broadcast_bytes(comm, state, 0);
  if (comm.rank() != 0) apply_state(learner, archive, state);
}

}  // namespace

PpoDataParallelHooks make_ppo_hooks(Communicator& device_comm, Communicator& host_comm, AllreduceClock* clock,
                                    Straggler straggler) {
  auto slow = straggler.rank >= 0 ? std::make_shared<StragglerClock>(StragglerClock{straggler, std::nullopt}) : nullptr;
  PpoDataParallelHooks hooks;
  hooks.allreduce_gradients = gradient_reducer(device_comm, clock, slow);
  hooks.allreduce_advantage_moments = [&device_comm, slow](torch::Tensor& moments) {
    if (moments.device() == device_comm.device() && moments.is_contiguous()) {
      device_comm.allreduce(moments, ReduceOp::kSum);
    } else {
      torch::Tensor staged = moments.to(device_comm.device()).contiguous();
      device_comm.allreduce(staged, ReduceOp::kSum);
      moments.copy_(staged);
    }
    if (slow) slow->after_collective();
  };
  hooks.allreduce_host = [&host_comm, slow](std::vector<double>& values) {
    allreduce_host(host_comm, values, ReduceOp::kSum);
    if (slow) slow->after_collective();
  };
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

LearnerRollback::LearnerRollback(const PpoLearner& learner) { capture_state(learner, archive_, state_); }

void LearnerRollback::restore(PpoLearner& learner) const { apply_state(learner, archive_, state_); }

}  // namespace rlx
