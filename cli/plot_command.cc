// `rlx plot DIR... [--metric COLUMN] [-o FILE]`: learning curves of trials, seeds of one
// experiment as a mean line in a min-max band; `rlx plot --pbt DIR`: a PBT run's family tree.
#include <filesystem>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "cli/command.h"
#include "watch/canvas.h"
#include "watch/learning_curve_plot.h"
#include "watch/pbt_tree_plot.h"
#include "watch/plot_data.h"

namespace po = boost::program_options;

namespace rlx::cli {

namespace {

constexpr const char* kPbtLogFile = "pbt_log.jsonl";
constexpr int kMinSide = 200;
constexpr int kMaxSide = 8000;
constexpr const char* kCurvesSize = "1200x720";
constexpr const char* kPbtSize = "1200x900";  // the curves and, under them, the lineage

const char* const kPlotUsage =
    "usage: rlx plot DIR... [--metric COLUMN] [--x COLUMN] [-o FILE.png|FILE.svg] [--title TEXT] [--size WxH]\n"
    "                [--no-group]\n"
    "       rlx plot --pbt EXPERIMENT_DIR [--metric COLUMN] [--x COLUMN] [-o FILE] [--title TEXT] [--size WxH]\n\n"
    "Draws a progress.csv column (default episode_return_mean) against environment steps\n"
    "(timesteps_total; --x another column). Each DIR is a trial folder (it holds progress.csv), an experiment folder\n"
    "(OUTPUT/<experiment>/) or an output root: every trial below it is drawn. Trials whose\n"
    "params.yaml differ only in the seed are runs of one experiment: drawn as their mean with a\n"
    "min-max band, aligned by linear interpolation at every step any of them logged; every other\n"
    "trial as a line of its own (--no-group: every trial so).\n\n"
    "--pbt draws a `rlx tune` population-based training run from its pbt_log.jsonl: every trial's\n"
    "curve, the exploits as arrows from donor to receiver, and the hyperparameters at each.\n\n";

// "1200x720" as width and height; UsageError otherwise.
std::pair<int, int> parse_size(const std::string& text) {
  const size_t x = text.find('x');
  try {
    if (x == std::string::npos) throw std::invalid_argument("no x");
    size_t used_w = 0;
    size_t used_h = 0;
    const int w = std::stoi(text.substr(0, x), &used_w);
    const int h = std::stoi(text.substr(x + 1), &used_h);
    if (used_w != x || used_h != text.size() - x - 1) throw std::invalid_argument("trailing text");
    if (w < kMinSide || h < kMinSide || w > kMaxSide || h > kMaxSide) throw std::out_of_range("size");
    return {w, h};
  } catch (const std::logic_error&) {
    throw UsageError("--size '" + text + "': expected WIDTHxHEIGHT in pixels, each " + std::to_string(kMinSide) + " to " +
                     std::to_string(kMaxSide) + ", e.g. 1200x720");
  }
}

std::string column_list(const TrialResults& trial) {
  std::string list;
  for (const std::string& column : trial.columns) list += (list.empty() ? "" : ", ") + column;
  return list;
}

// Every trial's results; UsageError for a DIR that holds none or a trial lacking a column.
std::vector<TrialResults> read_trials(const std::vector<std::string>& dirs, const std::vector<std::string>& columns,
                                      bool skip_replays) {
  std::vector<TrialResults> trials;
  std::set<std::filesystem::path> seen;
  for (const std::string& dir : dirs) {
    std::vector<std::filesystem::path> found;
    try {
      found = find_trial_dirs(dir);
    } catch (const std::filesystem::filesystem_error&) {
      throw;  // an I/O error, not the user's argument
    } catch (const std::runtime_error& e) {
      throw UsageError(e.what());
    }
    for (const std::filesystem::path& trial_dir : found) {
      if (skip_replays && trial_dir.filename().string().rfind("replay_", 0) == 0) continue;
      if (!seen.insert(std::filesystem::weakly_canonical(trial_dir)).second) continue;
      TrialResults trial = read_trial(trial_dir);
      for (const std::string& column : columns) {
        if (!trial.column_index(column)) {
          throw UsageError("'" + column + "' is no column of " + (trial_dir / "progress.csv").string() +
                           "; its columns: " + column_list(trial));
        }
      }
      trials.push_back(std::move(trial));
    }
  }
  return trials;
}

}  // namespace

int run_plot_command(const std::vector<std::string>& args) {
  po::options_description options("options");
  options.add_options()("help,h", "show this help")("dir", po::value<std::vector<std::string>>(), "trial or experiment folders")(
      "metric", po::value<std::string>()->default_value("episode_return_mean"),
      "the progress.csv column to draw, e.g. learner/policy_loss")(
      "x", po::value<std::string>()->default_value("timesteps_total"),
      "the progress.csv column along the x axis, e.g. training_iteration or time_total_s")(
      "output,o", po::value<std::string>()->default_value("plot.png"), "the image: FILE.png or FILE.svg")(
      "pbt", "draw a PBT experiment's family tree from its pbt_log.jsonl")(
      "title", po::value<std::string>(), "the figure's title (default: the experiments and the metric)")(
      "size", po::value<std::string>(), "the image's WIDTHxHEIGHT in pixels (default 1200x720, with --pbt 1200x900)")(
      "no-group", "draw every trial as its own line, also runs that differ only in the seed");
  po::positional_options_description positionals;
  positionals.add("dir", -1);
  const po::variables_map values = parse_command_line(args, options, positionals);
  if (values.count("help")) {
    std::cout << kPlotUsage << options;
    return kExitOk;
  }
  if (!values.count("dir")) throw UsageError("no DIR given: name a trial or experiment folder");
  const std::vector<std::string> dirs = values["dir"].as<std::vector<std::string>>();
  const std::filesystem::path output = values["output"].as<std::string>();
  ImageFormat format;
  try {
    format = image_format_of(output);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("-o ") + e.what());
  }
  const bool pbt = values.count("pbt") > 0;
  const auto [width, height] =
      parse_size(values.count("size") ? values["size"].as<std::string>() : pbt ? kPbtSize : kCurvesSize);
  const std::string metric = values["metric"].as<std::string>();
  const std::string title = values.count("title") ? values["title"].as<std::string>() : "";
  const std::string x_column = values["x"].as<std::string>();

