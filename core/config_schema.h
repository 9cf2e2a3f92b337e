// The config schema: every key rlx understands, declared once: type, default, range, meaning, and
// the member of the typed config (core/algorithm_config.h) it is bound to, which also says which
// algorithms read it. Add a key by adding its member and one line to the table in config_schema.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/algorithm_config.h"
#include "core/did_you_mean.h"

namespace rlx {

enum class AlgorithmKind { kPPO, kDQN, kAPPO, kSAC };

// Every algorithm, in the order messages and docs list them.
constexpr AlgorithmKind kAllAlgorithms[] = {AlgorithmKind::kPPO, AlgorithmKind::kAPPO, AlgorithmKind::kDQN,
                                           AlgorithmKind::kSAC};

// "PPO", "DQN", "APPO" or "SAC".
const char* algorithm_name(AlgorithmKind algorithm);
// The algorithm called `name` ("PPO"/"APPO"/"DQN"/"SAC", case-sensitive); nullopt when there is none.
std::optional<AlgorithmKind> parse_algorithm(std::string_view name);
// Every algorithm's name, for messages and did-you-mean: {"PPO", "APPO", "DQN", "SAC"}.
const std::vector<std::string>& algorithm_names();
// "expected \"PPO\", \"APPO\", \"DQN\" or \"SAC\"" for an unknown algorithm's message.
std::string expected_algorithm_text();
// APPO trains with PPO's learner and reads every PPO key besides its own.
inline bool reads_ppo_keys(AlgorithmKind algorithm) {
  return algorithm == AlgorithmKind::kPPO || algorithm == AlgorithmKind::kAPPO;
}

enum class ConfigType { kInt, kFloat, kBool, kString, kIntList };
// One config value; the alternative always matches the key's ConfigType (kFloat holds double).
using ConfigValue = std::variant<int64_t, double, bool, std::string, IntList>;

// Which table of docs/config.md a key belongs to: kCommon keys are read by every algorithm,
// kPPO keys by PPO and APPO, kAPPO keys by APPO alone, kDQN keys by DQN (and some by SAC too),
// kSAC keys by SAC alone. KeySpec::applies_to says exactly who reads a key.
enum class KeyScope { kCommon, kPPO, kDQN, kAPPO, kSAC };

// A member's value as a ConfigValue of its key's type, and back (the value already checked).
inline ConfigValue to_config_value(int64_t value) { return value; }
inline ConfigValue to_config_value(double value) { return value; }
inline ConfigValue to_config_value(bool value) { return value; }
inline ConfigValue to_config_value(const std::string& value) { return value; }
inline ConfigValue to_config_value(const IntList& value) { return value; }
inline ConfigValue to_config_value(Schedule value) { return std::string(schedule_name(value)); }
template <typename T>
void from_config_value(const ConfigValue& value, T& member) { member = std::get<T>(value); }
// "constant" or "linear" (the schema's choices make anything else impossible).
void from_config_value(const ConfigValue& value, Schedule& member);

// Reads and writes the member of a typed config section (CommonConfig, PpoConfig, DqnConfig)
// that a key is bound to.
template <typename Section>
struct MemberBinding {
  std::function<ConfigValue(const Section&)> read;
  std::function<void(Section&, const ConfigValue&)> write;
};
using KeyBinding = std::variant<MemberBinding<CommonConfig>, MemberBinding<PpoConfig>, MemberBinding<DqnConfig>,
                                MemberBinding<AppoConfig>, MemberBinding<SacConfig>>;

// One schema entry. Build with the helpers int_key/float_key/... and chain the modifiers.
struct KeySpec {
  std::string name;
  ConfigType type = ConfigType::kInt;
  ConfigValue default_value;
  std::string description;
  std::vector<KeyBinding> bindings;  // the members holding the value; a shared key has one per algorithm
  std::optional<double> min, max;  // bounds on numbers, and on each element of an int list
  bool min_exclusive = false, max_exclusive = false;
  std::vector<std::string> choices;                      // allowed strings (empty: any, unless `check` is set)
  bool (*check)(const std::string& value) = nullptr;     // custom string predicate
  std::string check_expected;                            // what `check` accepts, for messages
  // Defaults that differ for one algorithm (e.g. APPO's max_policy_lag), applied by
  // Config::apply_algorithm_defaults.
  std::vector<std::pair<AlgorithmKind, ConfigValue>> algorithm_defaults;

