#include "watch/plot_data.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include <nlohmann/json.hpp>

#include "core/file_read.h"
#include "core/results.h"
#include "watch/plot_axes.h"

namespace rlx {

namespace {

constexpr const char* kProgressFile = "progress.csv";
constexpr const char* kParamsFile = "params.yaml";

// The text of a file to plot; std::runtime_error "FILE: cannot be read: REASON" and `hint` when
// it cannot be read.
std::string read_plot_file(const std::filesystem::path& file, const std::string& hint) {
  try {
    return read_file(file);
  } catch (const std::system_error& error) {
    throw std::runtime_error(file.string() + ": cannot be read: " + file_error_reason(error) + hint);
  }
}

double cell_number(const std::string& cell) {
  if (cell.empty()) return std::numeric_limits<double>::quiet_NaN();
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(cell.c_str(), &end);
  if (end != cell.c_str() + cell.size() || errno == ERANGE) return std::numeric_limits<double>::quiet_NaN();
  return value;
}

// The experiment name and the grouping key of a params.yaml's text.
void read_params(const std::filesystem::path& file, TrialResults& trial) {
  std::ifstream in(file);
  if (!in) return;
  std::string line;
  std::string key;
  bool in_config = false;
  while (std::getline(in, line)) {
    const size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos) continue;
    if (first == 0 && trial.experiment.empty() && line.back() == ':') trial.experiment = line.substr(0, line.size() - 1);
    if (first == 2) in_config = line == "  config:";
    const size_t colon = line.find(": ", first);
    if (in_config && first == 4 && colon != std::string::npos) {
      trial.config[line.substr(first, colon - first)] = line.substr(colon + 2);
    }
    if (first > 0 && line.compare(first, 5, "seed:") == 0) continue;  // runs of one experiment differ in it
    key += line + "\n";
  }
  trial.config_key = key;
}

std::string param_text(const nlohmann::json& value) {
  if (value.is_number()) return format_compact(value.get<double>());
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

std::vector<std::pair<std::string, std::string>> param_list(const nlohmann::json& params) {
  std::vector<std::pair<std::string, std::string>> list;
  if (!params.is_object()) return list;
  for (const auto& [name, value] : params.items()) list.emplace_back(name, param_text(value));
  return list;  // nlohmann's objects iterate sorted by key
}

}  // namespace

std::optional<size_t> TrialResults::column_index(const std::string& column) const {
  const auto it = std::find(columns.begin(), columns.end(), column);
  if (it == columns.end()) return std::nullopt;
  return static_cast<size_t>(it - columns.begin());
}

Series TrialResults::series(const std::string& x, const std::string& y) const {
  const std::optional<size_t> xi = column_index(x);
  const std::optional<size_t> yi = column_index(y);
  if (!xi || !yi) {
    throw std::invalid_argument((dir / kProgressFile).string() + " has no column '" + (xi ? y : x) + "'");
  }
  Series series;
  for (const std::vector<double>& row : cells) {
    if (std::isfinite(row[*xi]) && std::isfinite(row[*yi])) {
      series.x.push_back(row[*xi]);
      series.y.push_back(row[*yi]);
    }
  }
  return series;
}

TrialResults read_trial(const std::filesystem::path& dir) {
  const std::filesystem::path file = dir / kProgressFile;
  std::istringstream in(read_plot_file(file, " (is '" + dir.string() + "' a trial folder?)"));
  TrialResults trial;
  trial.dir = dir;
  trial.name = std::filesystem::absolute(dir).lexically_normal().filename().string();
  if (trial.name.empty()) trial.name = std::filesystem::absolute(dir).lexically_normal().parent_path().filename().string();
  std::string line;
  if (!std::getline(in, line) || line.empty()) throw std::runtime_error(file.string() + " is empty: no header row");
  trial.columns = parse_csv_line(line);
  while (std::getline(in, line)) {
    const std::vector<std::string> cells = parse_csv_line(line);
    if (cells.size() != trial.columns.size()) continue;  // a row a running trial is still writing
    std::vector<double> row;
    row.reserve(cells.size());
    for (const std::string& cell : cells) row.push_back(cell_number(cell));
    trial.cells.push_back(std::move(row));
  }
  read_params(dir / kParamsFile, trial);
  if (trial.experiment.empty()) {
    trial.experiment = std::filesystem::absolute(dir).lexically_normal().parent_path().filename().string();
  }
  return trial;
}

std::vector<std::filesystem::path> find_trial_dirs(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) throw std::runtime_error("'" + dir.string() + "' is no folder");
  if (fs::exists(dir / kProgressFile)) return {dir};
  std::vector<fs::path> found;
  const auto children = [](const fs::path& parent) {
    std::vector<fs::path> dirs;
    for (const fs::directory_entry& entry : fs::directory_iterator(parent)) {
      if (entry.is_directory() && entry.path().filename().string().rfind('.', 0) != 0) dirs.push_back(entry.path());
    }
    std::sort(dirs.begin(), dirs.end());
    return dirs;
  };
  for (const fs::path& child : children(dir)) {
    if (fs::exists(child / kProgressFile)) {
      found.push_back(child);
      continue;
    }
    for (const fs::path& grandchild : children(child)) {
      if (fs::exists(grandchild / kProgressFile)) found.push_back(grandchild);
    }
  }
  if (found.empty()) {
    throw std::runtime_error("'" + dir.string() + "' holds no trial: no progress.csv in it or in the folders below it");
  }
  return found;
}

