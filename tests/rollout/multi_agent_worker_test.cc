// A multi-agent rollout worker against a learner the test plays by hand on an inproc ROUTER:
// what it announces, when it starts sampling, what it sends, which weights it refuses, and how
// a broken env ends it.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <future>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "envs/registry.h"
#include "rollout/rollout_worker.h"
#include "tests/rollout/multi_agent_worker_fixture.h"
#include "transport/decode.h"
#include "transport/encode.h"
#include "transport/sockets.h"

namespace rlx {
namespace {

using namespace std::chrono_literals;
using test::kFrozenPolicy;
using test::kScriptedPolicy;
using test::kTrainedPolicy;

// A RolloutWorker on its own thread. It never re-joins within a test: the fake learner sends no
// heartbeats, and its silences are short.
struct WorkerThread {
  WorkerThread(zmq::context_t& context, const std::string& endpoint) {
    RolloutWorkerOptions options;
    options.endpoint = endpoint;
    options.worker_id = 41;
    options.heartbeat_interval = 100ms;
    options.rejoin_after = 10s;
    options.learner_timeout = 20s;
    worker = std::make_unique<RolloutWorker>(context, options);
    exit = std::async(std::launch::async, [this] { return worker->run(); });
  }
  std::unique_ptr<RolloutWorker> worker;
  std::future<WorkerExit> exit;
};

// The learner, played by the test: it reads the worker's messages (heartbeats aside) and sends
// it whatever the test says.
struct FakeLearner {
  explicit FakeLearner(zmq::context_t& context) : socket(make_socket(context, zmq::socket_type::router)) {
    static std::atomic<int> count{0};
    endpoint = bind_endpoint(socket, "inproc://rlx-multi-agent-worker-test-" + std::to_string(count++));
  }
  // The worker's next message other than a heartbeat; nullopt when none came within `limit`.
  std::optional<Message> next(std::chrono::milliseconds limit = 5000ms) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      std::optional<std::vector<zmq::message_t>> frames = recv_frames(socket, 50ms);
      if (!frames) continue;
      identity = take_identity(*frames);
      DecodeResult result = decode_message(*frames);
      REQUIRE(result.ok());
      if (!std::holds_alternative<Heartbeat>(*result.message)) return std::move(result.message);
    }
    return std::nullopt;
  }
  // The worker's next message, which must be a T.
  template <typename T>
  T expect() {
    std::optional<Message> message = next();
    REQUIRE(message);
    INFO("message kind " << message->index());
    REQUIRE(std::holds_alternative<T>(*message));
    return std::get<T>(std::move(*message));
  }
  void send(std::vector<zmq::message_t> frames) {
    prepend_identity(frames, identity);
    REQUIRE(send_frames(socket, frames, 1000ms));
  }
  void welcome(const WorkerSetup& setup) { send(encode_welcome(Welcome{setup.to_json()}, 0, ++sequence)); }
  void weights(int32_t policy, uint64_t version) { send(encode_weights(test::agent_weights(policy, version), 0, ++sequence)); }
  void credits(int64_t count) { send(encode_credit_grant(CreditGrant{count}, 0, ++sequence)); }
  void stop() { send(encode_stop(0, ++sequence)); }

  zmq::socket_t socket;
  std::string endpoint;
  std::string identity;
  uint64_t sequence = 0;
};

// Joins the worker with `setup`; returns its hello.
Hello join(FakeLearner& learner, const WorkerSetup& setup) {
  learner.expect<Join>();
  learner.welcome(setup);
  return learner.expect<Hello>();
}

}  // namespace

