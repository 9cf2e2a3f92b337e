// Comma-separated lists from the command line: numbers ("0.1,-2,3e-4") and words ("fp32,bf16").
#pragma once

#include <string>
#include <vector>

namespace rlx::cli {

// Parses a comma-separated list of numbers; throws UsageError naming the option, the item's
// position and its text when an item is not a finite number.
std::vector<double> parse_number_list(const std::string& text, const std::string& option);

// Parses a comma-separated list of words, each one of `choices`; throws UsageError naming the
// option, the item and the choices when one is not (or the list is empty).
std::vector<std::string> parse_word_list(const std::string& text, const std::string& option,
                                         const std::vector<std::string>& choices);

}  // namespace rlx::cli
