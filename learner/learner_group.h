// LearnerGroup: M learner processes training one policy data-parallel. The `rlx train` process
// is rank 0 (the driver): it hosts a c10d TCPStore, publishes a payload (the experiment) in it,
// starts ranks 1..M-1 as `PROGRAM learner --store HOST:PORT --rank r --world M --device D`
// through a ProcessLauncher (local fork/exec by default: they die with it), each with its log
// (log_dir/learner_rank_<r>.log), and joins them in a Gloo group (host traffic, and the CPU
// gradients) plus an NCCL group on CUDA (rank r on cuda:r). A rank that dies makes the others'
// next collective fail within the timeout; rank 0 also polls its ranks' exit status and names
// the rank that died, its log and the last lines it wrote.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <c10/util/intrusive_ptr.h>
#include <torch/types.h>

#include <filesystem>

#include "core/process_launcher.h"
#include "core/rank_placement.h"
#include "learner/communicator.h"
#include "learner/gloo_communicator.h"

namespace c10d {
class Store;
}  // namespace c10d

namespace rlx {

// The device of learner rank `rank` for a device setting "cpu", "cuda" or "cuda:N" (rank r on
// cuda:N+r). Throws std::invalid_argument on another name.
torch::Device learner_device(const std::string& device, int rank);

// One rank's membership of a group: its communicators and the driver's payload.
class LearnerGroupMember {
 public:
  // Joins through store (rank 0 hosts it) on `device` (e.g. learner_device(setting, rank)),
  // with Gloo at `gloo`; throws CommunicatorError when the rendezvous fails.
  LearnerGroupMember(c10::intrusive_ptr<c10d::Store> store, int rank, int size, torch::Device device,
                     std::chrono::milliseconds timeout, const GlooEndpoint& gloo = {});
  ~LearnerGroupMember();

  int rank() const { return rank_; }
  int size() const { return size_; }
  torch::Device device() const { return device_; }
  // Gloo: host values, fragments, control messages.
  Communicator& host() { return *host_; }
  // Gradients: the Gloo group on CPU, NCCL on CUDA.
  Communicator& device_comm() { return device_comm_ ? *device_comm_ : *host_; }
  // The payload rank 0 published (e.g. the experiment as JSON).
  std::string payload() const;
  // The folder rank 0 keeps the ranks' logs in ("" when it published none).
  std::string log_dir() const;

 private:
  c10::intrusive_ptr<c10d::Store> store_;
  int rank_;
  int size_;
  torch::Device device_;
  std::unique_ptr<Communicator> host_;
  std::unique_ptr<Communicator> device_comm_;
};

struct LearnerGroupOptions {
  int num_learners = 2;
  std::string device = "cpu";
  std::string program;  // the rlx binary for ranks >= 1 (default: this executable)
  std::chrono::milliseconds timeout{60000};  // rendezvous and every collective
  std::string payload;                       // published for the other ranks
  // Rank r's output is appended to log_dir/learner_rank_<r>.log; empty: inherited.
  std::filesystem::path log_dir;
  ProcessLauncher* launcher = nullptr;  // starts ranks 1..M-1 (null: local fork/exec); outlives the group
  // Set when an engine (srun, torchrun) started every rank: this process is placement->rank 0;
  // nothing is spawned; the store listens on every interface at placement->master_port, Gloo
  // uses gloo_endpoint_from_environment(master_addr), and each rank learns on its node's GPU local_rank.
  std::optional<RankPlacement> placement;
};

// Rank r's log file in log_dir: learner_rank_<r>.log.
std::filesystem::path learner_rank_log(const std::filesystem::path& log_dir, int rank);

// Rank 0's side: the store, the children (none when an engine started the ranks) and rank 0's membership.
class LearnerGroup {
 public:
  // Spawns ranks 1..M-1 and joins them; throws CommunicatorError / std::runtime_error naming
  // the rank when one cannot start or join.
  explicit LearnerGroup(LearnerGroupOptions options);
  // Waits briefly for the children to exit (after the driver told them to stop), then kills them.
  ~LearnerGroup();
  LearnerGroup(const LearnerGroup&) = delete;
  LearnerGroup& operator=(const LearnerGroup&) = delete;

  LearnerGroupMember& member() { return *member_; }
  // Throws std::runtime_error "learner rank r (pid P) exited: ...; its last lines in LOG: ..."
  // when a rank has exited.
  void check_ranks();
  // Like check_ranks, waiting up to `wait` for a child's exit to show (after a failed collective).
  void check_ranks_for(std::chrono::milliseconds wait);

 private:
  void reap_all(std::chrono::milliseconds grace);

  LearnerGroupOptions options_;
  c10::intrusive_ptr<c10d::Store> store_;
  std::vector<std::unique_ptr<LaunchedProcess>> ranks_;  // [0] null (this process); null once reported
  std::unique_ptr<LearnerGroupMember> member_;
};

// Ranks >= 1 that rank 0 spawned: connect to rank 0's store at host:port and join over loopback.
std::unique_ptr<LearnerGroupMember> join_learner_group(const std::string& host, int port, int rank, int size,
                                                       const std::string& device, std::chrono::milliseconds timeout);

// Ranks >= 1 that an engine started: connect to rank 0's store at placement's rendezvous
// (waiting up to `rendezvous_timeout` for rank 0 to publish its payload), then join on the
// device the payload's experiment names (cuda:local_rank on CUDA) with Gloo at
// gloo_endpoint_from_environment(master_addr); collectives time out after the experiment's
// learner_timeout_s. CommunicatorError naming the address when the rendezvous fails.
std::unique_ptr<LearnerGroupMember> join_placed_learner_group(const RankPlacement& placement,
                                                              std::chrono::milliseconds rendezvous_timeout);

}  // namespace rlx
