#include "cli/number_list.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "cli/command.h"

namespace rlx::cli {

std::vector<double> parse_number_list(const std::string& text, const std::string& option) {
  std::vector<double> numbers;
  size_t start = 0;
  for (int position = 1;; ++position) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    char* end = nullptr;
    errno = 0;
    const double value = std::strtod(item.c_str(), &end);
    if (item.empty() || end != item.c_str() + item.size() || errno == ERANGE || !std::isfinite(value)) {
      throw UsageError("--" + option + ": item " + std::to_string(position) + " '" + item +
                       "' is not a number (expected comma-separated numbers)");
    }
    numbers.push_back(value);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return numbers;
}

std::vector<std::string> parse_word_list(const std::string& text, const std::string& option,
                                         const std::vector<std::string>& choices) {
  std::string expected;
  for (const std::string& choice : choices) expected += (expected.empty() ? "" : ", ") + choice;
  std::vector<std::string> words;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (std::find(choices.begin(), choices.end(), item) == choices.end()) {
      throw UsageError("--" + option + " takes " + expected + ", comma-separated; got '" + text + "'");
    }
    words.push_back(std::move(item));
    if (comma == std::string::npos) return words;
    start = comma + 1;
  }
}

}  // namespace rlx::cli
