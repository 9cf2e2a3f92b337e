// Scheduler decisions on hand-made trial states: PBT's exploit (bottom quantile copies a top
// trial that has a checkpoint) and explore, synchronous barriers, ASHA's rungs.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>

#include "tune/scheduler.h"

namespace rlx {
namespace {

Trial paused_trial(const std::string& name, double metric, int64_t timesteps, bool with_checkpoint = true) {
  Trial t;
  t.name = name;
  t.status = TrialStatus::kPaused;
  t.awaiting_decision = true;
  t.timesteps = timesteps;
  t.metric = metric;
  if (with_checkpoint) {
    t.checkpoint = "/runs/x/" + name + "/checkpoints/checkpoint_000004";
    t.checkpoint_metric = metric;
  }
  t.params = {{"lr", 0.001}};
  return t;
}

TuneSpec pbt_spec(bool synch) {
  TuneSpec spec;
  spec.scheduler = SchedulerKind::kPbt;
  spec.pbt.time_attr = "timesteps_total";
  spec.pbt.perturbation_interval = 1000;
  spec.pbt.synch = synch;
  Mutation lr;
  Domain domain;
  domain.kind = DomainKind::kLogUniform;
  domain.type = ConfigType::kFloat;
  domain.low = 1e-4;
  domain.high = 1e-2;
  lr.domain = domain;
  spec.pbt.hyperparam_mutations["lr"] = lr;
  return spec;
}

}  // namespace

TEST_CASE("PBT: the bottom quantile exploits the top quantile, the rest continue", "[tune]") {
  auto scheduler = make_scheduler(pbt_spec(false));
  std::vector<Trial> trials;
  for (int i = 0; i < 8; ++i) trials.push_back(paused_trial("t" + std::to_string(i), 10.0 * i, 1000));
  const auto decisions = scheduler->decide(trials);
  REQUIRE(decisions.size() == 8);
  for (const Decision& d : decisions) {
    INFO(trials[d.trial].name);
    if (d.trial < 2) {  // ceil(8 * 0.25) = 2 worst
      REQUIRE(d.action == Decision::Action::kExploit);
      CHECK(*d.donor >= 6);  // one of the 2 best
    } else {
      CHECK(d.action == Decision::Action::kContinue);
    }
  }
}

TEST_CASE("PBT: min mode ranks the other way round", "[tune]") {
  TuneSpec spec = pbt_spec(false);
  spec.mode = "min";
  auto scheduler = make_scheduler(spec);
  std::vector<Trial> trials;
  for (int i = 0; i < 4; ++i) trials.push_back(paused_trial("t" + std::to_string(i), 10.0 * i, 1000));
  for (const Decision& d : scheduler->decide(trials)) {
    if (d.trial == 3) {
      REQUIRE(d.action == Decision::Action::kExploit);
      CHECK(*d.donor == 0);
    } else {
      CHECK(d.action == Decision::Action::kContinue);
    }
  }
}

TEST_CASE("PBT never picks a donor without a checkpoint", "[tune]") {
  auto scheduler = make_scheduler(pbt_spec(false));
  std::vector<Trial> trials;
  for (int i = 0; i < 4; ++i) trials.push_back(paused_trial("t" + std::to_string(i), 10.0 * i, 1000));
  // The two best have reported great metrics while running but never checkpointed.
  for (int i = 0; i < 2; ++i) {
    Trial t = paused_trial("fast" + std::to_string(i), 1000.0, 900, /*with_checkpoint=*/false);
    t.status = TrialStatus::kRunning;
    t.awaiting_decision = false;
    trials.push_back(t);
  }
  for (int round = 0; round < 20; ++round) {
    for (Trial& t : trials) t.decisions = round;
    for (const Decision& d : scheduler->decide(trials)) {
      if (d.action != Decision::Action::kExploit) continue;
      REQUIRE(trials[*d.donor].checkpoint.has_value());
      CHECK(*d.donor == 3);  // the best trial that has a checkpoint
    }
  }
}

TEST_CASE("PBT ranks donors by the metric at their checkpoint, not their latest result", "[tune]") {
  auto scheduler = make_scheduler(pbt_spec(false));
  std::vector<Trial> trials;
  for (int i = 0; i < 4; ++i) trials.push_back(paused_trial("t" + std::to_string(i), 10.0 * i, 1000));
  // t0 runs now and looks best, but its checkpoint holds the worst weights.
  trials[0].status = TrialStatus::kRunning;
  trials[0].awaiting_decision = false;
  trials[0].metric = 500;
  const auto decisions = scheduler->decide(trials);
  for (const Decision& d : decisions) {
    if (d.action == Decision::Action::kExploit) CHECK(*d.donor != 0);
  }
}

TEST_CASE("synchronous PBT decides only when every live trial reached the boundary", "[tune]") {
  auto scheduler = make_scheduler(pbt_spec(true));
  std::vector<Trial> trials;
  for (int i = 0; i < 4; ++i) trials.push_back(paused_trial("t" + std::to_string(i), 10.0 * i, 1000));
  trials[2].status = TrialStatus::kRunning;
  trials[2].awaiting_decision = false;
  CHECK(scheduler->decide(trials).empty());
  trials[2].status = TrialStatus::kTerminated;  // a finished trial does not hold the barrier
  const auto decisions = scheduler->decide(trials);
  CHECK(decisions.size() == 3);
}

TEST_CASE("PBT explore: distributions are multiplied by 0.8 or 1.2, lists move to a neighbour, ints stay ints", "[tune]") {
  PbtOptions options;
  options.resample_probability = 0.0;
  Mutation lr;
  Domain domain;
  domain.kind = DomainKind::kLogUniform;
  domain.type = ConfigType::kFloat;
  domain.low = 1e-4;
  domain.high = 1e-2;
  lr.domain = domain;
  options.hyperparam_mutations["lr"] = lr;
  Mutation epochs;
  epochs.values = {2, 4, 8, 16};
  options.hyperparam_mutations["num_epochs"] = epochs;
  Mutation minibatch;
  Domain ints;
  ints.kind = DomainKind::kRandInt;
  ints.type = ConfigType::kInt;
  ints.low = 32;
  ints.high = 512;
  minibatch.domain = ints;
  options.hyperparam_mutations["minibatch_size"] = minibatch;
  const nlohmann::json params = {{"lr", 0.001}, {"num_epochs", 4}, {"minibatch_size", 100}, {"gamma", 0.9}};
  std::set<double> lrs;
  std::set<int64_t> epoch_values, minibatches;
  for (int i = 0; i < 200; ++i) {
    Rng rng = decision_rng(1, 0, i);
    const nlohmann::json out = pbt_explore(params, options, rng);
    lrs.insert(out.at("lr").get<double>());
    REQUIRE(out.at("num_epochs").is_number_integer());
    epoch_values.insert(out.at("num_epochs").get<int64_t>());
    REQUIRE(out.at("minibatch_size").is_number_integer());
    minibatches.insert(out.at("minibatch_size").get<int64_t>());
    CHECK(out.at("gamma") == 0.9);  // not mutated
  }
  REQUIRE(lrs.size() == 2);
  CHECK(*lrs.begin() == Approx(0.0008));
  CHECK(*lrs.rbegin() == Approx(0.0012));
  CHECK(epoch_values == std::set<int64_t>{2, 8});
  CHECK(minibatches == std::set<int64_t>{80, 120});
}

TEST_CASE("PBT explore resamples with resample_probability and when the value is off the list", "[tune]") {
  PbtOptions options;
  options.resample_probability = 1.0;
  Mutation lr;
  Domain domain;
  domain.kind = DomainKind::kUniform;
  domain.type = ConfigType::kFloat;
  domain.low = 0.5;
  domain.high = 0.6;
  lr.domain = domain;
  options.hyperparam_mutations["clip_param"] = lr;
  Mutation epochs;
  epochs.values = {2, 4};
  options.hyperparam_mutations["num_epochs"] = epochs;
  Rng rng(5);
  const nlohmann::json out = pbt_explore({{"clip_param", 0.1}, {"num_epochs", 3}}, options, rng);
  CHECK(out.at("clip_param").get<double>() >= 0.5);
  CHECK((out.at("num_epochs") == 2 || out.at("num_epochs") == 4));
}

TEST_CASE("ASHA: rungs, promotion of the top 1/rf, stop below the cutoff, max_t", "[tune]") {
  TuneSpec spec;
  spec.scheduler = SchedulerKind::kAsha;
  spec.asha.time_attr = "training_iteration";
  spec.asha.grace_period = 1;
  spec.asha.reduction_factor = 2;
  spec.asha.max_t = 8;
  CHECK(asha_rungs(spec.asha) == std::vector<double>{1, 2, 4});
  auto scheduler = make_scheduler(spec);
  Trial fresh;
  CHECK(*scheduler->next_pause(fresh) == 1);
  fresh.iteration = 4;
  CHECK(*scheduler->next_pause(fresh) == 8);
  fresh.iteration = 8;
  CHECK(!scheduler->next_pause(fresh));

  auto at_rung = [](const std::string& name, double metric, int64_t iteration) {
    Trial t;
    t.name = name;
    t.status = TrialStatus::kPaused;
    t.awaiting_decision = true;
    t.iteration = iteration;
    t.metric = metric;
    return t;
  };
  std::vector<Trial> trials = {at_rung("a", 10, 1)};
  auto decisions = scheduler->decide(trials);
  REQUIRE(decisions.size() == 1);
  CHECK(decisions[0].action == Decision::Action::kContinue);  // the first at a rung is promoted
  trials[0].awaiting_decision = false;
  trials.push_back(at_rung("b", 5, 1));  // below the median of {10, 5}
  decisions = scheduler->decide(trials);
  REQUIRE(decisions.size() == 1);
  CHECK(decisions[0].action == Decision::Action::kStop);
  trials[1].awaiting_decision = false;
  trials.push_back(at_rung("c", 20, 1));
  decisions = scheduler->decide(trials);
  CHECK(decisions[0].action == Decision::Action::kContinue);
  trials[2].awaiting_decision = false;
  // Resume: the rung records survive through state().
  auto reloaded = make_scheduler(spec);
  reloaded->load_state(scheduler->state());
  trials.push_back(at_rung("d", 7, 1));
  decisions = reloaded->decide(trials);
  CHECK(decisions[0].action == Decision::Action::kStop);  // below the median of {10, 5, 20, 7}
  trials[3].awaiting_decision = false;
  trials.push_back(at_rung("e", 50, 4));
  decisions = reloaded->decide(trials);
  CHECK(decisions[0].action == Decision::Action::kContinue);  // the first at rung 4
  trials[4].awaiting_decision = false;
  trials.push_back(at_rung("f", 1, 5));  // past rung 4, judged there (not at rung 1)
  decisions = reloaded->decide(trials);
  CHECK(decisions[0].action == Decision::Action::kStop);
  CHECK_THAT(decisions[0].reason, Catch::Contains("rung 4"));
  trials[5].awaiting_decision = false;
  trials.push_back(at_rung("g", 60, 8));  // the best at rung 4, and at max_t
  decisions = reloaded->decide(trials);
  CHECK(decisions[0].action == Decision::Action::kStop);
  CHECK_THAT(decisions[0].reason, Catch::Contains("max_t"));
}

TEST_CASE("percentile interpolates linearly like numpy", "[tune]") {
  CHECK(percentile({1, 2, 3, 4}, 50) == Approx(2.5));
  CHECK(percentile({5, 1}, 75) == Approx(4));
  CHECK(percentile({3}, 90) == 3);
}

}  // namespace rlx