std::vector<TrialGroup> group_by_config(const std::vector<TrialResults>& trials) {
  std::vector<TrialGroup> groups;
  std::map<std::string, size_t> group_of_key;
  for (size_t i = 0; i < trials.size(); ++i) {
    const std::string& key = trials[i].config_key;
    if (!key.empty()) {
      const auto it = group_of_key.find(key);
      if (it != group_of_key.end()) {
        groups[it->second].members.push_back(i);
        continue;
      }
      group_of_key[key] = groups.size();
    }
    groups.push_back({trials[i].experiment, {i}});
  }
  return groups;
}

std::optional<double> value_at(const Series& series, double x) {
  if (series.x.empty() || x < series.x.front() || x > series.x.back()) return std::nullopt;
  const auto upper = std::upper_bound(series.x.begin(), series.x.end(), x);
  if (upper == series.x.end()) return series.y.back();  // x is the last row's
  const size_t hi = static_cast<size_t>(upper - series.x.begin());
  const size_t lo = hi - 1;
  const double span = series.x[hi] - series.x[lo];
  if (span <= 0) return series.y[lo];
  const double t = (x - series.x[lo]) / span;
  return series.y[lo] + t * (series.y[hi] - series.y[lo]);
}

Band band_of(const std::vector<Series>& runs) {
  std::set<double> grid;
  for (const Series& run : runs) grid.insert(run.x.begin(), run.x.end());
  Band band;
  for (double x : grid) {
    double sum = 0;
    double low = std::numeric_limits<double>::infinity();
    double high = -low;
    int count = 0;
    for (const Series& run : runs) {
      const std::optional<double> y = value_at(run, x);
      if (!y) continue;
      sum += *y;
      low = std::min(low, *y);
      high = std::max(high, *y);
      ++count;
    }
    if (count == 0) continue;
    band.x.push_back(x);
    band.mean.push_back(sum / count);
    band.min.push_back(low);
    band.max.push_back(high);
    band.runs.push_back(count);
  }
  return band;
}

std::vector<ExploitEdge> read_pbt_edges(const std::filesystem::path& log) {
  std::istringstream in(read_plot_file(log, ""));
  std::vector<ExploitEdge> edges;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    const nlohmann::json entry = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (entry.is_discarded()) continue;  // torn by a crash; the tuner starts the next entry on a fresh line
    try {
      ExploitEdge edge;
      edge.donor = entry.at("donor").get<std::string>();
      edge.receiver = entry.at("trial").get<std::string>();
      edge.donor_step = entry.at("donor_timesteps_total").get<double>();
      edge.step = entry.at("timesteps_total").get<double>();
      edge.iteration = entry.at("training_iteration").get<long>();
      edge.new_params = param_list(entry.at("new_params"));
      edge.old_params = param_list(entry.value("old_params", nlohmann::json::object()));
      edges.push_back(std::move(edge));
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(log.string() + ":" + std::to_string(number) + ": not an exploit entry (" + e.what() + ")");
    }
  }
  return edges;
}

}  // namespace rlx
