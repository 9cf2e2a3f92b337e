#include <catch2/catch.hpp>

#include "core/rank_placement.h"
#include "tests/core/test_util.h"

using namespace rlx;
using Catch::Contains;
using rlx::test::error_of;
using Env = std::map<std::string, std::string>;

TEST_CASE("Slurm host lists expand with ranges, padding and several groups", "[core][cluster]") {
  CHECK(expand_slurm_hostlist("node1") == std::vector<std::string>{"node1"});
  CHECK(expand_slurm_hostlist("node[01-03,7],gpu-a") ==
        std::vector<std::string>{"node01", "node02", "node03", "node7", "gpu-a"});
  CHECK(expand_slurm_hostlist("r[1-2]n[8-9]") == std::vector<std::string>{"r1n8", "r1n9", "r2n8", "r2n9"});
  CHECK(expand_slurm_hostlist("10.0.0.[5-6]") == std::vector<std::string>{"10.0.0.5", "10.0.0.6"});
  for (const char* bad : {"node[1-", "node[3-1]", "node[a-b]", "a,,b", "node]1[", "n[[1]]"}) {
    INFO(bad);
    CHECK_THAT(error_of<PlacementError>([&] { expand_slurm_hostlist(bad); }), Contains(std::string("\"") + bad + "\""));
  }
}

TEST_CASE("A run outside any launcher has no placement", "[core][cluster]") {
  CHECK_FALSE(rank_placement(Env{{"PATH", "/bin"}, {"SLURM_JOB_ID", "12"}}, RankFlags{}));
  // A batch script runs as one process, though it sees the job's task count.
  CHECK_FALSE(rank_placement(Env{{"SLURM_JOB_ID", "12"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "3"},
                                 {"SLURM_JOB_NODELIST", "node[1-3]"}},
                             RankFlags{}));
}

TEST_CASE("srun's variables place a rank: rank, world, GPU and the step's first host", "[core][cluster]") {
  const Env slurm{{"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "8"}, {"SLURM_STEP_NUM_TASKS", "4"}, {"SLURM_STEP_ID", "0"},
                  {"SLURM_LOCALID", "1"}, {"SLURM_STEP_NODELIST", "gpu[07-08]"}, {"SLURM_JOB_NODELIST", "gpu[01-09]"}};
  const auto placement = rank_placement(slurm, RankFlags{});
  REQUIRE(placement);
  CHECK(placement->rank == 3);
  CHECK(placement->world_size == 4);
  CHECK(placement->local_rank == 1);
  CHECK(placement->master_addr == "gpu07");
  CHECK(placement->master_port == kDefaultMasterPort);
  CHECK_THAT(placement->origin, Contains("rank from SLURM_PROCID") && Contains("rendezvous host from SLURM_STEP_NODELIST"));
  // The port follows the job, so two jobs on one node do not collide.
  Env with_job = slurm;
  with_job["SLURM_JOB_ID"] = "123456";
  CHECK(rank_placement(with_job, RankFlags{})->master_port == kSlurmPortBase + 123456 % kSlurmPortSpan);
  with_job["MASTER_PORT"] = "29611";
  CHECK(rank_placement(with_job, RankFlags{})->master_port == 29611);

  // torchrun's names win over Slurm's, and flags over both.
  Env both = slurm;
  both.insert({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "10.1.0.1"}, {"MASTER_PORT", "29600"}});
  auto torchrun = rank_placement(both, RankFlags{});
  CHECK(torchrun->rank == 0);
  CHECK(torchrun->world_size == 2);
  CHECK(torchrun->master_addr == "10.1.0.1");
  CHECK(torchrun->master_port == 29600);
  RankFlags flags;
  flags.rank = 1;
  flags.world_size = 2;
  flags.master_addr = "head";
  auto flagged = rank_placement(both, flags);
  CHECK(flagged->rank == 1);
  CHECK(flagged->master_addr == "head");
  CHECK_THAT(flagged->origin, Contains("rank from --rank"));
}

TEST_CASE("A missing, malformed or contradictory placement variable is named", "[core][cluster]") {
  const auto error = [](const Env& env) { return error_of<PlacementError>([&] { rank_placement(env, RankFlags{}); }); };
  CHECK_THAT(error({{"SLURM_PROCID", "0"}, {"SLURM_STEP_ID", "0"}}), Contains("SLURM_PROCID is set but no world size"));
  CHECK_THAT(error({{"WORLD_SIZE", "2"}}), Contains("WORLD_SIZE is set but no rank"));
  CHECK_THAT(error({{"RANK", "two"}, {"WORLD_SIZE", "2"}}), Contains("RANK=\"two\"") && Contains("non-negative integer"));
  CHECK_THAT(error({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}), Contains("RANK=2 is not below WORLD_SIZE=2"));
  CHECK_THAT(error({{"RANK", "0"}, {"WORLD_SIZE", "0"}}), Contains("WORLD_SIZE=0"));
  CHECK_THAT(error({{"RANK", "0"}, {"WORLD_SIZE", "2"}}), Contains("no rendezvous address") && Contains("MASTER_ADDR"));
  CHECK_THAT(error({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "70000"}}),
             Contains("MASTER_PORT=70000"));
  CHECK_THAT(error({{"SLURM_PROCID", "1"}, {"SLURM_STEP_ID", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}),
             Contains("SLURM_PROCID") && Contains("WORLD_SIZE") && Contains("one launcher"));
  CHECK_THAT(error({{"SLURM_PROCID", "0"}, {"SLURM_STEP_NUM_TASKS", "2"}, {"SLURM_STEP_NODELIST", "n[1-"}}),
             Contains("\"n[1-\""));
  // One rank needs no rendezvous host.
  const auto single = rank_placement(Env{{"RANK", "0"}, {"WORLD_SIZE", "1"}}, RankFlags{});
  CHECK(single->master_addr == "127.0.0.1");
}

TEST_CASE("process_environment reads this process's variables", "[core][cluster]") {
  ::setenv("RLX_PLACEMENT_TEST", "a=b", 1);
  CHECK(process_environment().at("RLX_PLACEMENT_TEST") == "a=b");
  ::unsetenv("RLX_PLACEMENT_TEST");
}
