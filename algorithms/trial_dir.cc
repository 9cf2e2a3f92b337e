#include "algorithms/trial_dir.h"

#include <algorithm>
#include <iomanip>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "algorithms/trainer.h"

namespace rlx {

namespace fs = std::filesystem;

std::string default_trial_name(const Experiment& experiment, std::time_t when) {
  std::tm local{};
  localtime_r(&when, &local);
  // A Python env's id holds colons (python:MODULE:CLASS), which paths had better not: TensorBoard's
  // --logdir_spec, PATH-like lists and scp read them as separators. A namespaced id
  // (MinAtar/Breakout-v1) holds a slash, which would make the trial two directories deep.
  std::string env = experiment.env;
  std::replace(env.begin(), env.end(), ':', '-');
  std::replace(env.begin(), env.end(), '/', '-');
  std::ostringstream name;
  name << algorithm_name(experiment.algorithm) << "_" << env << "_seed" << experiment.config.common().seed << "_"
       << std::put_time(&local, "%Y%m%d-%H%M%S");
  return name.str();
}

fs::path claim_trial_dir(const fs::path& root, const std::string& base_name) {
  fs::create_directories(root);
  for (int attempt = 1;; ++attempt) {
    const fs::path dir = root / (attempt == 1 ? base_name : base_name + "_" + std::to_string(attempt));
    std::error_code error;
    if (fs::create_directory(dir, error)) return dir;  // false when it exists: another run's
    if (error) throw std::runtime_error("cannot create the trial directory '" + dir.string() + "': " + error.message());
  }
}

bool trial_holds_results(const fs::path& dir) {
  if (!fs::is_directory(dir)) return fs::exists(dir);
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().filename() != kLogsDirName) return true;
  }
  return false;
}

}  // namespace rlx
