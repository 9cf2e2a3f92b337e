// Dynamic batching (serve/inference_pool.h): every request gets, to the bit, the action it would
// get alone, whatever batch it lands in; recurrent sessions continue their own episodes; a full
// queue refuses.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <future>
#include <memory>
#include <thread>
#include <vector>

#include "models/policy.h"
#include "serve/inference_pool.h"
#include "serve_fixtures.h"

using rlx::test::TestPolicyKind;

namespace {

struct Served {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("rlx_pool_" + std::to_string(::getpid()));
  std::unique_ptr<rlx::PolicySlot> slot;
  std::string path;

  Served(TestPolicyKind kind, int threads) {
    path = rlx::test::write_policy(rlx::test::test_policy_file(kind), dir / "p.rlxp");
    rlx::PolicySlotOptions options;
    options.threads = threads;
    slot = std::make_unique<rlx::PolicySlot>("p", rlx::classify_model_source(path), nullptr, options);
  }
  ~Served() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
};

// An ActRequest for one observation whose answer lands in `promise`.
std::unique_ptr<rlx::ActRequest> request_for(const Served& served, const std::vector<float>& observation,
                                             std::promise<rlx::ActReply>& promise, bool deterministic = true) {
  auto request = std::make_unique<rlx::ActRequest>();
  request->model = served.slot->model();
  request->rows = 1;
  request->floats = observation;
  request->deterministic = deterministic;
  request->received = std::chrono::steady_clock::now();
  request->done = [&promise](rlx::ActReply&& reply) { promise.set_value(std::move(reply)); };
  return request;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

bool same_bits(const rlx::PolicyAction& a, const rlx::PolicyAction& b) {
  return a.index == b.index && a.indices == b.indices && same_bits(a.values, b.values) && same_bits(a.state, b.state);
}

}  // namespace

TEST_CASE("Batched answers equal what each observation gets alone bit for bit", "[serve][batching]") {
  for (const TestPolicyKind kind : {TestPolicyKind::kDiscrete, TestPolicyKind::kBox}) {
    Served served(kind, 2);
    const auto observations = rlx::test::test_observations(200);
    rlx::Policy alone(served.path);
    std::vector<rlx::PolicyAction> expected;
    for (const auto& observation : observations) expected.push_back(alone.act(observation));

    // One act_batch of all of them.
    rlx::Policy batched(served.path);
    std::vector<rlx::PolicyObservation> rows(observations.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      rows[i].floats = observations[i].data();
      rows[i].float_count = observations[i].size();
    }
    const std::vector<rlx::PolicyAction> together = batched.act_batch(rows, {}, true);
    for (size_t i = 0; i < rows.size(); ++i) REQUIRE(same_bits(together[i], expected[i]));

    // Through the pool: 200 requests submitted at once, batched as they come (up to 64 rows,
    // waiting up to 2 ms), over 2 threads.
    rlx::ServeMetrics metrics(1);
    rlx::BatchingOptions options;
    options.threads = 2;
    options.max_batch_rows = 64;
    options.max_wait = std::chrono::microseconds(2000);
    rlx::InferencePool pool({served.slot.get()}, options, metrics);
    std::vector<std::promise<rlx::ActReply>> promises(observations.size());
    for (size_t i = 0; i < observations.size(); ++i) {
      auto request = request_for(served, observations[i], promises[i]);
      REQUIRE(pool.submit(request));
    }
    for (size_t i = 0; i < observations.size(); ++i) {
      const rlx::ActReply reply = promises[i].get_future().get();
      REQUIRE(reply.status == 200);
      REQUIRE(reply.actions.size() == 1);
      INFO("request " << i);
      REQUIRE(same_bits(reply.actions[0], expected[i]));
    }
    REQUIRE(pool.wait_idle(std::chrono::seconds(5)));
    CHECK(metrics.prometheus({{"p", 1, 0, 0}}, 0, false).find("rlx_serve_batch_rows_bucket{le=\"1\"} 200") == std::string::npos);
  }
}

TEST_CASE("Recurrent sessions each continue their own episode when their steps are batched together", "[serve][batching]") {
  Served served(TestPolicyKind::kRecurrent, 1);
  rlx::ServeMetrics metrics(1);
  rlx::BatchingOptions options;
  options.max_wait = std::chrono::microseconds(1000);
  rlx::InferencePool pool({served.slot.get()}, options, metrics);
  constexpr int kSessions = 5;
  constexpr int kSteps = 12;
  const auto observations = rlx::test::test_observations(kSessions * kSteps, 5);
  rlx::Policy alone(served.path);
  for (int step = 0; step < kSteps; ++step) {
    std::vector<std::promise<rlx::ActReply>> promises(kSessions);
    for (int s = 0; s < kSessions; ++s) {
      auto request = request_for(served, observations[static_cast<size_t>(s * kSteps + step)], promises[static_cast<size_t>(s)]);
      request->session = "episode-" + std::to_string(s);
      request->episode_start = step == 0;
      REQUIRE(pool.submit(request));
    }
    std::vector<rlx::ActReply> replies;
    for (auto& promise : promises) replies.push_back(promise.get_future().get());
    for (int s = 0; s < kSessions; ++s) REQUIRE(replies[static_cast<size_t>(s)].status == 200);
  }
  // Each session's last step against the same episode played alone.
  for (int s = 0; s < kSessions; ++s) {
    std::vector<float> state = alone.initial_state();
    rlx::PolicyAction last;
    for (int step = 0; step < kSteps; ++step) {
      last = alone.act(observations[static_cast<size_t>(s * kSteps + step)], state);
      state = last.state;
    }
    std::promise<rlx::ActReply> promise;
    auto request = request_for(served, observations[static_cast<size_t>(s * kSteps)], promise);
    request->session = "episode-" + std::to_string(s);
    REQUIRE(pool.submit(request));
    const rlx::ActReply next = promise.get_future().get();
    const rlx::PolicyAction expected = alone.act(observations[static_cast<size_t>(s * kSteps)], state);
    INFO("session " << s);
    REQUIRE(same_bits(next.actions.at(0), expected));
  }
  CHECK(served.slot->sessions().size() == kSessions);
}

TEST_CASE("A full queue refuses the next request and the requests queued are still answered", "[serve][batching]") {
  Served served(TestPolicyKind::kDiscrete, 1);
  rlx::ServeMetrics metrics(1);
  rlx::BatchingOptions options;
  options.max_queue = 2;
  options.max_batch_rows = 8;
  options.max_wait = std::chrono::microseconds(300000);  // the first batch waits 0.3 s to fill
  rlx::InferencePool pool({served.slot.get()}, options, metrics);
  const auto observations = rlx::test::test_observations(3);
  std::vector<std::promise<rlx::ActReply>> promises(3);
  auto first = request_for(served, observations[0], promises[0]);
  auto second = request_for(served, observations[1], promises[1]);
  auto third = request_for(served, observations[2], promises[2]);
  REQUIRE(pool.submit(first));
  REQUIRE(pool.submit(second));
  CHECK_FALSE(pool.submit(third));
  CHECK(third != nullptr);  // refused untouched: the caller answers it
  CHECK(promises[0].get_future().get().status == 200);
  CHECK(promises[1].get_future().get().status == 200);
}
