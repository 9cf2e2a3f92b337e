#include "tests/learner/torch_catch.h"  // first: Catch's CHECK, not glog's

#include "algorithms/appo_algorithm.h"

TEST_CASE("policy_lag_json: mean, max and a histogram in lag order", "[algorithms][appo]") {
  const nlohmann::json lag = rlx::policy_lag_json({0, 1, 1, 2, 3, 8, 40, 100});
  CHECK(lag.at("mean").get<double>() == Approx((0 + 1 + 1 + 2 + 3 + 8 + 40 + 100) / 8.0));
  CHECK(lag.at("max").get<int>() == 100);
  const nlohmann::json& histogram = lag.at("histogram");
  REQUIRE(histogram.size() == 8);
  const std::vector<std::pair<std::string, int>> expected = {{"0", 1},    {"1", 2},     {"2-3", 2},   {"4-7", 0},
                                                              {"8-15", 1}, {"16-31", 0}, {"32-63", 1}, {"64+", 1}};
  for (size_t b = 0; b < expected.size(); ++b) {
    CHECK(histogram.at(b).at("lag") == expected[b].first);
    CHECK(histogram.at(b).at("fragments").get<int>() == expected[b].second);
  }
  CHECK(rlx::policy_lag_json({}).at("mean").get<double>() == 0.0);
}

TEST_CASE("appo_learner_config carries V-trace, the ratio and the KL term into PPO's learner config", "[algorithms][appo]") {
  rlx::PpoConfig ppo;
  rlx::AppoConfig appo;
  appo.rho_bar = 2.0;
  appo.c_bar = 0.5;
  rlx::PpoConfig config = rlx::appo_learner_config(ppo, appo);
  CHECK(config.vtrace);
  CHECK(config.behaviour_ratio);
  CHECK(config.rho_bar == 2.0);
  CHECK(config.c_bar == 0.5);
  CHECK(config.kl_coeff == 0.0);  // use_kl_loss off
  appo.use_kl_loss = true;
  appo.kl_coeff = 0.3;
  appo.vtrace = false;
  config = rlx::appo_learner_config(ppo, appo);
  CHECK(config.kl_coeff == 0.3);
  CHECK_FALSE(config.vtrace);
  CHECK_FALSE(config.behaviour_ratio);  // vtrace: false is no correction at all
  // IMPACT's and RLlib's choice: the clip on pi over the learner's start-of-update policy, the
  // lag corrected by V-trace alone.
  appo.vtrace = true;
  appo.surrogate_ratio = "learner";
  config = rlx::appo_learner_config(ppo, appo);
  CHECK(config.vtrace);
  CHECK_FALSE(config.behaviour_ratio);
}
