#include "watch/learning_curve_plot.h"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>

#include "watch/plot_axes.h"
#include "watch/plot_frame.h"

namespace rlx {

namespace {

// One curve to draw: a group's band and mean, or one trial's line.
struct Curve {
  std::string label;
  Band band;  // for a single run: its own rows, min = max = mean
  bool has_band = false;
  int runs = 1;  // the group's size
};

std::string default_title(const std::vector<TrialResults>& trials, const LearningCurveOptions& options) {
  std::vector<std::string> experiments;
  for (const TrialResults& trial : trials) {
    if (std::find(experiments.begin(), experiments.end(), trial.experiment) == experiments.end()) {
      experiments.push_back(trial.experiment);
    }
  }
  std::string names;
  for (size_t i = 0; i < experiments.size() && i < 3; ++i) names += (i ? ", " : "") + experiments[i];
  if (experiments.size() > 3) names += " and " + std::to_string(experiments.size() - 3) + " more";
  return names + ": " + column_title(options.metric) + " against " + column_label(options.x_column);
}

// What tells `group` apart from the other groups of its experiment: "lr 0.001, clip_param 0.3",
// the config keys whose values differ among them (the seed aside); empty when nothing does.
std::string distinction(const TrialGroup& group, const std::vector<TrialGroup>& groups,
                        const std::vector<TrialResults>& trials) {
  const std::map<std::string, std::string>& own = trials[group.members[0]].config;
  std::string text;
  for (const auto& [key, value] : own) {
    if (key == "seed") continue;
    const bool differs = std::any_of(groups.begin(), groups.end(), [&](const TrialGroup& other) {
      if (other.experiment != group.experiment) return false;
      const auto& config = trials[other.members[0]].config;
      const auto it = config.find(key);
      return it == config.end() || it->second != value;
    });
    if (differs) text += (text.empty() ? "" : ", ") + key + " " + format_compact_text(value);
  }
  return text;
}

std::vector<Curve> make_curves(const std::vector<TrialResults>& trials, const LearningCurveOptions& options) {
  std::vector<TrialGroup> groups;
  if (options.group_seeds) {
    groups = group_by_config(trials);
  } else {
    for (size_t i = 0; i < trials.size(); ++i) groups.push_back({trials[i].experiment, {i}});
  }
  std::map<std::string, int> groups_per_experiment;
  for (const TrialGroup& group : groups) ++groups_per_experiment[group.experiment];
  std::vector<Curve> curves;
  for (const TrialGroup& group : groups) {
    std::vector<Series> runs;
    for (size_t member : group.members) runs.push_back(trials[member].series(options.x_column, options.metric));
    Curve curve;
    curve.band = band_of(runs);
    curve.has_band = runs.size() > 1;
    curve.runs = static_cast<int>(runs.size());
    const std::string differs =
        groups_per_experiment[group.experiment] > 1 ? distinction(group, groups, trials) : std::string();
    if (curve.has_band) {
      curve.label = group.experiment + (differs.empty() ? "" : " (" + differs + ")") + ": mean of " +
                    std::to_string(runs.size()) + " seeds";
    } else {
      const TrialResults& trial = trials[group.members[0]];
      curve.label = groups_per_experiment[group.experiment] > 1 || trial.name == trial.experiment
                        ? trial.name
                        : trial.experiment + " (" + trial.name + ")";
    }
    if (!curve.band.x.empty()) curves.push_back(std::move(curve));
  }
  return curves;
}

}  // namespace

void draw_learning_curves(Canvas& canvas, const std::vector<TrialResults>& trials, const LearningCurveOptions& options) {
  const std::vector<Curve> curves = make_curves(trials, options);
  if (curves.empty()) {
    throw std::invalid_argument("no trial has a row with numbers in both '" + options.x_column + "' and '" +
                                options.metric + "'");
  }
  FrameSpec spec;
  spec.title = options.title.empty() ? default_title(trials, options) : options.title;
  const bool any_band = std::any_of(curves.begin(), curves.end(), [](const Curve& c) { return c.has_band; });
  if (any_band) {
    spec.subtitle = "line: mean over seeds (dashed where some runs had stopped); band: min to max; "
                    "runs aligned by linear interpolation at every logged step";
  }
  spec.x_label = column_label(options.x_column);
  spec.y_label = column_label(options.metric);
  double x_lo = std::numeric_limits<double>::infinity();
  double x_hi = -x_lo;
  double y_lo = x_lo;
  double y_hi = -x_lo;
  for (size_t i = 0; i < curves.size(); ++i) {
    const Band& band = curves[i].band;
    x_lo = std::min(x_lo, band.x.front());
    x_hi = std::max(x_hi, band.x.back());
    y_lo = std::min(y_lo, *std::min_element(band.min.begin(), band.min.end()));
    y_hi = std::max(y_hi, *std::max_element(band.max.begin(), band.max.end()));
    spec.legend.push_back({curves[i].label, palette_color(i),
                           curves[i].has_band ? LegendEntry::Mark::kBandAndLine : LegendEntry::Mark::kLine, "",
                           curves[i].has_band ? std::vector<double>{} : palette_dashes(i)});
  }
  spec.x_lo = std::min(0.0, x_lo);  // steps count from zero
  spec.x_hi = x_hi;
  spec.y_lo = y_lo;
  spec.y_hi = y_hi;
  const PlotArea area = draw_frame(canvas, spec);

  canvas.clip(area.left, area.top, area.right - area.left, area.bottom - area.top);
  for (size_t i = 0; i < curves.size(); ++i) {  // bands first, under every line
    if (!curves[i].has_band) continue;
    const Band& band = curves[i].band;
    std::vector<Point> outline;
    for (size_t k = 0; k < band.x.size(); ++k) outline.push_back(area.at(band.x[k], band.max[k]));
    for (size_t k = band.x.size(); k-- > 0;) outline.push_back(area.at(band.x[k], band.min[k]));
    canvas.fill_polygon(outline, with_alpha(palette_color(i), 0.2));
  }
  for (size_t i = 0; i < curves.size(); ++i) {
    // Solid where every run of the group counts, dashed where some ended earlier or began later.
    const Band& band = curves[i].band;
    const auto whole = [&](size_t k) { return band.runs[k] == curves[i].runs; };
    std::vector<Point> line;
    for (size_t k = 0; k < band.x.size(); ++k) {
      line.push_back(area.at(band.x[k], band.mean[k]));
      if (k + 1 == band.x.size() || whole(k + 1) != whole(k)) {
        const std::vector<double> dashes =
            !curves[i].has_band ? palette_dashes(i) : whole(k) ? std::vector<double>{} : std::vector<double>{6, 4};
        canvas.polyline(line, {palette_color(i), curves[i].has_band ? 2.2 : 1.8, dashes});
        line = {line.back()};
      }
    }
  }
  canvas.reset_clip();
}

}  // namespace rlx
