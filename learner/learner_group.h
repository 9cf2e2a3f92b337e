// LearnerGroup: M learner processes training one policy data-parallel (an elastic group: between
// min_learners and max_learners, re-formed as ranks are lost and join; see elastic_membership.h). The `rlx train` process
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
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <c10/util/intrusive_ptr.h>
#include <torch/types.h>

#include <filesystem>

#include "core/process_launcher.h"
#include "core/rank_placement.h"
#include "learner/communicator.h"
#include "learner/elastic_membership.h"
#include "learner/gloo_communicator.h"
#include "learner/learner_group_member.h"

namespace c10d {
class Store;
}  // namespace c10d

namespace rlx {

// The device of learner rank `rank` for a device setting "cpu", "cuda" or "cuda:N" (rank r on
// cuda:N+r). Throws std::invalid_argument on another name.
torch::Device learner_device(const std::string& device, int rank);

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
  // Elastic (learner/elastic_membership.h): ranks join by ticket, the group is re-formed when one
  // is lost (recover) or joins (admit_joiners), and goes on while it holds min_learners.
  bool elastic = false;
  int min_learners = 1;
  int max_learners = 0;            // 0: num_learners
  std::filesystem::path join_file;  // elastic: where rank 0 writes HOST:PORT for `rlx learner --join-file`
};

// What an elastic group went through, for the results.
struct ElasticGroupStats {
  int64_t generation = 0;    // the generation training now (1: the first)
  int64_t regroups = 0;      // generations formed after the first
  int64_t ranks_lost = 0;    // ranks left out of a generation after theirs failed
  int64_t ranks_joined = 0;  // ranks taken in after the first generation
  double regroup_s = 0.0;    // time spent re-forming the group (waiting for survivors, rendezvous)
};

// An elastic group fell below min_learners: the run checkpoints and stops.
class LearnerGroupTooSmall : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
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

  bool elastic() const { return options_.elastic; }
  // Elastic, at an iteration boundary: CommunicatorError when a rank's heartbeat stopped; else,
  // when ranks wait to join and the group has room, tells the ranks to regroup and forms the
  // next generation with them (CommunicatorError when that fails). True when it regrouped.
  bool admit_joiners();
  // Elastic, after the current generation failed (`reason`): waits for the survivors' reports
  // (a rank whose heartbeat stopped, or whose process this driver saw exit, is lost), then forms
  // the next generation of them and any joiners; LearnerGroupTooSmall below min_learners.
  void recover(const std::string& reason);
  const ElasticGroupStats& elastic_stats() const { return stats_; }

 private:
  void reap_all(std::chrono::milliseconds grace);
  // Starts ranks 1..M-1 on this host (`rlx learner --store 127.0.0.1:port ...`, with --elastic when elastic).
  void launch_children(int port, bool elastic);
  // Elastic: writes the join file, starts the children (unless placed) and forms the first generation.
  void start_elastic(int port);
  // Elastic: the first generation, of the ranks that joined within the timeout.
  void form_first_generation();
  // Tickets waiting to join: holders written, heartbeats seen to move, in no generation yet.
  std::vector<int64_t> waiting_joiners();
  // Forms `plan` on this rank; stats and the current plan follow it.
  void form(const GenerationPlan& plan);
  // Elastic: exited children's tickets join dead_tickets_ (logged, not thrown).
  void reap_exited_children();
  // The last lines of rank `rank`'s log, for messages.
  std::string describe_exit(size_t rank, const ChildExit& exit);

  LearnerGroupOptions options_;
  c10::intrusive_ptr<c10d::Store> store_;
  std::vector<std::unique_ptr<LaunchedProcess>> ranks_;  // [0] null (this process); null once reported
  std::unique_ptr<LearnerGroupMember> member_;
  GenerationPlan current_;
  std::set<int64_t> dead_tickets_;      // lost, superseded by a survivor's new ticket, or refused
  std::set<int64_t> reaped_pids_;       // local children seen exiting
  std::unique_ptr<HeartbeatWatch> watch_;
  ElasticGroupStats stats_;
};

// Ranks >= 1 that rank 0 spawned: connect to rank 0's store at host:port and join over loopback.
std::unique_ptr<LearnerGroupMember> join_learner_group(const std::string& host, int port, int rank, int size,
                                                       const std::string& device, std::chrono::milliseconds timeout);

// An elastic follower: join_generation until a generation forms (a rendezvous that fails is
// waited out); false when the run finished first.
bool join_until_formed(LearnerGroupMember& member, int rank_hint = -1);

// A follower of an elastic group: connects to rank 0's store at host:port (waiting up to
// `rendezvous_timeout` for it), takes a ticket (`rank_hint` orders the first generation; -1:
// none) and waits for a generation that lists it. It learns on learner_device(setting,
// device_rank) and reaches Gloo at `gloo`. nullptr when the run finished first;
// CommunicatorError naming the address when there is no rank 0 there.
std::unique_ptr<LearnerGroupMember> join_elastic_learner_group(const std::string& host, int port, int rank_hint,
                                                               int device_rank, const GlooEndpoint& gloo,
                                                               std::chrono::milliseconds rendezvous_timeout);

// Ranks >= 1 that an engine started: connect to rank 0's store at placement's rendezvous
// (an elastic group's: join_elastic_learner_group with the placement's rank as the hint; nullptr
// when the run finished first)
// (waiting up to `rendezvous_timeout` for rank 0 to publish its payload), then join on the
// device the payload's experiment names (cuda:local_rank on CUDA) with Gloo at
// gloo_endpoint_from_environment(master_addr); collectives time out after the experiment's
// learner_timeout_s. CommunicatorError naming the address when the rendezvous fails.
std::unique_ptr<LearnerGroupMember> join_placed_learner_group(const RankPlacement& placement,
                                                              std::chrono::milliseconds rendezvous_timeout);

}  // namespace rlx
