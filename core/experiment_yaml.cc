// Experiment files: reading YAML (with file/line/key messages) and writing the resolved form.
#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <system_error>

#include <yaml-cpp/yaml.h>

#include "core/experiment.h"
#include "core/experiment_internal.h"
#include "core/file_read.h"

namespace rlx {
namespace {

const std::vector<std::string> kExperimentFields = {"env",         "env_config", "algorithm",        "stop",
                                                    "config",      "plugins",    "python_path",      "tune",
                                                    "policies",    "policy_mapping", "policies_to_train", "self_play"};

// Where an experiment's parse is, for messages.
struct Context {
  std::string source;
  std::string experiment;

  std::string where(const YAML::Node& node) const {
    const YAML::Mark mark = node.Mark();
    std::string text = source;
    if (!mark.is_null()) text += ":" + std::to_string(mark.line + 1);
    return text + ": experiment '" + experiment + "'";
  }
  std::string origin(const YAML::Node& node) const {
    const YAML::Mark mark = node.Mark();
    return mark.is_null() ? source : source + ":" + std::to_string(mark.line + 1);
  }
  [[noreturn]] void fail(const YAML::Node& node, const std::string& what) const {
    throw ConfigError(where(node) + ": " + what);
  }
};

// "'abc'", "a mapping", "a list", "nothing" — what a node holds, for messages.
std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar: return "'" + node.Scalar() + "'";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    default: return "nothing";
  }
}

std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates) {
  const auto match = closest_match(name, candidates);
  return match ? " (did you mean '" + *match + "'?)" : "";
}


// A map node's entries with scalar keys; rejects non-scalar and duplicate keys.
std::vector<std::pair<YAML::Node, YAML::Node>> entries(const Context& ctx, const YAML::Node& map) {
  std::vector<std::pair<YAML::Node, YAML::Node>> out;
  std::map<std::string, int> seen;
  for (auto it = map.begin(); it != map.end(); ++it) {
    const YAML::Node key = it->first;
    if (!key.IsScalar()) ctx.fail(key, "a key must be a plain name, got " + describe(key));
    const int line = key.Mark().line + 1;
    const auto [previous, inserted] = seen.emplace(key.Scalar(), line);
    if (!inserted) ctx.fail(key, "duplicate key '" + key.Scalar() + "' (first at line " + std::to_string(previous->second) + ")");
    out.emplace_back(key, it->second);
  }
  return out;
}

// A node's value for `spec`, type- and range-checked; `label` is "config key 'lr'" etc.
ConfigValue read_value(const Context& ctx, const YAML::Node& key_node, const YAML::Node& node, const KeySpec& spec,
                       const std::string& label) {
  std::optional<ConfigValue> value;
  if (node.IsScalar()) {
    value = parse_value(spec.type, node.Scalar());
  } else if (node.IsSequence() && spec.type == ConfigType::kIntList) {
    IntList list;
    for (const auto& element : node) {
      std::optional<ConfigValue> item;
      if (element.IsScalar()) item = parse_value(ConfigType::kInt, element.Scalar());
      if (!item) ctx.fail(element, label + ": list element " + describe(element) + " is not an integer, expected " + spec.expected());
      list.push_back(std::get<int64_t>(*item));
    }
    value = ConfigValue(std::move(list));
  }
  if (!value) {
    std::string hint;
    if (node.IsMap()) hint = " (search spaces such as grid_search go under tune:)";
    if (node.IsScalar()) hint = lone_integer_hint(spec, node.Scalar(), ListSyntax::kFile);
    ctx.fail(key_node, label + ": got " + describe(node) + ", expected " + spec.expected() + hint);
  }
  try {
    return checked_value(spec, std::move(*value));
  } catch (const ConfigError&) {
    ctx.fail(key_node, label + ": got " + describe(node) + ", expected " + spec.expected());
  }
}

std::string read_string(const Context& ctx, const YAML::Node& key_node, const YAML::Node& node, const std::string& field) {
  if (!node.IsScalar() || node.Scalar().empty()) {
    ctx.fail(key_node, "'" + field + "': got " + describe(node) + ", expected a string");
  }
  return node.Scalar();
}

AlgorithmKind read_algorithm(const Context& ctx, const YAML::Node& key_node, const YAML::Node& node) {
  const std::string name = read_string(ctx, key_node, node, "algorithm");
  const auto algorithm = parse_algorithm(name);
  if (!algorithm) {
    ctx.fail(key_node, "unknown algorithm '" + name + "', " + expected_algorithm_text() + did_you_mean(name, algorithm_names()));
  }
  return *algorithm;
}

