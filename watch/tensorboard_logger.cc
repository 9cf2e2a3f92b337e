// TensorBoardLogger: result rows to Summary events.
#include "watch/tensorboard_logger.h"

#include <chrono>
#include <stdexcept>

#include "core/results.h"
#include "watch/tensorboard.pb.h"

namespace rlx {
namespace {

double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

tensorboard::Event event_at(int64_t step) {
  tensorboard::Event event;
  event.set_wall_time(unix_seconds());
  event.set_step(step);
  return event;
}

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }
bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string cell_text(const nlohmann::json& value) {
  std::string text = value.is_string() ? value.get<std::string>() : value.dump();
  std::string escaped;
  for (char c : text) escaped += (c == '|') ? std::string("\\|") : std::string(1, c);
  return escaped;
}

}  // namespace

std::string tensorboard_tag(const std::string& column) {
  if (column.find('/') != std::string::npos) return column;
  if (starts_with(column, "episode_")) return "episode/" + column.substr(8);
  if (starts_with(column, "episodes_")) return "episode/" + column;
  if (starts_with(column, "time_") || ends_with(column, "_per_s")) return "perf/" + column;
  return "progress/" + column;
}

std::string markdown_table(const nlohmann::json& object) {
  std::string table = "| key | value |\n|---|---|\n";
  for (const auto& [key, value] : flatten_result_row(object)) table += "| " + key + " | " + cell_text(value) + " |\n";
  return table;
}

TensorBoardLogger::TensorBoardLogger(const std::filesystem::path& trial_dir, std::optional<int64_t> resume_step)
    : writer_(trial_dir) {
  if (!resume_step) return;
  tensorboard::Event start = event_at(*resume_step);
  start.mutable_session_log()->set_status(tensorboard::SessionLog::START);
  writer_.write(start);
}

void TensorBoardLogger::log_text(const std::string& tag, const std::string& markdown, int64_t step) const {
  tensorboard::Event event = event_at(step);
  tensorboard::Summary::Value* value = event.mutable_summary()->add_value();
  value->set_tag(tag);
  value->mutable_metadata()->mutable_plugin_data()->set_plugin_name("text");
  tensorboard::TensorProto* tensor = value->mutable_tensor();
  tensor->set_dtype(tensorboard::DT_STRING);
  tensor->mutable_tensor_shape();  // a scalar: no dimensions
  tensor->add_string_val(markdown);
  writer_.write(event);
}

void TensorBoardLogger::log_row(const nlohmann::json& row) const {
  const auto steps = row.find("timesteps_total");
  if (steps == row.end() || !steps->is_number_integer()) {
    throw std::invalid_argument("a result row for TensorBoard needs an integer timesteps_total, got " + row.dump());
  }
  tensorboard::Event event = event_at(steps->get<int64_t>());
  for (const auto& [column, cell] : flatten_result_row(row)) {
    if (!cell.is_number() && !cell.is_boolean()) continue;
    tensorboard::Summary::Value* value = event.mutable_summary()->add_value();
    value->set_tag(tensorboard_tag(column));
    value->set_simple_value(cell.is_boolean() ? (cell.get<bool>() ? 1.0f : 0.0f) : cell.get<float>());
  }
  writer_.write(event);
}

}  // namespace rlx
