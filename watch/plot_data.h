// What `rlx plot` draws, read from disk: trials' progress.csv columns, trials grouped into
// runs of one experiment that differ only in their seed, the mean and min-max band of such a
// group, and the exploits of a PBT experiment's pbt_log.jsonl.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rlx {

// y against x, in the rows where both are numbers, in file order.
struct Series {
  std::vector<double> x;
  std::vector<double> y;
};

// One trial folder's results (OUTPUT/<experiment>/<trial>/).
struct TrialResults {
  std::filesystem::path dir;
  std::string name;        // the folder's name
  std::string experiment;  // params.yaml's top-level key, else the parent folder's name
  // params.yaml without its config's `seed:` line: trials with equal, non-empty keys are runs
  // of one experiment under different seeds. Empty without a params.yaml.
  std::string config_key;
  // The scalar keys of params.yaml's config: section as written ("lr" -> "0.0003").
  std::map<std::string, std::string> config;
  std::vector<std::string> columns;        // progress.csv's header
  std::vector<std::vector<double>> cells;  // [row][column]; NaN where a cell is empty or no number

  // The index of `column`, or nullopt.
  std::optional<size_t> column_index(const std::string& column) const;
  // `y` against `x` (both column names); std::invalid_argument when either is not a column.
  Series series(const std::string& x, const std::string& y) const;
};

// Reads dir/progress.csv (and params.yaml when there); std::runtime_error naming the file when
// it is missing, empty or unreadable.
TrialResults read_trial(const std::filesystem::path& dir);

// The trial folders `dir` names: itself when it holds a progress.csv, else the folders below
// it (one or two levels: an experiment, or an --output root) that do, sorted by path.
// std::runtime_error naming `dir` when it is no folder or holds no trial.
std::vector<std::filesystem::path> find_trial_dirs(const std::filesystem::path& dir);

// Trials (indices into the list) drawn as one curve.
struct TrialGroup {
  std::string experiment;
  std::vector<size_t> members;  // in the order given
};

// Groups trials whose config_key is equal and non-empty (same experiment and config, any seed);
// every other trial is a group of its own. Groups keep the order of their first member.
std::vector<TrialGroup> group_by_config(const std::vector<TrialResults>& trials);

// A group's curves on one grid: the union of the runs' x values (sorted, once each). At each
// grid x, the runs whose x range covers it contribute their y there, linearly interpolated
// between their two nearest rows; runs that ended earlier or started later do not count.
struct Band {
  std::vector<double> x;
  std::vector<double> mean;
  std::vector<double> min;
  std::vector<double> max;
  std::vector<int> runs;  // how many runs each x's statistics are over
};

// The band of `runs` (each sorted by x, as progress.csv's steps are).
Band band_of(const std::vector<Series>& runs);

// `series`'s y at x by linear interpolation between the neighbouring rows; nullopt outside its
// x range. `series` is sorted by x.
std::optional<double> value_at(const Series& series, double x);

// One exploit of population-based training: `receiver` took `donor`'s checkpoint (written at
// donor_step) at its own step `step`, with new hyperparameters.
struct ExploitEdge {
  std::string donor;
  std::string receiver;
  double donor_step = 0;  // donor_timesteps_total
  double step = 0;        // timesteps_total of the receiver
  long iteration = 0;     // training_iteration of the receiver
  std::vector<std::pair<std::string, std::string>> new_params;  // name, value as text (sorted by name)
  std::vector<std::pair<std::string, std::string>> old_params;
};

// The exploits in a pbt_log.jsonl (rlx tune's, tune/tuner.cc), in order; a torn last line is
// skipped. std::runtime_error naming the file when it cannot be read or an entry lacks a field.
std::vector<ExploitEdge> read_pbt_edges(const std::filesystem::path& log);

}  // namespace rlx
