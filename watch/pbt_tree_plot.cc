#include "watch/pbt_tree_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <stdexcept>

#include "watch/label_placement.h"
#include "watch/plot_axes.h"
#include "watch/plot_frame.h"

namespace rlx {

namespace {

constexpr double kLabelSize = 10.5;
constexpr double kLabelPad = 3;
constexpr double kDotRadius = 3.5;

// An exploit with its ends resolved to trials and points in data space.
struct DrawnEdge {
  size_t donor;
  size_t receiver;
  double donor_x, donor_y;  // the donor's curve where its checkpoint was written
  double x, y;              // the receiver's first result on the donor's weights
  std::string label;
};

// A label wanting a place next to a point (pixels).
struct Label {
  Point anchor;
  std::string text;
  size_t trial;
};

std::string params_text(const std::vector<std::pair<std::string, std::string>>& params) {
  std::string text;
  for (const auto& [name, value] : params) text += (text.empty() ? "" : ", ") + name + " " + value;
  return text;
}

Color darker(Color color) {
  color.r *= 0.7;
  color.g *= 0.7;
  color.b *= 0.7;
  return color;
}

std::vector<Point> dot(const Point& center, double radius) {
  std::vector<Point> points;
  for (int i = 0; i < 20; ++i) {
    const double angle = 2 * M_PI * i / 20;
    points.push_back({center.x + radius * std::cos(angle), center.y + radius * std::sin(angle)});
  }
  return points;
}

// Draws `labels` where place_labels finds room for them, clear of each other and of `dots`;
// returns how many found none.
int draw_labels(Canvas& canvas, const std::vector<Label>& labels, const PlotArea& area, const std::vector<Point>& dots) {
  std::vector<Box> obstacles;
  for (const Point& p : dots) obstacles.push_back({p.x - kDotRadius, p.y - kDotRadius, p.x + kDotRadius, p.y + kDotRadius});
  std::vector<LabelRequest> requests;
  std::vector<TextExtent> extents;
  for (const Label& label : labels) {
    extents.push_back(canvas.measure(label.text, kLabelSize, false));
    requests.push_back({label.anchor, extents.back().width + 2 * kLabelPad,
                        extents.back().ascent + extents.back().descent + 2 * kLabelPad - 2});
  }
  const std::vector<PlacedLabel> placed =
      place_labels(requests, {area.left + 2, area.top + 2, area.right - 2, area.bottom - 2}, obstacles);
  for (const PlacedLabel& item : placed) {  // leaders first, under every label
    if (item.leader) {
      canvas.polyline({item.leader->first, item.leader->second},
                      {with_alpha(palette_color(labels[item.request].trial), 0.7), 0.8, {}});
    }
  }
  for (const PlacedLabel& item : placed) {
    const Box& box = item.box;
    const Color color = palette_color(labels[item.request].trial);
    const std::vector<Point> outline{{box.x0, box.y0}, {box.x1, box.y0}, {box.x1, box.y1}, {box.x0, box.y1}};
    canvas.fill_polygon(outline, Color{1, 1, 1, 0.92});
    std::vector<Point> border = outline;
    border.push_back(outline.front());
    canvas.polyline(border, {with_alpha(color, 0.8), 0.8, {}});
    canvas.text(labels[item.request].text, {box.x0 + kLabelPad, box.y1 - kLabelPad - extents[item.request].descent + 1},
                {kLabelSize, false, darker(color), TextAnchor::kStart, false});
  }
  return static_cast<int>(labels.size() - placed.size());
}

// Samples of the cubic Bezier curve from `a` to `b` that leaves and enters horizontally.
std::vector<Point> s_curve(const Point& a, const Point& b) {
  const double reach = std::max(18.0, std::abs(b.x - a.x) / 2);
  const Point c1{a.x + reach, a.y};
  const Point c2{b.x - reach, b.y};
  std::vector<Point> points;
  for (int i = 0; i <= 24; ++i) {
    const double t = i / 24.0;
    const double u = 1 - t;
    points.push_back({u * u * u * a.x + 3 * u * u * t * c1.x + 3 * u * t * t * c2.x + t * t * t * b.x,
                      u * u * u * a.y + 3 * u * u * t * c1.y + 3 * u * t * t * c2.y + t * t * t * b.y});
  }
  return points;
}

// "start: lr 3e-4, ..." for `trial`: the old hyperparameters of its first exploit, else those of
// its params.yaml (what it ran with throughout); empty when PBT mutated nothing.
std::string start_params(const TrialResults& trial, const std::vector<ExploitEdge>& edges,
                         const std::vector<std::string>& mutated) {
  std::vector<std::pair<std::string, std::string>> start;
  const auto first = std::find_if(edges.begin(), edges.end(), [&](const ExploitEdge& e) { return e.receiver == trial.name; });
  if (first != edges.end() && !first->old_params.empty()) {
    start = first->old_params;
  } else {
    for (const std::string& name : mutated) {
      const auto it = trial.config.find(name);
      if (it != trial.config.end()) start.emplace_back(name, format_compact_text(it->second));
    }
  }
  return start.empty() ? std::string() : "start: " + params_text(start);
}

// The exploits with their steps in units of `x_column`: each trial's own row at that
// timesteps_total (interpolated between rows); exploits of trials that lack a row there, or
// either column, are left out.
std::vector<ExploitEdge> edges_along(const std::string& x_column, const std::vector<TrialResults>& trials,
                                     const std::vector<ExploitEdge>& edges) {
  constexpr const char* kSteps = "timesteps_total";
  if (x_column == kSteps) return edges;
  std::map<std::string, Series> x_of_steps;
  for (const TrialResults& trial : trials) {
    if (trial.column_index(kSteps) && trial.column_index(x_column)) x_of_steps[trial.name] = trial.series(kSteps, x_column);
  }
  std::vector<ExploitEdge> converted;
  for (ExploitEdge edge : edges) {
    const auto donor = x_of_steps.find(edge.donor);
    const auto receiver = x_of_steps.find(edge.receiver);
    if (donor == x_of_steps.end() || receiver == x_of_steps.end()) continue;
    const std::optional<double> donor_x = value_at(donor->second, edge.donor_step);
    const std::optional<double> x = value_at(receiver->second, edge.step);
    if (!donor_x || !x) continue;
    edge.donor_step = *donor_x;
    edge.step = *x;
    converted.push_back(std::move(edge));
  }
  return converted;
}

// The lineage panel: a lane per trial, broken where it took another's checkpoint, and an arrow
// from the donor's lane at the checkpoint's step into the receiver's lane at the exploit.
void draw_lineage(Canvas& canvas, const PlotArea& area, const std::vector<Series>& series,
                  const std::vector<ExploitEdge>& edges, const std::map<std::string, size_t>& index_of) {
  std::vector<std::vector<double>> cuts(series.size());
  for (const ExploitEdge& edge : edges) {
    const auto receiver = index_of.find(edge.receiver);
    if (receiver != index_of.end()) cuts[receiver->second].push_back(edge.step);
  }
  for (size_t i = 0; i < series.size(); ++i) {
    if (series[i].x.empty()) continue;
    std::sort(cuts[i].begin(), cuts[i].end());
    double from = series[i].x.front();
    const double lane = area.lanes[i];
    for (double cut : cuts[i]) {
      canvas.polyline({{area.x(from), lane}, {area.x(cut) - 3, lane}}, {palette_color(i), 3, palette_dashes(i)});
      from = cut;
    }
    canvas.polyline({{area.x(from), lane}, {area.x(series[i].x.back()), lane}}, {palette_color(i), 3, palette_dashes(i)});
  }
  for (const ExploitEdge& edge : edges) {
    const auto donor = index_of.find(edge.donor);
    const auto receiver = index_of.find(edge.receiver);
    if (donor == index_of.end() || receiver == index_of.end()) continue;
    const Point a{area.x(edge.donor_step), area.lanes[donor->second]};
    const Point b{area.x(edge.step) + 6, area.lanes[receiver->second]};
    const Color color = palette_color(donor->second);
    std::vector<Point> curve = s_curve(a, b);
    canvas.polyline(curve, {color, 1.4, {}});
    const Point& before = curve[curve.size() - 3];
    const double length = std::hypot(b.x - before.x, b.y - before.y);
    if (length > 0) {
      const double ux = (b.x - before.x) / length;
      const double uy = (b.y - before.y) / length;
      const Point base{b.x - ux * 9, b.y - uy * 9};
      canvas.fill_polygon({b, {base.x - uy * 4.5, base.y + ux * 4.5}, {base.x + uy * 4.5, base.y - ux * 4.5}}, color);
    }
    canvas.fill_polygon(dot(a, 2.5), color);
  }
}

}  // namespace

void draw_pbt_tree(Canvas& canvas, const std::vector<TrialResults>& trials, const std::vector<ExploitEdge>& logged,
                   const PbtTreeOptions& options) {
  const std::vector<ExploitEdge> edges = edges_along(options.x_column, trials, logged);
  std::vector<Series> series;
  std::map<std::string, size_t> index_of;
  for (size_t i = 0; i < trials.size(); ++i) {
    series.push_back(trials[i].series(options.x_column, options.metric));
    index_of[trials[i].name] = i;
  }

  std::vector<DrawnEdge> drawn;
  std::vector<std::vector<double>> breaks(trials.size());  // the steps each trial was exploited at
  std::vector<std::string> mutated;                        // the hyperparameters PBT changes
  for (const ExploitEdge& edge : edges) {
    for (const auto& [name, value] : edge.new_params) {
      if (std::find(mutated.begin(), mutated.end(), name) == mutated.end()) mutated.push_back(name);
    }
    const auto donor = index_of.find(edge.donor);
    const auto receiver = index_of.find(edge.receiver);
    if (donor == index_of.end() || receiver == index_of.end()) continue;
    const Series& from = series[donor->second];
    const Series& to = series[receiver->second];
    const std::optional<double> donor_y = value_at(from, edge.donor_step);
    if (!donor_y) continue;
    const auto next = std::upper_bound(to.x.begin(), to.x.end(), edge.step);
    DrawnEdge d{donor->second, receiver->second, edge.donor_step, *donor_y, edge.step, *donor_y, params_text(edge.new_params)};
    if (next != to.x.end()) {
      d.x = *next;
      d.y = to.y[static_cast<size_t>(next - to.x.begin())];
    }
    breaks[receiver->second].push_back(edge.step);
    drawn.push_back(std::move(d));
  }

  FrameSpec spec;
  const std::string experiment = trials.empty() ? std::string("PBT") : trials.front().experiment;
  spec.title = !options.title.empty() ? options.title
                                      : experiment + ": population-based training, " + std::to_string(trials.size()) +
                                            " trials, " + std::to_string(drawn.size()) + " exploits";
  spec.x_label = column_label(options.x_column);
  spec.y_label = column_label(options.metric);
  double x_hi = -std::numeric_limits<double>::infinity();
  double y_lo = std::numeric_limits<double>::infinity();
  double y_hi = -y_lo;
  for (size_t i = 0; i < trials.size(); ++i) {
    if (series[i].x.empty()) continue;
    x_hi = std::max(x_hi, series[i].x.back());
    y_lo = std::min(y_lo, *std::min_element(series[i].y.begin(), series[i].y.end()));
    y_hi = std::max(y_hi, *std::max_element(series[i].y.begin(), series[i].y.end()));
    spec.legend.push_back({trials[i].name, palette_color(i), LegendEntry::Mark::kLine,
                           start_params(trials[i], edges, mutated), palette_dashes(i)});
    spec.lanes.push_back(trials[i].name);
  }
  if (spec.legend.empty()) {
    throw std::invalid_argument("no trial has a row with numbers in both '" + options.x_column + "' and '" +
                                options.metric + "'");
  }
  spec.legend.push_back({"exploit: donor → receiver", Color{0.4, 0.4, 0.4}, LegendEntry::Mark::kDashedArrow, "", {}});
  spec.x_lo = 0;
  spec.x_hi = x_hi;
  spec.y_lo = y_lo;
  spec.y_hi = y_hi;
  // Room above the curves for the labels.
  spec.y_hi += (y_hi - y_lo) * 0.12;
  spec.subtitle = "arrows: exploits, from donor to receiver in the donor's colour; labels: the receiver's "
                  "hyperparameters after each exploit (the legend: at the start)";
  spec.legend_reserve = 34;  // for the count of labels left out
  const PlotArea area = draw_frame(canvas, spec);

  canvas.clip(area.left, area.top, area.right - area.left, area.bottom - area.top);
  for (size_t i = 0; i < trials.size(); ++i) {
    const Series& s = series[i];
    std::vector<double> cuts = breaks[i];
    std::sort(cuts.begin(), cuts.end());
    std::vector<Point> segment;
    size_t cut = 0;
    for (size_t k = 0; k < s.x.size(); ++k) {
      // A new segment starts at the first row past an exploit: the trial's weights changed there.
      bool broken = false;
      while (cut < cuts.size() && k > 0 && s.x[k - 1] <= cuts[cut] && cuts[cut] < s.x[k]) {
        broken = true;
        ++cut;
      }
      while (cut < cuts.size() && k > 0 && cuts[cut] < s.x[k - 1]) ++cut;
      if (broken) {
        canvas.polyline(segment, {palette_color(i), 1.8, palette_dashes(i)});
        segment.clear();
      }
      segment.push_back(area.at(s.x[k], s.y[k]));
    }
    canvas.polyline(segment, {palette_color(i), 1.8, palette_dashes(i)});
  }
  std::vector<Point> dots;
  for (const DrawnEdge& edge : drawn) {
    const Point from = area.at(edge.donor_x, edge.donor_y);
    const Point to = area.at(edge.x, edge.y);
    const Color color = palette_color(edge.donor);
    const double length = std::hypot(to.x - from.x, to.y - from.y);
    if (length > 8) {
      const double ux = (to.x - from.x) / length;
      const double uy = (to.y - from.y) / length;
      const Point tip{to.x - ux * (kDotRadius + 1), to.y - uy * (kDotRadius + 1)};
      const Point base{tip.x - ux * 8, tip.y - uy * 8};
      canvas.polyline({from, base}, {color, 1.3, {5, 3}});
      canvas.fill_polygon({tip, {base.x - uy * 4, base.y + ux * 4}, {base.x + uy * 4, base.y - ux * 4}}, color);
    }
    canvas.fill_polygon(dot(from, 2.5), color);
    canvas.fill_polygon(dot(to, kDotRadius), palette_color(edge.receiver));
    dots.push_back(to);
  }
  canvas.reset_clip();
  draw_lineage(canvas, area, series, edges, index_of);

  // Labels: every exploit's new hyperparameters, in the order of steps.
  std::vector<Label> labels;
  std::vector<size_t> order(drawn.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return drawn[a].x < drawn[b].x; });
  for (size_t i : order) labels.push_back({area.at(drawn[i].x, drawn[i].y), drawn[i].label, drawn[i].receiver});
  const int left_out = draw_labels(canvas, labels, area, dots);
  if (left_out > 0) {  // under the legend, outside the plot area
    const TextStyle note{10, false, Color{0.4, 0.4, 0.4}, TextAnchor::kStart, false};
    const double room = canvas.width() - area.right - 20;
    canvas.text(fit_text(canvas, std::to_string(left_out) + " of " + std::to_string(labels.size()) + " labels left out",
                         10, false, room),
                {area.right + 14, area.bottom - 14}, note);
    canvas.text(fit_text(canvas, "for room (try a larger --size)", 10, false, room), {area.right + 14, area.bottom}, note);
  }
}

}  // namespace rlx
