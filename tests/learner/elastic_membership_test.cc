// The elastic group's membership keys (tickets, generations, survivors' reports, heartbeats) and
// members that form, lose and re-form generations over one c10d HashStore, each rank a thread.
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include <catch2/catch.hpp>  // after c10d's headers, whose logging defines a CHECK of its own

#include <future>
#include <thread>

#include "learner/elastic_membership.h"
#include "learner/learner_group_member.h"

using rlx::ElasticMembership;
using rlx::GenerationPlan;
using rlx::LearnerGroupMember;

namespace {

constexpr std::chrono::milliseconds kTimeout{20000};

std::unique_ptr<LearnerGroupMember> elastic_member(const c10::intrusive_ptr<c10d::Store>& store) {
  return std::make_unique<LearnerGroupMember>(store, torch::kCPU, kTimeout, rlx::GlooEndpoint{}, std::nullopt);
}

// The sum over the member's generation of each rank's (rank + 1).
double rank_sum(LearnerGroupMember& member) {
  std::vector<double> value = {static_cast<double>(member.rank() + 1)};
  rlx::allreduce_host(member.host(), value);
  return value[0];
}

}  // namespace

TEST_CASE("Elastic membership keys hold tickets and plans and survivors and the end of the run", "[learner][elastic]") {
  auto store = c10::make_intrusive<c10d::HashStore>();
  ElasticMembership membership(store);
  CHECK(membership.tickets_taken() == 0);
  CHECK(membership.latest_generation() == 0);
  CHECK(membership.take_ticket({"node2", 41, 1}) == 1);
  CHECK(membership.take_ticket({"node3", 42, -1}) == 2);
  CHECK(membership.tickets_taken() == 2);
  const std::optional<rlx::TicketHolder> holder = membership.holder(1);
  REQUIRE(holder.has_value());
  CHECK(holder->describe() == "node2:41");
  CHECK(holder->rank_hint == 1);
  CHECK_FALSE(membership.holder(3).has_value());

  CHECK_FALSE(membership.plan(1).has_value());
  membership.publish(GenerationPlan{1, {0, 2, 1}});
  CHECK(membership.latest_generation() == 1);
  const std::optional<GenerationPlan> plan = membership.plan(1);
  REQUIRE(plan.has_value());
  CHECK(plan->size() == 3);
  CHECK(plan->rank_of(2) == 1);
  CHECK(plan->rank_of(1) == 2);
  CHECK(plan->rank_of(7) == -1);

  membership.report_lost(1, 2, 5);
  CHECK(membership.lost_report(1, 2) == std::optional<int64_t>(5));
  CHECK_FALSE(membership.lost_report(1, 1).has_value());

  // What another process wrote is checked before it is used.
  store->set("rlx/elastic/generation/2", std::vector<uint8_t>{'{', '}'});
  CHECK_THROWS_WITH(membership.plan(2), Catch::Contains("key rlx/elastic/generation/2 is not a generation plan"));
  const std::string led_by_other = R"({"generation": 3, "tickets": [4, 0]})";
  store->set("rlx/elastic/generation/3", std::vector<uint8_t>(led_by_other.begin(), led_by_other.end()));
  CHECK_THROWS_WITH(membership.plan(3), Catch::Contains("expected generation 3 led by ticket 0"));

  CHECK_FALSE(membership.finished());
  membership.mark_finished();
  CHECK(membership.finished());
}

TEST_CASE("A heartbeat watch counts a ticket lost once its beats stop for the stale time", "[learner][elastic]") {
  auto store = c10::make_intrusive<c10d::HashStore>();
  ElasticMembership membership(store);
  rlx::HeartbeatWatch watch(std::chrono::milliseconds(150));
  CHECK(watch.alive(membership, 1));  // first seen: alive for the stale time
  CHECK_FALSE(watch.seen_beating(1));  // but not yet seen to beat: no rank 0 takes it in
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK_FALSE(watch.alive(membership, 1));
  membership.beat(1);
  CHECK(watch.alive(membership, 1));
  CHECK(watch.seen_beating(1));
  for (int i = 0; i < 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    membership.beat(1);
    CHECK(watch.alive(membership, 1));
  }
}

TEST_CASE("Elastic members form a generation and re-form without a lost rank while a left-out rank waits until the run ends",
          "[learner][elastic]") {
  auto store = c10::make_intrusive<c10d::HashStore>();
  auto driver = elastic_member(store);
  std::vector<std::unique_ptr<LearnerGroupMember>> followers;
  followers.push_back(elastic_member(store));
  followers.push_back(elastic_member(store));

  // Generation 1: the followers take tickets 1 and 2 and wait; rank 0 lists them in reverse.
  ElasticMembership& membership = driver->membership();
  std::vector<std::future<double>> sums;
  for (size_t i = 0; i < followers.size(); ++i) {
    sums.push_back(std::async(std::launch::async, [&, i] {  // (Catch's assertions stay on this thread)
      return followers[i]->join_generation(static_cast<int>(i) + 1) ? rank_sum(*followers[i]) : -1.0;
    }));
    // One at a time, so that follower i holds ticket i + 1.
    while (membership.tickets_taken() < static_cast<int64_t>(i) + 1) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  GenerationPlan first{1, {0, 2, 1}};
  membership.publish(first);
  driver->form(first);
  CHECK(driver->generation() == 1);
  CHECK(rank_sum(*driver) == 6.0);
  for (auto& sum : sums) CHECK(sum.get() == 6.0);
  CHECK(followers[0]->ticket() == 1);
  CHECK(followers[0]->rank() == 2);
  CHECK(followers[1]->rank() == 1);

  // Generation 2 leaves ticket 2 (follower 1) out: the others regroup and sum over 2 ranks; the
  // one left out takes a new ticket, reports itself a survivor of generation 1, and waits.
  GenerationPlan second{2, {0, 1}};
  membership.publish(second);
  auto kept = std::async(std::launch::async, [&] { return followers[0]->follow_regroup(2) ? rank_sum(*followers[0]) : -1.0; });
  auto left_out = std::async(std::launch::async, [&] { return followers[1]->follow_regroup(2); });
  driver->form(second);
  CHECK(rank_sum(*driver) == 3.0);
  CHECK(kept.get() == 3.0);
  CHECK(followers[0]->rank() == 1);
  CHECK(driver->size() == 2);
  while (membership.tickets_taken() < 3) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(membership.lost_report(1, 2) == std::optional<int64_t>(3));
  CHECK(left_out.wait_for(std::chrono::milliseconds(100)) == std::future_status::timeout);
  membership.mark_finished();
  CHECK_FALSE(left_out.get());

  // A call on an abandoned generation fails as a failed collective does.
  driver->abandon();
  std::vector<double> value = {1.0};
  CHECK_THROWS_AS(rlx::allreduce_host(driver->host(), value), rlx::CommunicatorError);
}