void read_stop(const Context& ctx, const YAML::Node& key_node, const YAML::Node& node, Experiment& experiment) {
  if (!node.IsMap()) {
    ctx.fail(key_node, "'stop': got " + describe(node) + ", expected a mapping of criteria (" +
                           join_names(stop_criterion_names()) + ")");
  }
  for (const auto& [key, value] : entries(ctx, node)) {
    const KeySpec* spec = find_stop_spec(key.Scalar());
    if (!spec) {
      ctx.fail(key, "unknown stop criterion '" + key.Scalar() + "'" + did_you_mean(key.Scalar(), stop_criterion_names()) +
                        ", expected one of " + join_names(stop_criterion_names()));
    }
    set_stop(experiment.stop, *spec, read_value(ctx, key, value, *spec, "stop criterion '" + spec->name + "'"));
    experiment.origins["stop." + spec->name] = ctx.origin(key);
  }
  if (experiment.stop.empty()) {
    ctx.fail(key_node, "'stop' needs at least one criterion (" + join_names(stop_criterion_names()) + ")");
  }
}

void read_config(const Context& ctx, const YAML::Node& key_node, const YAML::Node& node, Experiment& experiment) {
  if (node.IsNull()) return;
  if (!node.IsMap()) ctx.fail(key_node, "'config': got " + describe(node) + ", expected a mapping of config keys");
  for (const auto& [key, value] : entries(ctx, node)) {
    const std::string& name = key.Scalar();
    const KeySpec* spec = find_key(name);
    if (!spec) {
      std::string hint = unknown_key_hint(name, experiment.algorithm);
      if (find_stop_spec(name)) hint = " ('" + name + "' is a stop criterion: put it under stop:)";
      ctx.fail(key, "unknown config key '" + name + "'" + hint);
    }
    if (!spec->applies_to(experiment.algorithm)) {
      ctx.fail(key, "config key '" + name + "' applies to " + scope_name(*spec) + ", not " +
                        algorithm_name(experiment.algorithm));
    }
    experiment.config.set(name, read_value(ctx, key, value, *spec, "config key '" + name + "'"));
    experiment.origins[name] = ctx.origin(key);
  }
}

std::optional<int64_t> strict_int(const std::string& text) {
  int64_t value = 0;
  const char* begin = text.data() + (!text.empty() && text[0] == '+' ? 1 : 0);
  const auto [end, error] = std::from_chars(begin, text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || begin == end) return std::nullopt;
  return value;
}

}  // namespace

nlohmann::json plain_scalar_to_json(const std::string& text) {
  if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL") return nullptr;
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  if (auto i = strict_int(text)) return *i;
  if (auto d = parse_value(ConfigType::kFloat, text)) return std::get<double>(*d);
  return text;
}

namespace {

nlohmann::json yaml_to_json(const Context& ctx, const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      if (node.Tag() == "!") return node.Scalar();  // quoted: always a string
      return plain_scalar_to_json(node.Scalar());
    case YAML::NodeType::Sequence: {
      nlohmann::json array = nlohmann::json::array();
      for (const auto& element : node) array.push_back(yaml_to_json(ctx, element));
      return array;
    }
    case YAML::NodeType::Map: {
      nlohmann::json object = nlohmann::json::object();
      for (const auto& [key, value] : entries(ctx, node)) object[key.Scalar()] = yaml_to_json(ctx, value);
      return object;
    }
    default: return nullptr;
  }
}

// Records "file:line" of every mapping key under `node` as origins["tune.a.b"], so the tuner's
// messages can point at lines.
void record_origins(const Context& ctx, const YAML::Node& key_node, const YAML::Node& node, const std::string& path,
                    std::map<std::string, std::string>& origins) {
  origins[path] = ctx.origin(key_node);
  if (!node.IsMap()) return;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (it->first.IsScalar()) record_origins(ctx, it->first, it->second, path + "." + it->first.Scalar(), origins);
  }
}

// The elements of a field that takes one value or a list of them (nothing for null); fails
// naming the field and what was expected on a mapping.
std::vector<YAML::Node> one_or_list(const Context& ctx, const YAML::Node& key, const YAML::Node& value,
                                    const std::string& field, const std::string& expected) {
  std::vector<YAML::Node> elements;
  if (value.IsScalar()) {
    elements.push_back(value);
  } else if (value.IsSequence()) {
    for (const auto& element : value) elements.push_back(element);
  } else if (!value.IsNull()) {
    ctx.fail(key, field + ": got " + describe(value) + ", expected " + expected);
  }
  return elements;
}

