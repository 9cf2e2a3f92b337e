// The rlx release, shown by `rlx --version` and in every process's first log line.
#pragma once

namespace rlx {

constexpr const char* kRlxVersion = "0.1.0";

}  // namespace rlx
