// `rlx envs rollout`: reset with a seed, optionally set the physical state, step with given or
// random actions and print one JSON object per line: the first observation ({"step": 0, "obs"}),
// then each step's number, action, observation, reward, terminated and truncated. An observation
// is printed as it is stored: its floats, then its bytes (a MinAtar grid's 0/1 values), and the
// action mask apart.
#include <charconv>
#include <cmath>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/envs_subcommands.h"
#include "cli/number_list.h"
#include "envs/random_actions.h"
#include "envs/registry.h"

namespace po = boost::program_options;

namespace rlx::cli {

namespace {

// Shortest text that reads back as the same value of its type (JSON null when not finite).
template <typename Number>
void append_number(std::string& out, Number value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out.append(buffer, result.ptr);
}

// `values` as a JSON array.
template <typename Number>
void append_array(std::string& out, const Number* values, size_t size) {
  out += '[';
  for (size_t i = 0; i < size; ++i) {
    if (i) out += ", ";
    append_number(out, values[i]);
  }
  out += ']';
}

// The action as JSON: its index for a Discrete space, its values for a Box.
void append_action(std::string& out, const Action& action, const Space& space) {
  if (space.is_discrete()) {
    out += std::to_string(action.index);
  } else if (action.indices != nullptr) {  // MultiDiscrete, MultiBinary
    append_array(out, action.indices, static_cast<size_t>(space.size()));
  } else {
    append_array(out, action.values, static_cast<size_t>(space.size()));
  }
}

// One observation of an env, both parts (core/observation_layout.h), and its JSON.
class ObservationPrinter {
 public:
  explicit ObservationPrinter(const Env& env)
      : layout_(env.observation_layout()),
        floats_(static_cast<size_t>(layout_.float_slots)),
        bytes_(static_cast<size_t>(layout_.byte_slots)) {}

  // Where the env writes it.
  ObsRow row() { return ObsRow(floats_.data(), bytes_.data()); }
  // The last observation's action mask; null when the env has none.
  const uint8_t* mask() const { return layout_.mask_size > 0 ? bytes_.data() + layout_.mask_offset : nullptr; }

  // Appends `, "obs": [...]` (the floats, then the bytes, in the order of the layout: a uint8
  // observation's values as they are) and, when the env has one, `, "action_mask": [...]`.
  void append(std::string& out) const {
    out += ", \"obs\": [";
    bool first = true;
    const auto item = [&](auto value) {
      if (!first) out += ", ";
      first = false;
      append_number(out, value);
    };
    for (const float value : floats_) item(value);
    for (int64_t i = 0; i < layout_.mask_offset; ++i) item(static_cast<int>(bytes_[static_cast<size_t>(i)]));
    out += ']';
    if (layout_.mask_size > 0) {
      out += ", \"action_mask\": ";
      append_array(out, bytes_.data() + layout_.mask_offset, static_cast<size_t>(layout_.mask_size));
    }
  }

