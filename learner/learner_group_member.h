// LearnerGroupMember: one learner process's membership of a data-parallel group: its
// communicators (Gloo for host traffic and CPU gradients, NCCL for CUDA gradients) and the store
// rank 0 hosts. A fixed group is formed once with the rank its launcher gave. An elastic group
// (learner/elastic_membership.h) is formed anew for each generation: the communicators the
// learners hold (GenerationCommunicator) stay, the generation's communicators under them change,
// and so may this process's rank and the group's size.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <c10/util/intrusive_ptr.h>
#include <torch/types.h>

#include "learner/communicator.h"
#include "learner/elastic_membership.h"
#include "learner/generation_communicator.h"
#include "learner/gloo_communicator.h"

namespace c10d {
class Store;
}  // namespace c10d

namespace rlx {

// Where a follower of an elastic group reaches rank 0's store (its heartbeat has a client of its own).
struct StoreAddress {
  std::string host;
  int port = 0;
};

class LearnerGroupMember {
 public:
  // A fixed group: joins as `rank` of `size` through store on `device` (e.g. learner_device(setting,
  // rank)), with Gloo at `gloo`; throws CommunicatorError when the rendezvous fails.
  LearnerGroupMember(c10::intrusive_ptr<c10d::Store> store, int rank, int size, torch::Device device,
                     std::chrono::milliseconds timeout, const GlooEndpoint& gloo = {});
  // A member of an elastic group, not yet in a generation: rank 0 (heartbeat empty, ticket 0), or
  // a follower that beats its ticket's heartbeat at `heartbeat` (see join_generation).
  LearnerGroupMember(c10::intrusive_ptr<c10d::Store> store, torch::Device device, std::chrono::milliseconds timeout,
                     const GlooEndpoint& gloo, std::optional<StoreAddress> heartbeat);
  ~LearnerGroupMember();
  LearnerGroupMember(const LearnerGroupMember&) = delete;
  LearnerGroupMember& operator=(const LearnerGroupMember&) = delete;

  int rank() const { return host_->rank(); }
  int size() const { return host_->size(); }
  torch::Device device() const { return device_; }
  // Gloo: host values, fragments, control messages.
  Communicator& host() { return *host_; }
  // Gradients: the Gloo group on CPU, NCCL on CUDA.
  Communicator& device_comm() { return device_comm_ ? static_cast<Communicator&>(*device_comm_) : *host_; }
  // The payload rank 0 published (e.g. the experiment as JSON).
  std::string payload() const;
  // The folder rank 0 keeps the ranks' logs in ("" when it published none).
  std::string log_dir() const;
  // Writes `value` under `key` in rank 0's store (e.g. an endpoint the other ranks read).
  void publish(const std::string& key, const std::string& value);
  // The value under `key`, waiting for it up to the store's timeout (CommunicatorError then).
  std::string read(const std::string& key);
  // The store's elastic membership keys.
  ElasticMembership& membership() { return membership_; }

  bool elastic() const { return elastic_; }
  // The generation this member last formed (0: a fixed group, or none yet).
  int64_t generation() const { return generation_; }
  // This member's ticket (rank 0: 0).
  int64_t ticket() const { return ticket_; }

  // Elastic: builds `plan`'s communicators as the rank this member's ticket holds in it (the
  // previous generation's are abandoned first); CommunicatorError when its rendezvous fails.
  void form(const GenerationPlan& plan);
  // Elastic: leaves the current generation without a word to its peers.
  void abandon();

  // Elastic follower: takes a new ticket (reporting the old one as a survivor of the generation
  // it held, if any), then waits for a generation that lists it and forms it. False when rank 0
  // marked the run finished first. `hint` orders the first generation (the rank a launcher
  // meant this process for; -1: none).
  bool join_generation(int hint = -1);
  // Elastic follower: forms `generation`, which rank 0 published before it said regroup; when
  // the plan leaves this member out, waits for a later one as join_generation does.
  bool follow_regroup(int64_t generation);

 private:
  c10::intrusive_ptr<c10d::Store> store_;
  torch::Device device_;
  std::chrono::milliseconds timeout_;
  GlooEndpoint gloo_;
  bool elastic_ = false;
  int64_t generation_ = 0;
  int64_t ticket_ = 0;
  ElasticMembership membership_;
  std::unique_ptr<GenerationCommunicator> host_;
  std::unique_ptr<GenerationCommunicator> device_comm_;  // null on CPU
  std::optional<StoreAddress> heartbeat_address_;
  std::unique_ptr<StoreHeartbeat> heartbeat_;
};

}  // namespace rlx
