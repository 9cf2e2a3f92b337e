// The parameter server against client threads: every task's gradient applied once, each at the
// staleness it had; SSP's bound holds a fast rank back; without it a straggler does few tasks;
// malformed or misplaced messages are refused and counted.
#include <future>
#include <thread>

#include "learner/communicator.h"
#include "learner/parameter_server.h"

#include <catch2/catch.hpp>  // after LibTorch's headers, whose logging defines a CHECK of its own

using rlx::ParameterClient;
using rlx::ParameterServer;
using rlx::PsReply;

namespace {

constexpr std::chrono::milliseconds kTimeout{10000};

// A master of one parameter that each gradient moves by -gradient[0] (SGD of rate 1).
struct Master {
  std::vector<float> params{0.0f};
  std::vector<std::vector<float>> applied;
};

ParameterServer make_server(zmq::context_t& context, Master& master, int ranks, int64_t max_staleness,
                            std::chrono::milliseconds timeout = kTimeout) {
  rlx::ParameterServerOptions options;
  options.ranks = ranks;
  options.max_staleness = max_staleness;
  options.num_params = 1;
  options.num_statistics = 1;
  options.timeout = timeout;
  return ParameterServer(
      context, options,
      [&master](const std::vector<float>& gradient) {
        master.applied.push_back(gradient);
        master.params[0] -= gradient[0];
      },
      [&master] { return master.params; });
}

// A rank's loop: each task's gradient is 1 + its task number / 1000, after `work` of compute.
// Returns the tasks it did, in order.
std::vector<int64_t> run_rank(zmq::context_t& context, const std::string& endpoint, int rank, int64_t iteration,
                              std::chrono::milliseconds work) {
  ParameterClient client(context, endpoint, rank, kTimeout, 16);
  std::vector<int64_t> done;
  for (std::optional<PsReply> task = client.pull(iteration); task;) {
    std::this_thread::sleep_for(work);
    done.push_back(task->task);
    task = client.push(*task, {1.0f + static_cast<float>(task->task) / 1000.0f}, {1.0f});
  }
  return done;
}

}  // namespace

TEST_CASE("Parameter-server messages round trip and a malformed one is refused by name", "[learner][parameter_server]") {
  rlx::PsRequest request;
  request.kind = rlx::PsRequest::Kind::kPush;
  request.rank = 2;
  request.iteration = 7;
  request.task = 11;
  request.version = 40;
  request.gradient = {0.5f, -1.5f};
  request.statistics = {3.0f};
  const rlx::PsRequest back = rlx::decode_ps_request(rlx::encode_ps_request(request), 4);
  CHECK(back.rank == 2);
  CHECK(back.task == 11);
  CHECK(back.version == 40);
  CHECK(back.gradient == request.gradient);
  CHECK(back.statistics == request.statistics);
  CHECK_THROWS_WITH(rlx::decode_ps_request(rlx::encode_ps_request(request), 1), Catch::Contains("a vector of 2 elements, at most 1"));
  CHECK_THROWS_WITH(rlx::decode_ps_request("RLX", 4), Catch::Contains("truncated"));
  std::string bad_kind = rlx::encode_ps_request(request);
  bad_kind[6] = 9;
  CHECK_THROWS_WITH(rlx::decode_ps_request(bad_kind, 4), Catch::Contains("kind 9, expected 1 pull or 2 push"));
  CHECK_THROWS_WITH(rlx::decode_ps_reply(rlx::encode_ps_request(request), 4), Catch::Contains("parameter-server reply"));
}

