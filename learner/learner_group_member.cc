#include "learner/learner_group_member.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <unistd.h>

#include <stdexcept>
#include <thread>

#include "core/log.h"
#include "learner/learner_group_keys.h"
#include "learner/nccl_communicator.h"
#include "transport/sockets.h"

namespace rlx {

namespace {

constexpr std::chrono::milliseconds kPlanPoll{50};

std::string read_key(c10d::Store& store, const std::string& key) {
  const std::vector<uint8_t> bytes = store.get(key);
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace

LearnerGroupMember::LearnerGroupMember(c10::intrusive_ptr<c10d::Store> store, int rank, int size, torch::Device device,
                                       std::chrono::milliseconds timeout, const GlooEndpoint& gloo)
    : store_(std::move(store)),
      device_(device),
      timeout_(timeout),
      gloo_(gloo),
      membership_(store_),
      host_(std::make_unique<GenerationCommunicator>(torch::kCPU)) {
  host_->swap(std::make_unique<GlooCommunicator>(store_, rank, size, timeout, gloo));
  if (device_.is_cuda()) {
    device_comm_ = std::make_unique<GenerationCommunicator>(device_);
    device_comm_->swap(make_nccl_communicator(store_, rank, size, device_.index(), timeout));
  }
}

LearnerGroupMember::LearnerGroupMember(c10::intrusive_ptr<c10d::Store> store, torch::Device device,
                                       std::chrono::milliseconds timeout, const GlooEndpoint& gloo,
                                       std::optional<StoreAddress> heartbeat)
    : store_(std::move(store)),
      device_(device),
      timeout_(timeout),
      gloo_(gloo),
      elastic_(true),
      membership_(store_),
      host_(std::make_unique<GenerationCommunicator>(torch::kCPU)),
      heartbeat_address_(std::move(heartbeat)) {
  if (device_.is_cuda()) device_comm_ = std::make_unique<GenerationCommunicator>(device_);
}

LearnerGroupMember::~LearnerGroupMember() = default;

std::string LearnerGroupMember::payload() const { return read_key(*store_, group_keys::kPayload); }

std::string LearnerGroupMember::log_dir() const {
  return store_->check({group_keys::kLogDir}) ? read_key(*store_, group_keys::kLogDir) : "";
}

void LearnerGroupMember::publish(const std::string& key, const std::string& value) {
  store_->set(key, std::vector<uint8_t>(value.begin(), value.end()));
}

std::string LearnerGroupMember::read(const std::string& key) {
  try {
    return read_key(*store_, key);
  } catch (const std::exception& e) {
    throw CommunicatorError("rank 0 did not publish " + key + ": " + std::string(e.what()));
  }
}

void LearnerGroupMember::form(const GenerationPlan& plan) {
  if (!elastic_) throw std::logic_error("LearnerGroupMember::form: a fixed group is formed once");
  const int rank = plan.rank_of(ticket_);
  if (rank < 0) throw std::logic_error("LearnerGroupMember::form: ticket " + std::to_string(ticket_) + " is not in the plan");
  abandon();
  const auto prefixed = c10::make_intrusive<c10d::PrefixStore>("rlx/gen/" + std::to_string(plan.generation), store_);
  host_->swap(std::make_unique<GlooCommunicator>(prefixed, rank, plan.size(), timeout_, gloo_));
  if (device_comm_) device_comm_->swap(make_nccl_communicator(prefixed, rank, plan.size(), device_.index(), timeout_));
  generation_ = plan.generation;
}

void LearnerGroupMember::abandon() {
  host_->abandon();
  if (device_comm_) device_comm_->abandon();
}

bool LearnerGroupMember::join_generation(int hint) {
  if (!elastic_) throw std::logic_error("LearnerGroupMember::join_generation: not an elastic group");
  // A generation that lists the new ticket is published after the ticket is taken, so after this.
  const int64_t first_possible = membership_.latest_generation() + 1;
  abandon();
  const int64_t ticket = membership_.take_ticket(TicketHolder{local_host_name(), ::getpid(), hint});
  if (generation_ > 0) membership_.report_lost(generation_, ticket_, ticket);  // before the old ticket's beats stop
  ticket_ = ticket;
  if (heartbeat_) {
    heartbeat_->set_ticket(ticket);
  } else if (heartbeat_address_) {
    heartbeat_ = std::make_unique<StoreHeartbeat>(heartbeat_address_->host, heartbeat_address_->port, ticket, kHeartbeatPeriod);
  }
  logger().info("learner ticket {} waits for a generation of the elastic group", ticket);
  for (int64_t generation = first_possible;;) {
    if (membership_.finished()) return false;
    if (const std::optional<GenerationPlan> plan = membership_.plan(generation)) {
      if (plan->rank_of(ticket_) >= 0) {
        form(*plan);
        logger().info("joined generation {} of the elastic group as rank {} of {}", generation, rank(), size());
        return true;
      }
      ++generation;  // formed without this ticket (full, or published before it was taken)
      continue;
    }
    std::this_thread::sleep_for(kPlanPoll);
  }
}

bool LearnerGroupMember::follow_regroup(int64_t generation) {
  const std::optional<GenerationPlan> plan = membership_.plan(generation);
  if (!plan) throw std::runtime_error("rank 0 said regroup to generation " + std::to_string(generation) + ", which it has not published");
  if (plan->rank_of(ticket_) < 0) return join_generation();
  form(*plan);
  logger().info("regrouped: generation {}, rank {} of {}", generation, rank(), size());
  return true;
}

}  // namespace rlx
