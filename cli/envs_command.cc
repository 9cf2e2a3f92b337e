// `rlx envs list | info | rollout | bench`.
#include <algorithm>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/envs_subcommands.h"
#include "core/observation_layout.h"
#include "core/space_json.h"
#include "envs/registry.h"

namespace po = boost::program_options;

namespace rlx::cli {

namespace {

const char* const kEnvsUsage =
    "usage: rlx envs SUBCOMMAND [OPTIONS]\n\n"
    "subcommands:\n"
    "  list                  every registered env id with its spaces (a multi-agent env's per agent)\n"
    "  info ID               the env's spec as JSON, with its observation's storage (per agent)\n"
    "  rollout ID --seed S   step an env and print one JSON object per step\n"
    "  bench ID              raw single-core stepping speed\n\n"
    "every subcommand takes --env-plugin PATH, --python-path DIR (both repeatable) and --help;\n"
    "info, rollout and bench take --env-config JSON for a Python env (ids python:MODULE:CLASS).\n";

// `rlx envs list`'s line for a multi-agent env: its agents, then their spaces, once when every
// agent has the same ones, else per agent.
std::string multi_agent_line(const MultiAgentEnvSpec& spec) {
  std::string ids;
  bool alike = true;
  for (const AgentSpec& agent : spec.agents) {
    ids += (ids.empty() ? "" : ",") + agent.id;
    const AgentSpec& first = spec.agents.front();
    alike = alike && agent.observation_space == first.observation_space && agent.action_space == first.action_space &&
            agent.action_mask == first.action_mask;
  }
  const auto spaces = [](const AgentSpec& agent) {
    return "observation=" + agent.observation_space.to_string() + "  action=" + agent.action_space.to_string() +
           (agent.action_mask ? " (masked)" : "");
  };
  std::string line = spec.id + "  multi-agent  agents=" + ids;
  if (alike) return line + "  " + spaces(spec.agents.front());
  for (const AgentSpec& agent : spec.agents) line += "  " + agent.id + ": " + spaces(agent);
  return line;
}

int run_list(const std::vector<std::string>& args) {
  po::options_description options("rlx envs list: every registered env id with its spaces");
  options.add_options()("help,h", "show this help");
  add_env_plugin_option(options);
  const po::variables_map values = parse_command_line(args, options, {});
  if (values.count("help")) {
    std::cout << "usage: rlx envs list [--env-plugin PATH ...]\n\n" << options;
    return kExitOk;
  }
  load_env_plugins_from(values);
  const EnvRegistry& registry = global_env_registry();
  for (const std::string& id : registry.ids()) {
    const EnvSpec& spec = registry.spec(id);
    std::cout << id << "  observation=" << spec.observation_space.to_string()
              << "  action=" << spec.action_space.to_string() << "\n";
  }
  for (const std::string& id : registry.multi_agent_ids()) std::cout << multi_agent_line(registry.multi_agent_spec(id)) << "\n";
  return kExitOk;
}

// `rlx envs info`'s JSON: the spec (env_spec_to_json), whether observations carry an action mask,
// and how one observation is stored and flattened (core/observation_layout.h): its floats, its
// bytes (without the mask), the mask's bytes, the model's input width, and each leaf's place.
nlohmann::json env_info_json(const EnvSpec& spec) {
  nlohmann::json info = env_spec_to_json(spec);
  info["action_mask"] = spec.action_mask;
  const ObservationLayout layout = observation_layout(spec);
  nlohmann::json leaves = nlohmann::json::array();
  for (const ObsLeaf& leaf : layout.leaves) {
    leaves.push_back({{"path", leaf.path.empty() ? "observation" : "observation" + leaf.path},
                      {"space", leaf.space.to_string()},
                      {"storage", leaf.storage == LeafStorage::kBytes ? "bytes" : "floats"},
                      {"offset", leaf.offset},
                      {"size", leaf.slots},
                      {"flat_offset", leaf.flat_offset},
                      {"flat_size", leaf.flat_size}});
  }
  info["observation_layout"] = {{"floats", layout.float_slots},
                                {"bytes", layout.byte_slots - layout.mask_size},
                                {"action_mask_bytes", layout.mask_size},
                                {"flat_size", layout.flat_size},
                                {"leaves", leaves}};
  return info;
}

// `rlx envs info`'s JSON for a multi-agent env: its id, limits and, per agent, what env_info_json
// gives a single-agent env (its id the agent's).
nlohmann::json multi_agent_info_json(const MultiAgentEnvSpec& spec) {
  nlohmann::json agents = nlohmann::json::array();
  for (size_t i = 0; i < spec.agents.size(); ++i) {
    nlohmann::json agent = env_info_json(spec.agent_env_spec(static_cast<int>(i)));
    agent["id"] = spec.agents[i].id;
    agent.erase("max_episode_steps");
    agent.erase("reward_threshold");
    agents.push_back(std::move(agent));
  }
  nlohmann::json info = {{"id", spec.id}, {"multi_agent", true}, {"max_episode_steps", spec.max_episode_steps}, {"agents", agents}};
  info["reward_threshold"] = spec.reward_threshold ? nlohmann::json(*spec.reward_threshold) : nlohmann::json();
  return info;
}

// Where a key comes in `rlx envs info`'s objects: what a thing is before its details (a space's
// type before its shape); keys not listed follow, sorted.
int key_rank(const std::string& key) {
  static const std::vector<std::string> order = {
      "id", "key", "path", "type", "space", "storage", "multi_agent", "observation_space", "action_space", "action_mask",
      "max_episode_steps", "reward_threshold", "agents", "observation_layout", "nvec", "shape", "dtype", "low", "high", "n",
      "start", "spaces", "floats", "bytes", "action_mask_bytes", "offset", "size", "flat_offset", "flat_size", "leaves"};
  const auto at = std::find(order.begin(), order.end(), key);
  return static_cast<int>(at - order.begin());
}

// value as JSON indented by two spaces a level, keys in key_rank order, and arrays of plain values
// (shapes, bounds, nvec) on one line.
void append_readable(const nlohmann::json& value, int depth, std::string& out) {
  const bool nested = value.is_object() || (value.is_array() && std::any_of(value.begin(), value.end(), [](const nlohmann::json& item) {
                                              return item.is_structured();
                                            }));
  if (value.is_array() && !nested) {
    out += '[';
    for (size_t i = 0; i < value.size(); ++i) out += (i ? ", " : "") + value[i].dump();
    out += ']';
    return;
  }
  if (!nested || value.empty()) {
    out += value.dump();
    return;
  }
  const std::string indent(static_cast<size_t>(2 * (depth + 1)), ' ');
  out += value.is_object() ? "{\n" : "[\n";
  if (value.is_object()) {
    std::vector<std::string> keys;
    for (const auto& item : value.items()) keys.push_back(item.key());
    std::stable_sort(keys.begin(), keys.end(), [](const std::string& a, const std::string& b) { return key_rank(a) < key_rank(b); });
    for (size_t i = 0; i < keys.size(); ++i) {
      out += indent + nlohmann::json(keys[i]).dump() + ": ";
      append_readable(value.at(keys[i]), depth + 1, out);
      out += i + 1 < keys.size() ? ",\n" : "\n";
    }
  } else {
    for (size_t i = 0; i < value.size(); ++i) {
      out += indent;
      append_readable(value[i], depth + 1, out);
      out += i + 1 < value.size() ? ",\n" : "\n";
    }
  }
  out += std::string(static_cast<size_t>(2 * depth), ' ') + (value.is_object() ? "}" : "]");
}

int run_info(const std::vector<std::string>& args) {
  po::options_description options("rlx envs info ID: the env's spec as JSON");
  options.add_options()("help,h", "show this help")("id", po::value<std::string>(), "env id");
  add_env_plugin_option(options);
  add_env_config_option(options);
  po::positional_options_description positionals;
  positionals.add("id", 1);
  const po::variables_map values = parse_command_line(args, options, positionals);
  if (values.count("help")) {
    std::cout << "usage: rlx envs info ID [--env-plugin PATH ...]\n\n" << options;
    return kExitOk;
  }
  if (!values.count("id")) throw UsageError("missing env ID");
  load_env_plugins_from(values);
  const std::string id = values["id"].as<std::string>();
  const EnvRegistry& registry = global_env_registry();
  std::string text;
  if (const std::optional<MultiAgentEnvSpec> multi_agent = registry.find_multi_agent(id)) {
    append_readable(multi_agent_info_json(*multi_agent), 0, text);
    std::cout << text << "\n";
    return kExitOk;
  }
  prepare_env(id, values);
  append_readable(env_info_json(registry.spec(id)), 0, text);
  std::cout << text << "\n";
  return kExitOk;
}

}  // namespace

int run_envs_command(const std::vector<std::string>& args) {
  const std::map<std::string, int (*)(const std::vector<std::string>&)> subcommands = {
      {"list", run_list}, {"info", run_info}, {"rollout", run_envs_rollout}, {"bench", run_envs_bench}};
  if (args.empty()) throw UsageError(std::string("missing subcommand\n") + kEnvsUsage);
  if (args.front() == "--help" || args.front() == "-h") {
    std::cout << kEnvsUsage;
    return kExitOk;
  }
  auto it = subcommands.find(args.front());
  if (it == subcommands.end()) {
    throw UsageError("unknown subcommand '" + args.front() + "'\n" + kEnvsUsage);
  }
  return it->second(std::vector<std::string>(args.begin() + 1, args.end()));
}

}  // namespace rlx::cli