TEST_CASE("A parameter server applies each task once and counts its staleness", "[learner][parameter_server]") {
  zmq::context_t context;
  Master master;
  ParameterServer server = make_server(context, master, 3, 1000);
  for (int64_t iteration = 1; iteration <= 2; ++iteration) {
    std::vector<std::future<std::vector<int64_t>>> ranks;
    for (int rank = 0; rank < 3; ++rank) {
      ranks.push_back(std::async(std::launch::async, run_rank, std::ref(context), server.endpoint(), rank, iteration,
                                 std::chrono::milliseconds(1)));
    }
    const rlx::ParameterServerIteration result = server.serve(iteration, 60);
    std::vector<int64_t> tasks;
    for (auto& rank : ranks) {
      const std::vector<int64_t> done = rank.get();
      tasks.insert(tasks.end(), done.begin(), done.end());
    }
    std::sort(tasks.begin(), tasks.end());
    CHECK(tasks.size() == 60);
    CHECK(std::adjacent_find(tasks.begin(), tasks.end()) == tasks.end());  // none twice
    CHECK(result.applied == 60);
    CHECK(result.tasks_per_rank[0] + result.tasks_per_rank[1] + result.tasks_per_rank[2] == 60);
    CHECK(result.statistics.at(0) == 60.0);
    CHECK(result.refused == 0);
    // Three ranks in flight: gradients arrive after the others' (staleness 1, 2 or more).
    CHECK(result.staleness_max >= 1);
    CHECK(result.staleness_max < 60);
    CHECK(result.staleness_mean > 0.0);
  }
  CHECK(server.version() == 120);
  CHECK(master.applied.size() == 120);
  double moved = 0.0;
  for (int64_t task = 0; task < 60; ++task) moved += 2.0 * (1.0 + static_cast<double>(task) / 1000.0);
  CHECK(master.params[0] == Approx(-moved).epsilon(1e-5));
}

TEST_CASE("Without a staleness bound a straggler does few tasks and with max_staleness 0 the ranks keep in step",
          "[learner][parameter_server]") {
  for (const int64_t bound : {int64_t{1000}, int64_t{0}}) {
    INFO("max_staleness " << bound);
    zmq::context_t context;
    Master master;
    ParameterServer server = make_server(context, master, 3, bound);
    std::vector<std::future<std::vector<int64_t>>> ranks;
    for (int rank = 0; rank < 3; ++rank) {
      const auto work = std::chrono::milliseconds(rank == 2 ? 30 : 2);  // rank 2 is 15x slower
      ranks.push_back(std::async(std::launch::async, run_rank, std::ref(context), server.endpoint(), rank, 1, work));
    }
    const rlx::ParameterServerIteration result = server.serve(1, 60);
    for (auto& rank : ranks) rank.get();
    INFO("tasks per rank " << result.tasks_per_rank[0] << " " << result.tasks_per_rank[1] << " " << result.tasks_per_rank[2]);
    CHECK(result.applied == 60);
    if (bound == 0) {
      // Each rank waits for the slowest: they share the tasks evenly and are held back often.
      CHECK(result.tasks_per_rank[2] >= 19);
      CHECK(result.held_back > 0);
    } else {
      CHECK(result.tasks_per_rank[2] <= 10);
      CHECK(result.held_back == 0);
    }
  }
}

TEST_CASE("A parameter server refuses and counts a push of a task that is not the rank's", "[learner][parameter_server]") {
  zmq::context_t context;
  Master master;
  ParameterServer server = make_server(context, master, 1, 4);
  auto rank = std::async(std::launch::async, [&] {
    ParameterClient intruder(context, server.endpoint(), 0, std::chrono::milliseconds(300), 16);
    PsReply forged;
    forged.iteration = 1;
    forged.task = 5;  // never handed out
    bool timed_out = false;
    try {
      intruder.push(forged, {1.0f}, {1.0f});
    } catch (const rlx::CommunicatorError&) {
      timed_out = true;  // refused: no answer
    }
    return timed_out ? run_rank(context, server.endpoint(), 0, 1, std::chrono::milliseconds(0)).size() : size_t{0};
  });
  const rlx::ParameterServerIteration result = server.serve(1, 5);
  CHECK(rank.get() == 5);
  CHECK(result.refused == 1);
  CHECK(result.applied == 5);
}

TEST_CASE("A parameter server that hears nothing names the ranks it waits on and what each holds", "[learner][parameter_server]") {
  zmq::context_t context;
  Master master;
  ParameterServer server = make_server(context, master, 2, 4, std::chrono::milliseconds(400));
  auto silent = std::async(std::launch::async, [&] {  // rank 1 takes a task and goes quiet; rank 0 never asks
    ParameterClient client(context, server.endpoint(), 1, kTimeout, 16);
    return client.pull(1).has_value();
  });
  try {
    server.serve(1, 5);
    FAIL("serve returned although no rank pushed anything");
  } catch (const rlx::CommunicatorError& e) {
    CHECK_THAT(e.what(), Catch::Contains("0 of 5 gradients applied; waiting on rank 0 (no request this iteration), "
                                         "rank 1 (holds 1 task(s))"));
  }
  CHECK(silent.get());
}
