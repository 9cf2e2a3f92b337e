// Status table and trials.csv.
#include "tune/status_table.h"

#include <iomanip>
#include <set>
#include <sstream>

#include "core/config_schema.h"
#include "core/results.h"

namespace rlx {
namespace {

std::vector<std::string> param_keys(const std::vector<Trial>& trials) {
  std::set<std::string> keys;
  for (const Trial& trial : trials) {
    for (const auto& [key, value] : trial.params.items()) keys.insert(key);
  }
  return {keys.begin(), keys.end()};
}

std::string cell(const nlohmann::json& value) {
  if (value.is_number_float()) return format_readable(value.get<double>());
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "-";
  return value.dump();
}

std::string optional_cell(const std::optional<double>& value) { return value ? format_readable(*value) : "-"; }

}  // namespace

void StatusTable::set_live(const std::string& trial, const nlohmann::json& row, std::optional<double> metric) {
  live_[trial] = Live{row.value("training_iteration", int64_t{0}), row.value("timesteps_total", int64_t{0}), metric};
}

void StatusTable::clear_live(const std::string& trial) { live_.erase(trial); }

void StatusTable::print(std::ostream& out, const std::vector<Trial>& trials, const TuneSpec& spec, const std::string& note) const {
  const std::vector<std::string> keys = param_keys(trials);
  std::vector<std::string> header = {"trial", "status"};
  header.insert(header.end(), keys.begin(), keys.end());
  header.insert(header.end(), {"iter", "steps", spec.metric, "latest"});
  std::vector<std::vector<std::string>> rows;
  std::map<std::string, int> counts;
  for (const Trial& trial : trials) {
    ++counts[trial_status_name(trial.status)];
    std::vector<std::string> row = {trial.name, trial_status_name(trial.status)};
    for (const auto& key : keys) row.push_back(trial.params.contains(key) ? cell(trial.params.at(key)) : "-");
    int64_t iteration = trial.iteration, timesteps = trial.timesteps;
    std::optional<double> metric = trial.metric;
    if (const auto it = live_.find(trial.name); it != live_.end() && trial.status == TrialStatus::kRunning) {
      iteration = it->second.iteration;
      timesteps = it->second.timesteps;
      if (it->second.metric) metric = it->second.metric;
    }
    row.insert(row.end(), {std::to_string(iteration), std::to_string(timesteps), optional_cell(ranked_metric(trial)),
                           optional_cell(metric)});
    rows.push_back(std::move(row));
  }
  std::vector<size_t> widths(header.size());
  for (size_t c = 0; c < header.size(); ++c) {
    widths[c] = header[c].size();
    for (const auto& row : rows) widths[c] = std::max(widths[c], row[c].size());
  }
  std::ostringstream text;
  text << "== rlx tune: ";
  for (const auto& [status, count] : counts) text << count << " " << status << "  ";
  text << note;
  if (const auto best = best_trial_index(trials, spec.mode)) {
    text << (note.empty() ? "" : "  ") << "best: " << trials[*best].name << " (" << spec.metric << " "
         << optional_cell(ranked_metric(trials[*best])) << " at its last checkpoint)";
  }
  text << "\n";
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size(); ++c) text << std::left << std::setw(static_cast<int>(widths[c]) + 2) << cells[c];
    text << "\n";
  };
  line(header);
  for (const auto& row : rows) line(row);
  out << text.str() << std::flush;
}

std::string trials_csv(const std::vector<Trial>& trials, const std::string& metric) {
  const std::vector<std::string> keys = param_keys(trials);
  std::vector<std::string> header = {"trial", "status", "training_iteration", "timesteps_total", "time_total_s", metric,
                                     "latest_" + metric, "best_" + metric, "failures", "stopped_by", "checkpoint"};
  header.insert(header.end(), keys.begin(), keys.end());
  std::string text = csv_line(header) + "\n";
  for (const Trial& trial : trials) {
    std::vector<std::string> row = {trial.name,
                                    trial_status_name(trial.status),
                                    std::to_string(trial.iteration),
                                    std::to_string(trial.timesteps),
                                    format_double(trial.time_s),
                                    ranked_metric(trial) ? format_double(*ranked_metric(trial)) : "",
                                    trial.metric ? format_double(*trial.metric) : "",
                                    trial.best_metric ? format_double(*trial.best_metric) : "",
                                    std::to_string(trial.failures),
                                    trial.stopped_by,
                                    trial.checkpoint ? *trial.checkpoint : ""};
    for (const auto& key : keys) {
      const nlohmann::json value = trial.params.contains(key) ? trial.params.at(key) : nlohmann::json();
      row.push_back(value.is_string() ? value.get<std::string>() : value.is_null() ? "" : value.dump());
    }
    text += csv_line(row) + "\n";
  }
  return text;
}

}  // namespace rlx
