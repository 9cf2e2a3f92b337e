// ResultsWriter: result.jsonl, progress.csv, params.yaml, result.json.
#include "core/results.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "core/atomic_file.h"
#include "core/config_schema.h"
#include "core/file_lines.h"

namespace rlx {
namespace fs = std::filesystem;
namespace {

constexpr const char* kJsonl = "result.jsonl";
constexpr const char* kCsv = "progress.csv";

void flatten(const nlohmann::json& value, const std::string& prefix, std::map<std::string, nlohmann::json>& out) {
  if (value.is_object()) {
    for (const auto& [key, element] : value.items()) flatten(element, prefix.empty() ? key : prefix + "/" + key, out);
  } else {
    out[prefix] = value;
  }
}

std::string csv_cell(const nlohmann::json& value) {
  if (value.is_null()) return "";
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float()) {
    const double v = value.get<double>();
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  }
  return value.dump();
}

// Cuts the file at `path` back to `size` bytes (nothing when it is that long) and syncs it.
void cut_file(const fs::path& path, uintmax_t size) {
  if (fs::file_size(path) == size) return;
  fs::resize_file(path, size);
  fsync_path(path);
}

// The training_iteration of a row, if it has a numeric one.
std::optional<double> iteration_of(const nlohmann::json& row) {
  const auto it = row.find("training_iteration");
  if (it == row.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

}  // namespace

const std::vector<std::string>& standard_result_keys() {
  static const std::vector<std::string> keys = {"training_iteration", "timesteps_total",    "time_total_s",
                                                "episodes_total",     "episode_return_mean", "episode_return_min",
                                                "episode_return_max", "episode_len_mean",    "env_steps_per_s"};
  return keys;
}

std::string csv_line(const std::vector<std::string>& cells) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i) line += ',';
    const std::string& cell = cells[i];
    if (cell.find_first_of(",\"\n\r") == std::string::npos) {
      line += cell;
      continue;
    }
    line += '"';
    for (char c : cell) {
      if (c == '"') line += '"';
      line += c;
    }
    line += '"';
  }
  return line;
}

std::vector<std::string> parse_csv_line(std::string_view line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cells.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cells.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.emplace_back();
    } else if (c != '\r') {
      cells.back() += c;
    }
  }
  return cells;
}

ResultsWriter::ResultsWriter(fs::path trial_dir) : dir_(std::move(trial_dir)) {
  fs::create_directories(dir_);
  repair_partial_lines();
  // Only the ends of the files are read: a long run's results grow by a row per iteration.
  const std::string header = first_line(dir_ / kCsv);
  if (!header.empty()) columns_ = parse_csv_line(header);
  for_each_line_backwards(dir_ / kJsonl, [&](const std::string& line, uintmax_t) {
    if (line.empty()) return true;
    last_row_ = nlohmann::json::parse(line, nullptr, false);
    if (last_row_.is_discarded()) last_row_ = nullptr;
    return false;
  });
}

void ResultsWriter::repair_partial_lines() const {
  for (const char* name : {kJsonl, kCsv}) {
    const fs::path path = dir_ / name;
    std::error_code missing;
    const uintmax_t size = fs::file_size(path, missing);
    if (missing) continue;
    const uintmax_t complete = size_through_last_newline(path);
    if (complete == size) continue;
    fs::resize_file(path, complete);  // the partial line goes; one ftruncate, then synced
    fsync_path(path);
  }
}

std::map<std::string, nlohmann::json> flatten_result_row(const nlohmann::json& row) {
  std::map<std::string, nlohmann::json> flat;
  flatten(row, "", flat);
  return flat;
}

void ResultsWriter::write_params(std::string_view yaml) const { write_file_atomic(dir_ / "params.yaml", yaml); }

void ResultsWriter::append(const nlohmann::json& row) {
  if (!row.is_object()) throw std::invalid_argument("a result row must be a JSON object, got " + row.dump());
  const std::map<std::string, nlohmann::json> flat = flatten_result_row(row);
  if (columns_.empty()) {
    columns_ = standard_result_keys();
    for (const auto& [key, value] : flat) {  // std::map: sorted
      if (std::find(columns_.begin(), columns_.end(), key) == columns_.end()) columns_.push_back(key);
    }
    write_file_atomic(dir_ / kCsv, csv_line(columns_) + "\n");
  }
  std::error_code missing;
  const uintmax_t jsonl_size = fs::exists(dir_ / kJsonl, missing) ? fs::file_size(dir_ / kJsonl) : 0;
  append_line_durable(dir_ / kJsonl, row.dump());
  std::vector<std::string> cells;
  cells.reserve(columns_.size());
  for (const auto& column : columns_) {
    const auto it = flat.find(column);
    cells.push_back(it == flat.end() ? std::string() : csv_cell(it->second));
  }
  try {
    append_line_durable(dir_ / kCsv, csv_line(cells));
  } catch (const std::system_error&) {
    std::error_code ignored;  // both files hold the row, or neither
    fs::resize_file(dir_ / kJsonl, jsonl_size, ignored);
    throw;
  }
  last_row_ = row;
}

void ResultsWriter::truncate_after(int64_t iteration) {
  // Rows are in iteration order: those after `iteration` are at the end, found from there.
  const auto limit = static_cast<double>(iteration);
  if (fs::exists(dir_ / kJsonl)) {
    uintmax_t cut = fs::file_size(dir_ / kJsonl);
    nlohmann::json last = nullptr;
    for_each_line_backwards(dir_ / kJsonl, [&](const std::string& line, uintmax_t offset) {
      if (line.empty()) return true;
      const auto row = nlohmann::json::parse(line, nullptr, false);
      const auto row_iteration = row.is_object() ? iteration_of(row) : std::nullopt;
      if (row_iteration && *row_iteration > limit) {
        cut = offset;
        return true;
      }
      if (!row.is_discarded()) last = row;
      return false;
    });
    cut_file(dir_ / kJsonl, cut);
    last_row_ = last;
  }
  if (fs::exists(dir_ / kCsv) && !columns_.empty()) {
    const auto column = static_cast<size_t>(std::find(columns_.begin(), columns_.end(), "training_iteration") - columns_.begin());
    uintmax_t cut = fs::file_size(dir_ / kCsv);
    for_each_line_backwards(dir_ / kCsv, [&](const std::string& line, uintmax_t offset) {
      if (offset == 0 || column >= columns_.size()) return false;  // the header stays
      if (line.empty()) return true;
      const auto cells = parse_csv_line(line);
      if (column >= cells.size()) return false;
      const auto value = parse_value(ConfigType::kFloat, cells[column]);
      if (!value || std::get<double>(*value) <= limit) return false;
      cut = offset;
      return true;
    });
    cut_file(dir_ / kCsv, cut);
  }
}

void ResultsWriter::write_final(bool stop_reached, const std::optional<fs::path>& last_checkpoint,
                                const nlohmann::json& extra) const {
  nlohmann::json result = last_row_.is_object() ? last_row_ : nlohmann::json::object();
  if (extra.is_object()) {
    for (const auto& [key, value] : extra.items()) result[key] = value;
  }
  result["stop_reached"] = stop_reached;
  result["last_checkpoint"] = last_checkpoint ? nlohmann::json(last_checkpoint->string()) : nlohmann::json();
  write_file_atomic(dir_ / "result.json", result.dump(2) + "\n");
}

}  // namespace rlx
