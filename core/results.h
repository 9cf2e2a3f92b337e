// Per-trial results: params.yaml, result.jsonl and progress.csv (one row per iteration), and
// result.json (final row + stop_reached + last checkpoint), all crash-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace rlx {

// The columns every row has and progress.csv always leads with, in this order.
const std::vector<std::string>& standard_result_keys();

// A result row's leaves by column name: nested objects as "outer/inner" keys, sorted.
std::map<std::string, nlohmann::json> flatten_result_row(const nlohmann::json& row);

// Writes the result files of one trial directory, OUTPUT/<experiment>/<trial>/.
class ResultsWriter {
 public:
  // Opens `trial_dir` (created if missing). Existing result files are continued (resume):
  // the CSV header is kept and a partial last line a crash left behind is dropped.
  explicit ResultsWriter(std::filesystem::path trial_dir);

  const std::filesystem::path& trial_dir() const { return dir_; }
  // progress.csv's columns (empty until the first row fixes them on a fresh trial).
  const std::vector<std::string>& csv_columns() const { return columns_; }
  // The last row appended (null when there is none).
  const nlohmann::json& last_row() const { return last_row_; }

  // Writes params.yaml (the resolved experiment) atomically.
  void write_params(std::string_view yaml) const;

  // Appends a row (a JSON object of numbers, strings, bools; nested objects are flattened to
  // "a/b" columns in the CSV) to result.jsonl in full and to progress.csv under its fixed
  // header: the standard keys, then the first row's other keys sorted; later new keys are
  // kept in result.jsonl only. std::invalid_argument when `row` is not an object; when a write
  // fails (std::system_error), neither file keeps any of the row.
  void append(const nlohmann::json& row);

  // Drops rows whose training_iteration exceeds `iteration` from both files (resuming from
  // a checkpoint older than the last row).
  void truncate_after(int64_t iteration);

  // Writes result.json atomically: the last row plus "stop_reached", "last_checkpoint"
  // (a path string, or null) and the members of `extra` (an object, e.g. {"stopped_by": ...}).
  void write_final(bool stop_reached, const std::optional<std::filesystem::path>& last_checkpoint,
                   const nlohmann::json& extra = nlohmann::json::object()) const;

 private:
  void repair_partial_lines() const;

  std::filesystem::path dir_;
  std::vector<std::string> columns_;
  nlohmann::json last_row_;
};

// One CSV line (RFC 4180 quoting, no newline) of `cells`.
std::string csv_line(const std::vector<std::string>& cells);
// The cells of one CSV line (inverse of csv_line).
std::vector<std::string> parse_csv_line(std::string_view line);

}  // namespace rlx