// policies, policy_mapping, policies_to_train and self_play, with the line of every key for messages.
void read_multi_agent_fields(const Context& ctx, const std::map<std::string, std::pair<YAML::Node, YAML::Node>>& fields,
                             Experiment& experiment) {
  nlohmann::json values[4];
  const char* names[4] = {"policies", "policy_mapping", "policies_to_train", "self_play"};
  for (int i = 0; i < 4; ++i) {
    if (!fields.count(names[i])) continue;
    const auto& [key, value] = fields.at(names[i]);
    values[i] = yaml_to_json(ctx, value);
    record_origins(ctx, key, value, names[i], experiment.origins);
  }
  const auto where = [&](const std::string& path) {
    std::string key = path;
    while (!experiment.origins.count(key) && key.find('.') != std::string::npos) key.erase(key.rfind('.'));
    const auto it = experiment.origins.find(key);
    return (it == experiment.origins.end() ? ctx.source : it->second) + ": experiment '" + experiment.name + "'";
  };
  experiment.multi_agent = read_multi_agent_setup(values[0], values[1], values[2], values[3], experiment.algorithm, where);
}

Experiment read_experiment(const std::string& source, const std::filesystem::path& base_dir, const YAML::Node& name_node,
                           const YAML::Node& node) {
  Experiment experiment;
  experiment.name = name_node.Scalar();
  experiment.source = source;
  const Context ctx{source, experiment.name};
  if (!node.IsMap()) {
    ctx.fail(name_node, "got " + describe(node) + ", expected a mapping with env, algorithm, stop and config");
  }
  std::map<std::string, std::pair<YAML::Node, YAML::Node>> fields;
  for (const auto& [key, value] : entries(ctx, node)) {
    const std::string& field = key.Scalar();
    if (std::find(kExperimentFields.begin(), kExperimentFields.end(), field) == kExperimentFields.end()) {
      std::string hint = did_you_mean(field, kExperimentFields);
      if (find_key(field)) hint = " ('" + field + "' is a config key: put it under config:)";
      if (find_stop_spec(field)) hint = " ('" + field + "' is a stop criterion: put it under stop:)";
      ctx.fail(key, "unknown field '" + field + "'" + hint + ", expected " + join_names(kExperimentFields));
    }
    fields.emplace(field, std::make_pair(key, value));
  }
  for (const char* required : {"env", "algorithm", "stop"}) {
    if (!fields.count(required)) ctx.fail(name_node, std::string("missing '") + required + "'");
  }
  const auto& [env_key, env_value] = fields.at("env");
  experiment.env = read_string(ctx, env_key, env_value, "env");
  experiment.origins["env"] = ctx.origin(env_key);
  const auto& [algorithm_key, algorithm_value] = fields.at("algorithm");
  experiment.algorithm = read_algorithm(ctx, algorithm_key, algorithm_value);
  experiment.origins["algorithm"] = ctx.origin(algorithm_key);
  experiment.config.apply_algorithm_defaults(experiment.algorithm);
  read_stop(ctx, fields.at("stop").first, fields.at("stop").second, experiment);
  if (fields.count("config")) read_config(ctx, fields.at("config").first, fields.at("config").second, experiment);
  if (fields.count("plugins")) {
    const auto& [key, value] = fields.at("plugins");
    for (const auto& path : one_or_list(ctx, key, value, "'plugins'", "a list of paths")) {
      // A path, or {path, sha256} as params.yaml records it.
      const YAML::Node text_node = path.IsMap() ? path["path"] : path;
      if (path.IsMap() && !text_node) ctx.fail(path, "a plugin entry needs 'path'");
      const std::string text = read_string(ctx, path, text_node, "plugins");
      std::filesystem::path resolved(text);
      if (resolved.is_relative()) resolved = std::filesystem::absolute(base_dir / resolved);
      PluginRef plugin{resolved.lexically_normal().string(), ""};
      if (path.IsMap() && path["sha256"] && !path["sha256"].Scalar().empty()) {
        plugin.sha256 = read_string(ctx, path, path["sha256"], "plugins");
      }
      experiment.plugins.push_back(std::move(plugin));
    }
  }
  if (fields.count("env_config")) {
    const auto& [key, value] = fields.at("env_config");
    if (!value.IsMap() && !value.IsNull()) {
      ctx.fail(key, "'env_config': got " + describe(value) + ", expected a mapping of the env's keyword arguments");
    }
    if (value.IsMap()) experiment.env_config = yaml_to_json(ctx, value);
    experiment.origins["env_config"] = ctx.origin(key);
  }
  if (fields.count("python_path")) {
    const auto& [key, value] = fields.at("python_path");
    for (const auto& dir : one_or_list(ctx, key, value, "'python_path'", "a directory or a list of directories")) {
      std::filesystem::path resolved(read_string(ctx, dir, dir, "python_path"));
      if (resolved.is_relative()) resolved = std::filesystem::absolute(base_dir / resolved);
      resolved = resolved.lexically_normal();
      if (resolved.filename().empty() && resolved.has_parent_path()) resolved = resolved.parent_path();  // "dir/." -> "dir"
      experiment.python_path.push_back(resolved.string());
    }
  }
  if (fields.count("tune")) {
    const auto& [key, value] = fields.at("tune");
    experiment.tune = yaml_to_json(ctx, value);
    record_origins(ctx, key, value, "tune", experiment.origins);
  }
  read_multi_agent_fields(ctx, fields, experiment);
  return experiment;
}

