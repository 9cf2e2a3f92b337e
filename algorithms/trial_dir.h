// Where a training run writes: OUTPUT/<experiment>/<trial>/, its default name, and the claim
// that makes that name the run's own however many runs start in the same second.
#pragma once

#include <ctime>
#include <filesystem>
#include <string>

#include "core/experiment.h"

namespace rlx {

// <ALGO>_<env>_seed<S>_<YYYYmmdd-HHMMSS> at `when` (local time); a Python env id's colons
// become dashes.
std::string default_trial_name(const Experiment& experiment, std::time_t when);

// Creates root/base_name, or root/base_name_2, _3, ... when another run claimed the name first
// (mkdir is the claim: two processes never get the same directory). Returns the directory made.
// std::runtime_error naming the directory when it cannot be created for another reason.
std::filesystem::path claim_trial_dir(const std::filesystem::path& root, const std::string& base_name);

// Whether a trial directory holds anything besides logs/ (left by an attempt that failed
// before training); a path that is not a directory counts when it exists.
bool trial_holds_results(const std::filesystem::path& dir);

}  // namespace rlx