TEST_CASE("A multi-agent worker sends its trained policy's lanes once every model policy has weights",
          "[rollout][multi_agent][distributed]") {
  constexpr int kEnvs = 2, kSteps = 8, kAgents = 4, kPolicies = 3, kFragments = 40;
  zmq::context_t context(1);
  FakeLearner learner(context);
  WorkerThread thread(context, learner.endpoint);
  const Hello hello = join(learner, test::multi_agent_setup(kEnvs, kSteps));
  CHECK(hello.env_id == test::kMultiAgentCartPole);
  CHECK(hello.num_envs == kEnvs * kAgents);  // lanes: the credits count fragments of any of them
  CHECK(hello.obs_size == 4);
  CHECK(hello.num_actions == 2);

  learner.credits(kFragments);
  learner.weights(kTrainedPolicy, 5);
  // The frozen policy has no weights yet: nothing is sampled, so nothing but heartbeats comes.
  std::optional<Message> early = learner.next(400ms);
  CHECK_FALSE(early.has_value());

  learner.weights(kFrozenPolicy, 9);
  std::set<int32_t> lanes;
  int fragments = 0;
  int64_t env_steps = 0;
  std::vector<EpisodeStats> reports;
  while (fragments < kFragments) {
    std::optional<Message> message = learner.next();
    REQUIRE(message);
    if (auto* report = std::get_if<EpisodeStats>(&*message)) {
      reports.push_back(*report);
      continue;
    }
    REQUIRE(std::holds_alternative<SampleBatch>(*message));
    const SampleBatch& fragment = std::get<SampleBatch>(*message);
    ++fragments;
    CHECK(fragment.policy_index == kTrainedPolicy);
    CHECK(fragment.policy_version == 5);
    CHECK(fragment.num_envs == 1);
    CHECK(fragment.num_steps == kSteps);
    CHECK(fragment.worker_id == 41);
    CHECK_NOTHROW(fragment.validate());
    // The collector numbers a lane (env * agents + agent) * policies + policy: the trained
    // policy's, of agent_0 or agent_1 of one of the envs.
    REQUIRE(fragment.lane >= 0);
    CHECK(fragment.lane < kEnvs * kAgents * kPolicies);
    CHECK(fragment.lane % kPolicies == kTrainedPolicy);
    CHECK((fragment.lane / kPolicies) % kAgents < 2);
    lanes.insert(fragment.lane);
  }
  CHECK(lanes.size() == 4);  // two agents of two envs
  // The report after the last fragment follows it on the same connection.
  while (std::optional<Message> message = learner.next(300ms)) {
    REQUIRE(std::holds_alternative<EpisodeStats>(*message));
    reports.push_back(std::get<EpisodeStats>(*message));
  }
  learner.stop();
  CHECK(thread.exit.get() == WorkerExit::kStopped);

  REQUIRE_FALSE(reports.empty());
  size_t episodes = 0;
  for (const EpisodeStats& report : reports) {
    CHECK(report.num_agents == kAgents);
    CHECK(report.env_steps > 0);
    CHECK(report.env_steps <= kSteps * kEnvs * kAgents);  // as much as the learner takes in one report
    CHECK(report.dropped == 0);
    env_steps += report.env_steps;
    REQUIRE(report.agent_returns.size() == report.returns.size() * kAgents);
    REQUIRE(report.agent_policies.size() == report.returns.size() * kAgents);
    for (size_t e = 0; e < report.returns.size(); ++e, ++episodes) {
      const std::vector<int32_t> policies(report.agent_policies.begin() + static_cast<std::ptrdiff_t>(e * kAgents),
                                          report.agent_policies.begin() + static_cast<std::ptrdiff_t>((e + 1) * kAgents));
      CHECK(policies == std::vector<int32_t>{kTrainedPolicy, kTrainedPolicy, kFrozenPolicy, kScriptedPolicy});
      double sum = 0;
      for (size_t a = 0; a < kAgents; ++a) {
        const double agent_return = report.agent_returns[e * kAgents + a];
        CHECK(agent_return >= 1.0);  // a CartPole pays 1 a step
        sum += agent_return;
      }
      CHECK(report.returns[e] == Approx(sum));
      CHECK(report.lengths[e] >= 1);
    }
  }
  CHECK(episodes > 0);
  // The trained policy's two agents per env take at most two transitions per env step, and every
  // step behind the fragments sent was reported.
  CHECK(env_steps * 2 >= int64_t{kFragments} * kSteps);
  const RolloutWorkerStats& stats = thread.worker->stats();
  CHECK(stats.fragments_sent == kFragments);
  CHECK(stats.env_steps_sent == uint64_t{kFragments} * kSteps);
  CHECK(stats.weights_received == 2);
  CHECK(stats.messages_rejected == 0);
}

TEST_CASE("A multi-agent worker rejects and counts weights for a scripted policy or none it has", "[rollout][multi_agent]") {
  zmq::context_t context(1);
  FakeLearner learner(context);
  WorkerThread thread(context, learner.endpoint);
  join(learner, test::multi_agent_setup());
  learner.credits(1);
  learner.weights(kScriptedPolicy, 1);  // a scripted player has no model
  learner.weights(7, 1);                // there are three policies
  learner.weights(-1, 1);               // every Weights of a multi-agent run names its policy
  learner.weights(kTrainedPolicy, 2);
  learner.weights(kFrozenPolicy, 2);
  const SampleBatch fragment = learner.expect<SampleBatch>();
  CHECK(fragment.policy_index == kTrainedPolicy);
  CHECK(fragment.policy_version == 2);
  learner.stop();
  CHECK(thread.exit.get() == WorkerExit::kStopped);
  CHECK(thread.worker->stats().messages_rejected == 3);
  CHECK(thread.worker->stats().weights_received == 2);
}