  const std::unique_ptr<Canvas> canvas = open_canvas(output, format, width, height);
  std::string drawn;
  if (pbt) {
    if (values.count("no-group")) throw UsageError("--no-group draws learning curves; a --pbt tree has no groups");
    if (dirs.size() != 1) throw UsageError("--pbt takes one experiment folder, got " + std::to_string(dirs.size()));
    const std::filesystem::path log = std::filesystem::path(dirs[0]) / kPbtLogFile;
    if (!std::filesystem::exists(log)) {
      throw UsageError("'" + dirs[0] + "' has no " + kPbtLogFile + ": --pbt draws the folder of a `rlx tune` experiment "
                       "whose scheduler is pbt (OUTPUT/<experiment>/)");
    }
    const std::vector<TrialResults> trials =
        read_trials(dirs, {x_column, metric, "timesteps_total"}, /*skip_replays=*/true);  // the log's steps
    const std::vector<ExploitEdge> edges = read_pbt_edges(log);
    draw_pbt_tree(*canvas, trials, edges, {x_column, metric, title});
    drawn = std::to_string(trials.size()) + " trials, " + std::to_string(edges.size()) + " exploits";
  } else {
    const std::vector<TrialResults> trials = read_trials(dirs, {x_column, metric}, /*skip_replays=*/false);
    draw_learning_curves(*canvas, trials, {x_column, metric, title, values.count("no-group") == 0});
    drawn = std::to_string(trials.size()) + (trials.size() == 1 ? " trial" : " trials");
  }
  canvas->save();
  std::cout << "wrote " << output.string() << " (" << drawn << ", " << metric << " against " << x_column << ")\n";
  return kExitOk;
}

}  // namespace rlx::cli
