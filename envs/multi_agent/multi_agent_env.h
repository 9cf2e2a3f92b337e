// The multi-agent environment API: RLlib's MultiAgentEnv and PettingZoo's Parallel API over
// buffers the env owns. Part of the plugin API (header only).
//
// Agents are the spec's `agents`, referred to by their index there. After reset() and after each
// step() the agents in acting() are the ones that act next: each has a fresh observation in
// observation(agent). step() takes exactly one action for each acting agent and gives every agent
// an AgentOutcome: the reward it earned in that step, whether its episode ended (terminated or
// truncated), and whether it has a new observation. An agent whose episode ended never acts or
// earns again until the next reset; when it was truncated, observation(agent) is what to bootstrap
// from (its final one, or its last when the env gave none). Agents may appear late (observed for
// the first time after some steps) and leave early. The episode is over (episode_done(),
// RLlib's "__all__") when every agent that entered it has ended; the time limit truncates every
// live agent after max_episode_steps env steps.
//
// Each agent's observation is checked as a single-agent env's (envs/env.h: every float written and
// finite, values in the agent's space, a legal action in its mask); a breach throws EnvOutputError
// naming the env, the agent, the call, the step and the element. Breaking the multi-agent rules
// (an action for an agent that is not acting, none for one that is, anything for an agent whose
// episode ended, no agent left to act while some live) throws EnvContractError naming the env and
// the agent. After a throw the env must be reset.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "envs/multi_agent/multi_agent_output.h"

namespace rlx {

// One agent's action in a multi-agent step: the agent's index in the spec and its action.
struct AgentAction {
  int agent = 0;
  Action action;
};

// Base class of every multi-agent environment. Public calls are non-virtual so seeding, the time
// limit and the checks behave the same everywhere; subclasses implement reset_episode and
// step_episode.
class MultiAgentEnv {
 public:
  // Throws std::invalid_argument when the spec is malformed.
  explicit MultiAgentEnv(MultiAgentEnvSpec spec) : spec_((spec.validate(), std::move(spec))), output_(spec_) {
    for (const auto& writer : output_.writers_) {
      observations_.emplace_back(static_cast<size_t>(writer->layout().float_slots), 0.0f);
      observation_bytes_.emplace_back(static_cast<size_t>(writer->layout().byte_slots), uint8_t{0});
    }
    entered_.assign(spec_.agents.size(), false);
  }
  virtual ~MultiAgentEnv() = default;
  MultiAgentEnv(const MultiAgentEnv&) = delete;
  MultiAgentEnv& operator=(const MultiAgentEnv&) = delete;

  // The env's static description.
  const MultiAgentEnvSpec& spec() const { return spec_; }
  // Number of possible agents (spec().agents.size()).
  int num_agents() const { return static_cast<int>(spec_.agents.size()); }
  // The storage of one agent's observation.
  const ObservationLayout& observation_layout(int agent) const { return output_.writers_.at(static_cast<size_t>(agent))->layout(); }

  // Starts an episode; afterwards acting() lists the agents the env observed. A seed restarts
  // the env's generator; without one the stream continues (seeded from std::random_device the
  // first time, as Gymnasium). Throws EnvContractError / EnvOutputError as the header explains.
  void reset(std::optional<uint64_t> seed) {
    reset_seed_ = seed;
    seed_episode_generator(seed, rng_, seeded_);
    elapsed_steps_ = 0;
    output_.done_.assign(spec_.agents.size(), false);
    entered_.assign(spec_.agents.size(), false);
    output_.begin("reset", 0);
    run_hook([&] { reset_episode(rng_, output_); });
    finish("reset");
    if (acting_.empty()) throw output_.contract_error("no agent was observed, so none can act");
  }

  // Applies one action per acting agent and advances the env one step. Throws EnvContractError
  // naming the agent when an action is for an agent that is not acting (or for one twice) or an
  // acting agent has none; EnvOutputError / EnvContractError when the env breaks the contract.
  void step(const std::vector<AgentAction>& actions) {
    output_.begin("step", elapsed_steps_ + 1);
    check_actions(actions);
    run_hook([&] { step_episode(actions, output_); });
    ++elapsed_steps_;
    if (spec_.max_episode_steps > 0 && elapsed_steps_ >= spec_.max_episode_steps) {
      for (size_t i = 0; i < spec_.agents.size(); ++i) {
        AgentOutcome& outcome = output_.outcomes_[i];
        const bool live = (entered_[i] || outcome.observed) && !output_.done_[i];
        if (live && !outcome.terminated) outcome.truncated = true;  // a termination on the same step wins
      }
    }
    finish("step");
    if (acting_.empty() && !episode_done()) {
      throw output_.contract_error("no agent acts next, but the episode goes on for " + live_agents_text());
    }
  }

