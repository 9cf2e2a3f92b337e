// RankPlacement: where this process sits in a data-parallel job that an engine started (one
// process per learner rank): its rank, the world size, its GPU on the node and the rendezvous
// address. Read from explicit flags, then torchrun's variables (RANK, WORLD_SIZE, LOCAL_RANK,
// MASTER_ADDR, MASTER_PORT), then Slurm's (SLURM_PROCID, SLURM_STEP_NUM_TASKS or SLURM_NTASKS,
// SLURM_LOCALID, the first host of SLURM_STEP_NODELIST, a port from SLURM_JOB_ID); each field
// from the first source that names it. Slurm's count only inside an srun step (SLURM_STEP_ID or
// SLURM_STEP_NUM_TASKS set): a batch script is one process, whatever SLURM_NTASKS says.
// Torch-free, so the CLI can decide before LibTorch starts.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace rlx {

// A missing, malformed or contradictory placement variable; the message names it and its value.
class PlacementError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

constexpr int kDefaultMasterPort = 29500;  // torchrun's default rendezvous port
// Under srun without MASTER_PORT: kSlurmPortBase + SLURM_JOB_ID % kSlurmPortSpan (below Linux's
// ephemeral ports), so that two jobs on one node do not meet at the same port.
constexpr int kSlurmPortBase = 20000;
constexpr int kSlurmPortSpan = 10000;

// Flags given on the command line; they win over the environment.
struct RankFlags {
  std::optional<int> rank;
  std::optional<int> world_size;
  std::optional<int> local_rank;
  std::optional<std::string> master_addr;
  std::optional<int> master_port;
};

struct RankPlacement {
  int rank = 0;             // in [0, world_size)
  int world_size = 1;
  int local_rank = 0;       // the rank's index on its node (its GPU: cuda:local_rank)
  std::string master_addr;  // where rank 0's rendezvous listens
  int master_port = kDefaultMasterPort;
  // Where each field came from, e.g. "rank from SLURM_PROCID, world size from SLURM_NTASKS, ...".
  std::string origin;
};

// The placement the flags and `environment` give; nullopt when none of them names a rank or a
// world size (a one-host run). PlacementError, naming the variable or flag, when a value is not
// a number, a rank lies outside the world, or a rank is given without a world size (or back).
std::optional<RankPlacement> rank_placement(const std::map<std::string, std::string>& environment,
                                            const RankFlags& flags);

// This process's environment as a map (for rank_placement).
std::map<std::string, std::string> process_environment();

// A Slurm host list expanded: "node[01-03,7],gpu-a" -> node01 node02 node03 node7 gpu-a
// (zero padding kept). PlacementError naming the list on a malformed one.
std::vector<std::string> expand_slurm_hostlist(std::string_view list);

}  // namespace rlx