// ---- writing ----

// True when a plain scalar `text` would not read back as the string `text`.
bool needs_quotes(const std::string& text) { return !plain_scalar_to_json(text).is_string(); }

void emit_json(YAML::Emitter& out, const nlohmann::json& value) {
  if (value.is_object()) {
    out << YAML::BeginMap;
    for (const auto& [key, element] : value.items()) {
      out << YAML::Key << key << YAML::Value;
      emit_json(out, element);
    }
    out << YAML::EndMap;
  } else if (value.is_array()) {
    out << YAML::Flow << YAML::BeginSeq;
    for (const auto& element : value) emit_json(out, element);
    out << YAML::EndSeq;
  } else if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    if (needs_quotes(text)) out << YAML::DoubleQuoted;
    out << text;
  } else if (value.is_boolean()) {
    out << (value.get<bool>() ? "true" : "false");
  } else if (value.is_number_integer()) {
    out << value.get<int64_t>();
  } else if (value.is_number()) {
    out << format_double(value.get<double>());
  } else {
    out << YAML::Null;
  }
}

}  // namespace

std::vector<Experiment> parse_experiments(const std::string& yaml_text, const std::string& source,
                                          const std::filesystem::path& base_dir) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& error) {
    const std::string line = error.mark.is_null() ? "" : ":" + std::to_string(error.mark.line + 1);
    const std::string column = error.mark.is_null() ? "" : ", column " + std::to_string(error.mark.column + 1);
    throw ConfigError(source + line + ": YAML syntax error" + column + ": " + error.msg);
  }
  if (root.IsNull()) throw ConfigError(source + ": no experiments (the file is empty)");
  if (!root.IsMap()) {
    throw ConfigError(source + ":" + std::to_string(root.Mark().line + 1) + ": expected a mapping of experiment names to experiments, got " +
                      describe(root));
  }
  std::vector<Experiment> experiments;
  const Context file_ctx{source, "?"};
  for (const auto& [name, node] : entries(file_ctx, root)) experiments.push_back(read_experiment(source, base_dir, name, node));
  return experiments;
}

std::vector<Experiment> load_experiments(const std::filesystem::path& path) {
  std::string text;
  try {
    text = read_file(path);
  } catch (const std::system_error& error) {
    throw ConfigError(path.string() + ": cannot read the experiment file: " + file_error_reason(error));
  }
  return parse_experiments(text, path.string(), path.parent_path());
}

std::string experiment_to_yaml(const Experiment& experiment) {
  const nlohmann::json json = experiment_to_json(experiment);
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << experiment.name << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "env" << YAML::Value;
  emit_json(out, json["env"]);
  if (!experiment.env_config.empty()) {
    out << YAML::Key << "env_config" << YAML::Value;
    emit_json(out, experiment.env_config);
  }
  out << YAML::Key << "algorithm" << YAML::Value << algorithm_name(experiment.algorithm);
  out << YAML::Key << "stop" << YAML::Value;
  emit_json(out, json["stop"]);
  out << YAML::Key << "config" << YAML::Value << YAML::BeginMap;
  for (const auto& key : config_schema()) {  // schema order, not JSON's sorted order
    if (!key.applies_to(experiment.algorithm)) continue;
    out << YAML::Key << key.name << YAML::Value;
    emit_json(out, json["config"][key.name]);
  }
  out << YAML::EndMap;
  if (!experiment.plugins.empty()) {
    out << YAML::Key << "plugins" << YAML::Value;
    emit_json(out, json["plugins"]);
  }
  if (!experiment.python_path.empty()) {
    out << YAML::Key << "python_path" << YAML::Value;
    emit_json(out, json["python_path"]);
  }
  if (!experiment.tune.is_null()) {
    out << YAML::Key << "tune" << YAML::Value;
    emit_json(out, experiment.tune);
  }
  const nlohmann::json multi_agent = experiment.multi_agent.to_json();
  for (const auto& [field, value] : multi_agent.items()) {
    out << YAML::Key << field << YAML::Value;
    emit_json(out, value);
  }
  out << YAML::EndMap << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace rlx