TEST_CASE("A multi-agent worker welcomed again with the same setup keeps sampling", "[rollout][multi_agent]") {
  zmq::context_t context(1);
  FakeLearner learner(context);
  WorkerThread thread(context, learner.endpoint);
  const WorkerSetup setup = test::multi_agent_setup();
  join(learner, setup);
  learner.weights(kTrainedPolicy, 1);
  learner.weights(kFrozenPolicy, 1);
  learner.credits(1);
  CHECK(learner.expect<SampleBatch>().policy_index == kTrainedPolicy);
  // A second welcome with the same setup (the learner restarted) keeps the envs and the weights:
  // a credit alone gets a fragment.
  learner.welcome(setup);
  std::optional<Message> answer = learner.next();
  while (answer && std::holds_alternative<EpisodeStats>(*answer)) answer = learner.next();  // the fragment's report
  REQUIRE(answer);
  REQUIRE(std::holds_alternative<Hello>(*answer));
  CHECK(std::get<Hello>(*answer).num_envs == 8);
  learner.credits(1);
  std::optional<Message> next = learner.next();
  while (next && std::holds_alternative<EpisodeStats>(*next)) next = learner.next();
  REQUIRE(next);
  CHECK(std::holds_alternative<SampleBatch>(*next));
  learner.stop();
  CHECK(thread.exit.get() == WorkerExit::kStopped);
  CHECK(thread.worker->stats().welcomes == 2);
}

namespace {

// Two agents that both act every step; at the third step agent "b" is paid NaN.
class NanAtThirdStep final : public MultiAgentEnv {
 public:
  static constexpr const char* kId = "NanAtThirdStepMultiAgent-test";
  NanAtThirdStep() : MultiAgentEnv(spec()) {}
  static MultiAgentEnvSpec spec() {
    MultiAgentEnvSpec spec;
    spec.id = kId;
    for (const char* id : {"a", "b"}) spec.agents.push_back({id, Space::box({4}, -10, 10), Space::discrete(2), false});
    return spec;
  }

 protected:
  void reset_episode(Rng&, MultiAgentOutput& out) override { observe_both(out); }
  void step_episode(const std::vector<AgentAction>&, MultiAgentOutput& out) override {
    out.add_reward(0, 1.0);
    out.add_reward(1, elapsed_steps() + 1 == 3 ? std::numeric_limits<double>::quiet_NaN() : 1.0);
    observe_both(out);
  }

 private:
  static void observe_both(MultiAgentOutput& out) {
    for (int agent = 0; agent < 2; ++agent) {
      ObsSpan obs = out.observe(agent);
      for (int i = 0; i < 4; ++i) obs[i] = 0.0f;
    }
  }
};

}  // namespace

TEST_CASE("A multi-agent env's bad output ends the worker with an env error naming the env and the agent",
          "[rollout][multi_agent]") {
  if (!global_env_registry().contains(NanAtThirdStep::kId)) {
    global_env_registry().add_multi_agent(NanAtThirdStep::spec(), [] { return std::make_unique<NanAtThirdStep>(); });
  }
  WorkerSetup setup = test::policy_part(1, 8);
  setup.env_id = NanAtThirdStep::kId;
  auto multi = std::make_shared<MultiAgentWorkerSetup>();
  multi->setup = nlohmann::json::object();  // one shared policy, default_policy
  multi->policies = {setup};
  setup.multi_agent = multi;

  zmq::context_t context(1);
  FakeLearner learner(context);
  WorkerThread thread(context, learner.endpoint);
  const Hello hello = join(learner, setup);
  CHECK(hello.num_envs == 2);
  learner.weights(0, 1);
  learner.credits(1);
  // rlx worker exits with status 2 for an EnvContractError, as for a single-agent env's.
  try {
    thread.exit.get();
    FAIL("the worker ran on past a NaN reward");
  } catch (const EnvOutputError& error) {
    CHECK_THAT(error.what(), Catch::Contains(NanAtThirdStep::kId) && Catch::Contains("agent 'b'") && Catch::Contains("reward"));
    CHECK(dynamic_cast<const EnvContractError*>(&error) != nullptr);
  }
}

}  // namespace rlx
