// Comma-separated number lists from the command line ("0.1,-2,3e-4").
#pragma once

#include <string>
#include <vector>

namespace rlx::cli {

// Parses a comma-separated list of numbers; throws UsageError naming the option, the item's
// position and its text when an item is not a finite number.
std::vector<double> parse_number_list(const std::string& text, const std::string& option);

}  // namespace rlx::cli
