// Scripted players: RolloutPolicies with no weights that choose by a rule, to act as fixed
// opponents in multi-agent runs (`policies: {NAME: {scripted: RULE}}`) and in evaluations.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/env_spec.h"
#include "models/rollout_policy.h"

namespace rlx {

// The rules: "random" (uniform over the legal actions of a Discrete action space),
// "connect_four_lookahead" (ConnectFour-v0: win now if it can, else block the opponent's win
// now, else random) and "simple_spread_oracle" (SimpleSpread-v0: each agent to its landmark of
// the least-total-distance assignment, by look-ahead steering; rollout/simple_spread_oracle.h).
const std::vector<std::string>& scripted_policy_names();

// The scripted player `name` for agents of `spec`, its choices drawn from `seed`. Throws
// ConfigError naming the rule and the spec when the rule is unknown or does not suit the spaces.
std::unique_ptr<RolloutPolicy> make_scripted_policy(const std::string& name, const EnvSpec& spec, uint64_t seed);

}  // namespace rlx
