// Typo suggestions for error messages ("did you mean ..."), header-only so that env plugins'
// headers and every library can use them.
#pragma once

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rlx {

// `text` with its ASCII letters in lower case.
inline std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Levenshtein distance between two strings.
inline size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// A candidate that `name` begins or names a word of, case-insensitively, for a name of at least
// 4 characters: "entropy" -> "entropy_coeff", "clip" -> "clip_param", "workers" ->
// "num_workers", "cartpole" -> "CartPole-v1" (words are split at any character that is not a
// letter or digit). Prefixes win over words, then the shortest candidate, then the first
// listed; nullopt when none matches.
inline std::optional<std::string> containing_match(std::string_view name, const std::vector<std::string>& candidates) {
  constexpr size_t kMinLength = 4;
  if (name.size() < kMinLength) return std::nullopt;
  const auto is_word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  const std::string wanted = ascii_lower(name);
  // Rank 0: `name` is a prefix of the candidate; 1: one of its words.
  std::optional<std::string> best;
  std::pair<int, size_t> best_rank{2, 0};
  for (const auto& candidate : candidates) {
    const std::string text = ascii_lower(candidate);
    if (text.size() <= wanted.size()) continue;
    int rank = 2;
    if (text.compare(0, wanted.size(), wanted) == 0) {
      rank = 0;
    } else {
      for (size_t at = text.find(wanted); at != std::string::npos; at = text.find(wanted, at + 1)) {
        const size_t end = at + wanted.size();
        if ((at == 0 || !is_word_char(text[at - 1])) && (end == text.size() || !is_word_char(text[end]))) {
          rank = 1;
          break;
        }
      }
    }
    const std::pair<int, size_t> candidate_rank{rank, text.size()};
    if (rank < 2 && (!best || candidate_rank < best_rank)) {
      best = candidate;
      best_rank = candidate_rank;
    }
  }
  return best;
}

// The likely intended candidate for a `name` that matches none: the closest by case-insensitive
// edit distance when close enough to be a typo (at most max(2, |name| / 3) edits), else
// containing_match's (a prefix or a whole word of a longer name); nullopt when neither finds one.
inline std::optional<std::string> closest_match(std::string_view name, const std::vector<std::string>& candidates) {
  const std::string wanted = ascii_lower(name);
  std::optional<std::string> best;
  size_t best_distance = std::max<size_t>(2, name.size() / 3) + 1;
  for (const auto& candidate : candidates) {
    const size_t distance = edit_distance(wanted, ascii_lower(candidate));
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best ? best : containing_match(name, candidates);
}

}  // namespace rlx