 private:
  const ObservationLayout& layout_;
  std::vector<float> floats_;
  std::vector<uint8_t> bytes_;
};

// Actions given on the command line, checked against the action space.
struct GivenActions {
  std::vector<int64_t> indices;
  std::vector<float> values;
  int64_t count = 0;
};

GivenActions parse_actions(const std::string& text, const Space& space) {
  const std::vector<double> numbers = parse_number_list(text, "actions");
  GivenActions actions;
  if (space.is_discrete()) {
    for (size_t i = 0; i < numbers.size(); ++i) {
      const double a = numbers[i];
      if (a != std::floor(a) || a < 0 || a >= static_cast<double>(space.n)) {
        throw UsageError("--actions: item " + std::to_string(i + 1) + " (" + std::to_string(a) +
                         ") is not an action of " + space.to_string() + " (expected an integer in [0, " +
                         std::to_string(space.n) + "))");
      }
      actions.indices.push_back(static_cast<int64_t>(a));
    }
    actions.count = static_cast<int64_t>(actions.indices.size());
    return actions;
  }
  const auto size = static_cast<size_t>(space.size());
  if (numbers.size() % size != 0) {
    throw UsageError("--actions: " + std::to_string(numbers.size()) + " numbers do not split into actions of " +
                     std::to_string(size) + " values for " + space.to_string());
  }
  actions.count = static_cast<int64_t>(numbers.size() / size);
  if (space.is_multi_discrete() || space.is_multi_binary()) {  // values of each element, starts included
    for (size_t i = 0; i < numbers.size(); ++i) {
      const size_t j = i % size;
      const double a = numbers[i];
      const int64_t first = space.is_multi_discrete() ? space.starts[j] : 0;
      const int64_t count = space.is_multi_discrete() ? space.nvec[j] : 2;
      if (a != std::floor(a) || a < static_cast<double>(first) || a >= static_cast<double>(first + count)) {
        throw UsageError("--actions: item " + std::to_string(i + 1) + " (" + std::to_string(a) + ") is not a value of element " +
                         std::to_string(j) + " of " + space.to_string() + " (expected an integer in [" + std::to_string(first) +
                         ", " + std::to_string(first + count) + "))");
      }
      actions.indices.push_back(static_cast<int64_t>(a));
    }
    return actions;
  }
  for (double a : numbers) actions.values.push_back(static_cast<float>(a));
  return actions;
}

}  // namespace

int run_envs_rollout(const std::vector<std::string>& args) {
  po::options_description options(
      "rlx envs rollout ID --seed S: step an env, one JSON line for the first observation, then one per step");
  options.add_options()("help,h", "show this help")("id", po::value<std::string>(), "env id")(
      "seed", po::value<uint64_t>(), "reset seed (required)")(
      "state", po::value<std::string>(), "physical state to set after reset, comma separated")(
      "actions", po::value<std::string>(),
      "actions, comma separated (Box, MultiDiscrete and MultiBinary actions: action-size numbers each); random (legal, when the env masks actions) when absent")(
      "steps", po::value<int64_t>(), "most steps to take (default: to the end of the episode)");
  add_env_plugin_option(options);
  add_env_config_option(options);
  po::positional_options_description positionals;
  positionals.add("id", 1);
  const po::variables_map values = parse_command_line(args, options, positionals);
  if (values.count("help")) {
    std::cout << "usage: rlx envs rollout ID --seed S [--state v1,v2,...] [--actions a1,a2,...] [--steps N]\n\n"
              << options
              << "\noutput: one JSON object per line. First the observation the first action acts on (after the\n"
                 "reset and --state): {\"step\": 0, \"obs\": [...]}; then one per step, with the action taken (an\n"
                 "integer for a Discrete space, an array for a Box) and what the env returned:\n"
                 "{\"step\": 1, \"action\": 0, \"obs\": [...], \"reward\": 1, \"terminated\": false, "
                 "\"truncated\": false}\n"
                 "\"obs\" lists the observation as rlx stores it: its float elements, then its byte elements\n"
                 "(uint8 Boxes, MultiBinary); an env with an action mask adds \"action_mask\": [0 or 1, ...].\n";
    return kExitOk;
  }
  if (!values.count("id")) throw UsageError("missing env ID");
  if (!values.count("seed")) throw UsageError("missing --seed");
  load_env_plugins_from(values);

  const std::string id = values["id"].as<std::string>();
  prepare_env(id, values);
  const uint64_t seed = values["seed"].as<uint64_t>();
  std::unique_ptr<Env> env = global_env_registry().make(id);
  const Space& action_space = env->spec().action_space;
  ObservationPrinter obs(*env);
  env->reset(seed, obs.row());

  if (values.count("state")) {
    const std::vector<double> state = parse_number_list(values["state"].as<std::string>(), "state");
    const size_t expected = env->state().size();
    if (expected == 0) throw UsageError(id + " does not expose a physical state, so --state cannot be used");
    if (state.size() != expected) {
      throw UsageError("--state: " + id + " has a state of " + std::to_string(expected) + " values, got " +
                       std::to_string(state.size()));
    }
    env->set_state(state, obs.row());
  }

  std::optional<GivenActions> given;
  if (values.count("actions")) given = parse_actions(values["actions"].as<std::string>(), action_space);
  int64_t max_steps = values.count("steps") ? values["steps"].as<int64_t>() : -1;
  if (values.count("steps") && max_steps < 0) throw UsageError("--steps must be >= 0");
  if (given && (max_steps < 0 || max_steps > given->count)) max_steps = given->count;

  // The observation the first action acts on (input checked first, so that an error prints no line).
  std::string line = "{\"step\": 0";
  obs.append(line);
  std::cout << line << "}\n";

  Rng action_rng(seed ^ 0x5eedacc1005eedULL);
  std::vector<int64_t> random_index(static_cast<size_t>(action_space.is_discrete() ? 1 : action_space.size()));
  std::vector<float> random_values(static_cast<size_t>(action_space.size()));
  for (int64_t t = 0; max_steps < 0 || t < max_steps; ++t) {
    Action action;
    if (given) {
      if (action_space.is_discrete()) {
        action.index = given->indices[static_cast<size_t>(t)];
      } else if (!given->indices.empty()) {
        action.indices = given->indices.data() + t * action_space.size();
      } else {
        action.values = given->values.data() + t * action_space.size();
      }
    } else {
      // Legal actions only when the env masks them; sample_actions counts from 0, the env takes
      // the space's values.
      sample_actions(action_space, action_rng, 1, random_index.data(), random_values.data(), obs.mask(),
                     obs.mask() != nullptr ? action_mask_size(action_space) : 0);
      if (action_space.is_discrete()) {
        action.index = action_space.start + random_index[0];
      } else if (action_space.is_multi_discrete() || action_space.is_multi_binary()) {
        for (size_t i = 0; i < action_space.starts.size(); ++i) random_index[i] += action_space.starts[i];
        action.indices = random_index.data();
      } else {
        action.values = random_values.data();
      }
    }
    const StepResult result = env->step(action, obs.row());
    line = "{\"step\": " + std::to_string(t + 1) + ", \"action\": ";
    append_action(line, action, action_space);
    obs.append(line);
    line += ", \"reward\": ";
    append_number(line, result.reward);
    line += result.terminated ? ", \"terminated\": true" : ", \"terminated\": false";
    line += result.truncated ? ", \"truncated\": true}\n" : ", \"truncated\": false}\n";
    std::cout << line;
    if (result.terminated || result.truncated) break;
  }
  std::cout.flush();
  return kExitOk;
}

}  // namespace rlx::cli
