// The config reference (docs/config.md), generated from the schema so it cannot go stale.
#pragma once

#include <string>

namespace rlx {

// Markdown with every config key (type, default, allowed values, meaning), one table per
// algorithm scope, and the stop criteria; docs/config.md holds exactly this text.
std::string schema_markdown();

}  // namespace rlx