  // The agents that act next, in ascending index order.
  const std::vector<int>& acting() const { return acting_; }
  // What the last reset or step gave the agent.
  const AgentOutcome& outcome(int agent) const { return output_.outcomes_.at(static_cast<size_t>(agent)); }
  // The agent's latest observation (zeros before it was first observed this episode).
  ObsRow observation(int agent) {
    const auto i = static_cast<size_t>(agent);
    return ObsRow(observations_.at(i).data(), observation_bytes_.at(i).data());
  }
  // True when the agent's episode ended (it was terminated or truncated).
  bool agent_done(int agent) const { return output_.done_.at(static_cast<size_t>(agent)); }
  // True when the agent was observed at least once this episode.
  bool agent_entered(int agent) const { return entered_.at(static_cast<size_t>(agent)); }
  // True when every agent that entered the episode has ended ("__all__").
  bool episode_done() const {
    for (size_t i = 0; i < entered_.size(); ++i) {
      if (entered_[i] && !output_.done_[i]) return false;
    }
    return true;
  }
  // Env steps since the last reset.
  int elapsed_steps() const { return elapsed_steps_; }

 protected:
  // Draws the initial state from rng and observes the agents that act first.
  virtual void reset_episode(Rng& rng, MultiAgentOutput& out) = 0;
  // Applies the acting agents' actions (each agent's index comes with its action); writes the
  // rewards, ends and next observations. The time limit is added by step().
  virtual void step_episode(const std::vector<AgentAction>& actions, MultiAgentOutput& out) = 0;

  // The episode generator, for envs that draw noise during steps.
  Rng& rng() { return rng_; }
  // The seed the reset under way was given (nullopt when none), for envs that seed a generator of
  // their own (a Python env's reset(seed=...)); meaningful inside reset_episode only.
  std::optional<uint64_t> reset_seed() const { return reset_seed_; }

 private:
  template <typename Hook>
  void run_hook(Hook hook) {
    try {
      hook();
    } catch (const ObsIndexError& error) {
      // Only the agent observed last can have thrown: its span is the one the hook was writing.
      const int agent = output_.last_observed_;
      if (agent < 0) throw;  // a span the hook made itself: nothing to name it by
      const ObservationWriter& writer = *output_.writers_.at(static_cast<size_t>(agent));
      throw EnvOutputError(spec_.agent_env_spec(agent).id, output_.call_, output_.step_, writer.index_field(error.part(), error.index()),
                           "is outside " + writer.index_bound(error.part(), error.size()) + writer.space_text());
    }
  }

  void check_actions(const std::vector<AgentAction>& actions) {
    std::vector<bool> given(spec_.agents.size(), false);
    for (const AgentAction& action : actions) {
      output_.check_index(action.agent);
      const auto i = static_cast<size_t>(action.agent);
      if (given[i]) throw output_.contract_error("two actions for " + output_.agent_name(action.agent));
      given[i] = true;
      if (!is_acting(action.agent)) {
        throw output_.contract_error("an action for " + output_.agent_name(action.agent) + ", which is not acting (" +
                                     (output_.done_[i] ? "its episode ended" : "the env did not observe it last") + ")");
      }
    }
    for (int agent : acting_) {
      if (!given[static_cast<size_t>(agent)]) throw output_.contract_error("no action for " + output_.agent_name(agent) + ", which is acting");
    }
  }

  bool is_acting(int agent) const {
    for (int a : acting_) {
      if (a == agent) return true;
    }
    return false;
  }

  // Checks and copies every observation of the call, marks the ended agents, lists the acting ones.
  void finish(const char* call) {
    acting_.clear();
    for (size_t i = 0; i < spec_.agents.size(); ++i) {
      AgentOutcome& outcome = output_.outcomes_[i];
      ObservationWriter& writer = *output_.writers_[i];
      if (!std::isfinite(outcome.reward)) {
        throw NonFiniteEnvOutput(spec_.agent_env_spec(static_cast<int>(i)).id, call, elapsed_steps_, "reward",
                                 "is " + std::to_string(outcome.reward) + ", expected a finite number");
      }
      if (outcome.observed && !writer.finish(0.0, observation(static_cast<int>(i)))) {
        const ObservationBreach breach = writer.breach(0.0);
        const std::string agent_id = spec_.agent_env_spec(static_cast<int>(i)).id;
        if (breach.non_finite) throw NonFiniteEnvOutput(agent_id, call, elapsed_steps_, breach.field, breach.what);
        throw EnvOutputError(agent_id, call, elapsed_steps_, breach.field, breach.what);
      }
      if (outcome.observed) entered_[i] = true;
      if (outcome.terminated || outcome.truncated) {
        output_.done_[i] = true;
        entered_[i] = true;
      } else if (outcome.observed) {
        acting_.push_back(static_cast<int>(i));
      }
    }
  }

  std::string live_agents_text() const {
    std::string text;
    for (size_t i = 0; i < spec_.agents.size(); ++i) {
      if (entered_[i] && !output_.done_[i]) text += (text.empty() ? "" : ", ") + output_.agent_name(static_cast<int>(i));
    }
    return text;
  }

  MultiAgentEnvSpec spec_;
  MultiAgentOutput output_;
  std::vector<std::vector<float>> observations_;          // per agent: its latest observation's floats
  std::vector<std::vector<uint8_t>> observation_bytes_;   // per agent: its bytes (and mask)
  std::vector<bool> entered_;                              // the agent was observed this episode
  std::vector<int> acting_;
  Rng rng_;
  bool seeded_ = false;
  std::optional<uint64_t> reset_seed_;
  int elapsed_steps_ = 0;
};

}  // namespace rlx
