// The keys rank 0 of a learner group publishes in its c10d store for the other ranks.
#pragma once

namespace rlx::group_keys {

constexpr const char* kPayload = "rlx/payload";        // the experiment, as JSON
constexpr const char* kDevice = "rlx/device";          // the device setting ("cpu", "cuda", "cuda:N")
constexpr const char* kTimeout = "rlx/timeout_ms";     // every collective's timeout
constexpr const char* kLogDir = "rlx/log_dir";         // where the ranks' logs go ("" for none)
constexpr const char* kElastic = "rlx/elastic_group";  // "1" when the group is elastic

}  // namespace rlx::group_keys
