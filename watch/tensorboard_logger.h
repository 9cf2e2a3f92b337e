// A trial's results as TensorBoard sees them: every number of every result row as a scalar
// under a grouped tag, at the step of the environment steps trained on, and the experiment's
// hyperparameters as a text table. `tensorboard --logdir runs/EXPERIMENT` shows every trial.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "watch/event_file_writer.h"

namespace rlx {

// The tag of a result column: a column with a '/' keeps its name ("learner/policy_loss");
// "episode_return_mean" becomes "episode/return_mean", times and rates go under "perf/"
// ("perf/env_steps_per_s"), and the counters under "progress/".
std::string tensorboard_tag(const std::string& column);

// A markdown table (| key | value |) of an object's leaves, nested keys joined by '/'.
std::string markdown_table(const nlohmann::json& object);

class TensorBoardLogger {
 public:
  // Starts a new event file in `trial_dir`. `resume_step`: the step a resumed run continues
  // from; a SessionLog START there tells TensorBoard to drop what an earlier run wrote after it.
  TensorBoardLogger(const std::filesystem::path& trial_dir, std::optional<int64_t> resume_step);

  const std::filesystem::path& path() const { return writer_.path(); }

  // Writes `markdown` as a text summary under `tag` at `step`.
  void log_text(const std::string& tag, const std::string& markdown, int64_t step) const;

  // Writes each number and bool of `row` (a result row; nested objects flattened as in
  // progress.csv) as a scalar at step row["timesteps_total"] (std::invalid_argument when it
  // has none). Strings, nulls and lists are left to result.jsonl.
  void log_row(const nlohmann::json& row) const;

 private:
  EventFileWriter writer_;
};

}  // namespace rlx
