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

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  return text;
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
  if (fs::exists(dir_ / kCsv)) {
    const std::string text = read_file(dir_ / kCsv);
    const size_t end = text.find('\n');
    if (end != std::string::npos && end > 0) columns_ = parse_csv_line(std::string_view(text).substr(0, end));
  }
  if (fs::exists(dir_ / kJsonl)) {
    const auto lines = lines_of(read_file(dir_ / kJsonl));
    if (!lines.empty()) last_row_ = nlohmann::json::parse(lines.back(), nullptr, false);
    if (last_row_.is_discarded()) last_row_ = nullptr;
  }
}

void ResultsWriter::repair_partial_lines() const {
  for (const char* name : {kJsonl, kCsv}) {
    const fs::path path = dir_ / name;
    if (!fs::exists(path)) continue;
    const std::string text = read_file(path);
    if (text.empty() || text.back() == '\n') continue;
    const size_t last = text.rfind('\n');
    write_file_atomic(path, last == std::string::npos ? std::string() : text.substr(0, last + 1));
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
  const auto limit = static_cast<double>(iteration);
  if (fs::exists(dir_ / kJsonl)) {
    std::vector<std::string> kept;
    nlohmann::json last = nullptr;
    for (const auto& line : lines_of(read_file(dir_ / kJsonl))) {
      const auto row = nlohmann::json::parse(line, nullptr, false);
      const auto row_iteration = row.is_object() ? iteration_of(row) : std::nullopt;
      if (row_iteration && *row_iteration > limit) continue;
      kept.push_back(line);
      if (!row.is_discarded()) last = row;
    }
    write_file_atomic(dir_ / kJsonl, join_lines(kept));
    last_row_ = last;
  }
  if (fs::exists(dir_ / kCsv) && !columns_.empty()) {
    const auto column = std::find(columns_.begin(), columns_.end(), "training_iteration") - columns_.begin();
    const auto lines = lines_of(read_file(dir_ / kCsv));
    std::vector<std::string> kept;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (i > 0 && static_cast<size_t>(column) < columns_.size()) {
        const auto cells = parse_csv_line(lines[i]);
        if (static_cast<size_t>(column) < cells.size()) {
          const auto value = parse_value(ConfigType::kFloat, cells[static_cast<size_t>(column)]);
          if (value && std::get<double>(*value) > limit) continue;
        }
      }
      kept.push_back(lines[i]);
    }
    write_file_atomic(dir_ / kCsv, join_lines(kept));
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
