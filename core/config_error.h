// ConfigError: the one exception type for a bad experiment file, config value or override.
#pragma once

#include <stdexcept>

namespace rlx {

// A user-facing configuration problem; the message names where (file, line, key) and what was expected.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace rlx