  // Binds the key to `member` of a typed config section (once per section that reads it).
  template <typename Section, typename T>
  KeySpec&& to(T Section::*member) && {
    bindings.push_back(MemberBinding<Section>{[member](const Section& s) { return to_config_value(s.*member); },
                                              [member](Section& s, const ConfigValue& v) { from_config_value(v, s.*member); }});
    return std::move(*this);
  }
  KeySpec&& at_least(double bound) &&;
  KeySpec&& above(double bound) &&;
  KeySpec&& at_most(double bound) &&;
  KeySpec&& below(double bound) &&;
  KeySpec&& one_of(std::vector<std::string> allowed) &&;
  KeySpec&& matching(bool (*predicate)(const std::string&), std::string expected) &&;
  KeySpec&& default_for(AlgorithmKind algorithm, ConfigValue value) &&;

  // The default an experiment of `algorithm` starts with.
  const ConfigValue& default_value_for(AlgorithmKind algorithm) const;

  // The key's docs table, from its bindings: kCommon when every algorithm reads it.
  KeyScope scope() const;
  // True when an experiment of `algorithm` may set this key (a section it reads binds it).
  bool applies_to(AlgorithmKind algorithm) const;
  // The range or choices alone ("in (0, 1]", "\"constant\", \"linear\""); empty when any value of the type is fine.
  std::string allowed() const;
  // What a valid value looks like, e.g. "a float in (0, 1]" or "one of \"constant\", \"linear\"".
  std::string expected() const;
  // Why `value` (of the right type) is not allowed; nullopt when it is.
  std::optional<std::string> problem_with(const ConfigValue& value) const;
};

KeySpec int_key(std::string name, int64_t default_value, std::string description);
KeySpec float_key(std::string name, double default_value, std::string description);
KeySpec bool_key(std::string name, bool default_value, std::string description);
KeySpec string_key(std::string name, std::string default_value, std::string description);
KeySpec int_list_key(std::string name, IntList default_value, std::string description);

// Every key, in table order (common, then PPO, then APPO, then DQN, then SAC).
const std::vector<KeySpec>& config_schema();
// The entry for `name`; nullptr when no key has that name.
const KeySpec* find_key(std::string_view name);

// Sets every member of `section` bound to a key to the key's default (the structs' constructors).
void apply_schema_defaults(CommonConfig& section);
void apply_schema_defaults(PpoConfig& section);
void apply_schema_defaults(DqnConfig& section);
void apply_schema_defaults(AppoConfig& section);
void apply_schema_defaults(SacConfig& section);

// ConfigError "config key 'k': got V, expected E" for the first member of `section` that its key's
// range or choices refuse (for configs built in code, as the learners' constructors take them).
void check_config(const CommonConfig& section);
void check_config(const PpoConfig& section);
void check_config(const DqnConfig& section);
void check_config(const AppoConfig& section);
void check_config(const SacConfig& section);

// "an integer", "a float", "a bool (true/false)", "a string", "a list of integers".
const char* type_description(ConfigType type);
// A value as text: 3e-4 -> "0.0003", [64, 64] -> "[64, 64]", strings unquoted.
std::string format_value(const ConfigValue& value);
// The shortest decimal text that reads back to exactly `value` (always with '.', 'e', "inf" or "nan").
std::string format_double(double value);
// A number for people to read on a terminal (the last lines of rlx train, evaluate and tune,
// tune's status table): rounded to 4 significant digits, keeping every digit before the point,
// then written as format_double writes it: 0.83780000034 -> "0.8378", -1.77123 -> "-1.771",
// 500 -> "500.0", 5837.6 -> "5838.0", 3.14159e-5 -> "3.142e-05". Files keep format_double's
// full precision.
std::string format_readable(double value);
// `text` read as a value of `type` (ints also accept integral floats like 1e5; lists accept
// "[1, 2]", "[1]", "[]" or "1,2", never a lone "1"); nullopt when the text is not of that type.
// Ranges are not checked.
std::optional<ConfigValue> parse_value(ConfigType type, std::string_view text);

// How a list is written where a value is given: in a YAML or JSON file ([64, 64]) or in --set (64,64).
enum class ListSyntax { kFile, kCommandLine };
// For a list key given one integer (`hidden_sizes: 64`), how to write a list instead, to append
// to "expected ...": ": [64] for a list of one, [64, 64] for a list of two" (kCommandLine:
// ": hidden_sizes=[64] for a list of one, hidden_sizes=64,64 for a list of two"); "" for any
// other key or text.
std::string lone_integer_hint(const KeySpec& key, std::string_view text, ListSyntax syntax);

}  // namespace rlx
