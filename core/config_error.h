// ConfigError: the one exception type for a bad experiment file, config value or override, and
// EnvPluginError, a ConfigError for a plugin that cannot be used.
#pragma once

#include <stdexcept>

namespace rlx {

// A user-facing configuration problem; the message names where (file, line, key) and what was expected.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An env plugin that cannot be used: its file missing or a directory, not a loadable library,
// without rlx's entry points, built for another ABI, or its registration failed or took an id
// already registered. Bad input, like every ConfigError: every command exits with status 2.
class EnvPluginError : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

}  // namespace rlx
