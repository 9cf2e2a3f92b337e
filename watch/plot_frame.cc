#include "watch/plot_frame.h"

#include <algorithm>
#include <cmath>

namespace rlx {

namespace {

constexpr double kTitleSize = 18;
constexpr double kSubtitleSize = 12;
constexpr double kTickSize = 12;
constexpr double kLabelSize = 13;
constexpr double kLegendSize = 12;
constexpr double kPad = 14;
constexpr double kTickLength = 5;
constexpr double kSwatch = 26;            // a legend entry's mark
constexpr double kLegendRow = 20;         // a legend entry's height
constexpr double kDetailSize = 10.5;      // a legend entry's second line
constexpr double kDetailRow = 14;
constexpr double kLegendMaxShare = 0.34;  // of the canvas' width
constexpr double kLaneRow = 22;           // a lane's height in a lower panel
constexpr double kLaneGap = 22;           // between the plot and the lanes
constexpr double kMinLaneFont = 7;

const Color kInk{0.13, 0.13, 0.13};
const Color kMuted{0.35, 0.35, 0.35};
const Color kAxis{0.45, 0.45, 0.45};
const Color kGrid{0.9, 0.9, 0.9};
const Color kWhite{1, 1, 1};

// Ticks whose labels fit along `length` pixels without touching. The vertical axis widens to
// whole ticks; the horizontal one (steps) keeps the data's range, ticks inside it.
Ticks fitting_ticks(const Canvas& canvas, double lo, double hi, double length, bool horizontal) {
  const auto make = [&](int target) {
    Ticks ticks = nice_ticks(lo, hi, target);
    if (!horizontal || hi <= lo) return ticks;
    ticks.values.erase(std::remove_if(ticks.values.begin(), ticks.values.end(),
                                      [&](double v) { return v < lo - 1e-9 * (hi - lo) || v > hi + 1e-9 * (hi - lo); }),
                       ticks.values.end());
    ticks.lo = lo;
    ticks.hi = hi;
    return ticks;
  };
  for (int target = std::max(2, static_cast<int>(length / (horizontal ? 90 : 55))); target > 2; --target) {
    const Ticks ticks = make(target);
    double widest = 0;
    for (double value : ticks.values) {
      widest = std::max(widest, canvas.measure(format_tick(value, ticks.step), kTickSize, false).width);
    }
    const double room = length / std::max<size_t>(1, ticks.values.size() - 1);
    if ((horizontal ? widest + 16 : kTickSize * 1.8) <= room) return ticks;
  }
  return make(2);
}

void draw_legend_mark(Canvas& canvas, const LegendEntry& entry, double x, double y) {
  const double mid = y - 4;
  switch (entry.mark) {
    case LegendEntry::Mark::kBandAndLine:
      canvas.fill_polygon({{x, mid - 6}, {x + kSwatch, mid - 6}, {x + kSwatch, mid + 6}, {x, mid + 6}},
                          with_alpha(entry.color, 0.22));
      canvas.polyline({{x, mid}, {x + kSwatch, mid}}, {entry.color, 2.4, {}});
      break;
    case LegendEntry::Mark::kLine: canvas.polyline({{x, mid}, {x + kSwatch, mid}}, {entry.color, 2, entry.dashes}); break;
    case LegendEntry::Mark::kDashedArrow:
      canvas.polyline({{x, mid}, {x + kSwatch - 4, mid}}, {entry.color, 1.4, {4, 3}});
      canvas.fill_polygon({{x + kSwatch, mid}, {x + kSwatch - 7, mid - 4}, {x + kSwatch - 7, mid + 4}}, entry.color);
      break;
    case LegendEntry::Mark::kDot: {
      std::vector<Point> dot;
      for (int i = 0; i < 16; ++i) {
        const double angle = 2 * M_PI * i / 16;
        dot.push_back({x + kSwatch / 2 + 4 * std::cos(angle), mid + 4 * std::sin(angle)});
      }
      canvas.fill_polygon(dot, entry.color);
      break;
    }
  }
}

}  // namespace

Color palette_color(size_t i) {
  static const Color kPalette[] = {
      {0.122, 0.467, 0.706}, {1.000, 0.498, 0.055}, {0.173, 0.627, 0.173}, {0.839, 0.153, 0.157},
      {0.580, 0.404, 0.741}, {0.549, 0.337, 0.294}, {0.890, 0.467, 0.761}, {0.498, 0.498, 0.498},
      {0.737, 0.741, 0.133}, {0.090, 0.745, 0.812}};
  return kPalette[i % (sizeof kPalette / sizeof kPalette[0])];
}

std::vector<double> palette_dashes(size_t i) {
  static const std::vector<double> kDashes[] = {{}, {7, 3}, {2, 2.5}, {8, 3, 2, 3}};
  return kDashes[(i / 10) % 4];
}

Color with_alpha(Color color, double alpha) {
  color.a = alpha;
  return color;
}

std::string fit_text(const Canvas& canvas, const std::string& text, double size, bool bold, double width) {
  if (canvas.measure(text, size, bold).width <= width) return text;
  std::string cut = text;
  while (!cut.empty()) {
    cut.pop_back();
    while (!cut.empty() && (static_cast<unsigned char>(cut.back()) & 0xC0) == 0x80) cut.pop_back();  // whole UTF-8 characters
    if (!cut.empty() && (static_cast<unsigned char>(cut.back()) & 0x80)) cut.pop_back();
    if (canvas.measure(cut + "…", size, bold).width <= width) return cut + "…";
  }
  return "…";
}

PlotArea draw_frame(Canvas& canvas, const FrameSpec& spec) {
  canvas.clear(kWhite);
  const double width = canvas.width();
  const double height = canvas.height();

  // Title and subtitle, centred over the whole canvas.
  double top = kPad + kTitleSize;
  canvas.text(fit_text(canvas, spec.title, kTitleSize, true, width - 2 * kPad), {width / 2, top},
              {kTitleSize, true, kInk, TextAnchor::kMiddle, false});
  if (!spec.subtitle.empty()) {
    top += kSubtitleSize + 8;
    canvas.text(fit_text(canvas, spec.subtitle, kSubtitleSize, false, width - 2 * kPad), {width / 2, top},
                {kSubtitleSize, false, kMuted, TextAnchor::kMiddle, false});
  }
  top += kPad + 6;

  // The legend's column on the right.
  double legend_width = 0;
  for (const LegendEntry& entry : spec.legend) {
    legend_width = std::max(legend_width, canvas.measure(entry.label, kLegendSize, false).width);
    legend_width = std::max(legend_width, canvas.measure(entry.detail, kDetailSize, false).width);
  }
  const double legend_text_room = std::min(legend_width, width * kLegendMaxShare - kSwatch - 3 * kPad);
  const double legend_column = spec.legend.empty() ? kPad : legend_text_room + kSwatch + 8 + 2.5 * kPad;

  const double axis_bottom = height - (kPad + kLabelSize + 8 + kTickSize + kTickLength + 6);
  // Lanes of kLaneRow pixels, thinner when that would take more than 40% of the height.
  const double lane_row =
      spec.lanes.empty() ? 0
                         : std::clamp((axis_bottom - top) * 0.4 / static_cast<double>(spec.lanes.size()), 3.0, kLaneRow);
  const double lane_font = std::min(kTickSize, lane_row - 2);
  const double lanes_height = spec.lanes.empty() ? 0 : static_cast<double>(spec.lanes.size()) * lane_row + 8;
  const double bottom = spec.lanes.empty() ? axis_bottom : axis_bottom - lanes_height - kLaneGap;
  const Ticks y_ticks = fitting_ticks(canvas, spec.y_lo, spec.y_hi, bottom - top, false);
  double y_tick_width = 0;
  for (double value : y_ticks.values) {
    y_tick_width = std::max(y_tick_width, canvas.measure(format_tick(value, y_ticks.step), kTickSize, false).width);
  }
  double lane_name_width = 0;
  for (const std::string& name : spec.lanes) {
    if (lane_font < kMinLaneFont) break;
    lane_name_width = std::max(lane_name_width, canvas.measure(name, lane_font, false).width);
  }
  const double left = std::max(kPad + kLabelSize + 10 + y_tick_width + kTickLength + 6, kPad + lane_name_width + 10);
  const double right = width - legend_column;
  const Ticks x_ticks = fitting_ticks(canvas, spec.x_lo, spec.x_hi, right - left, true);

  PlotArea area;
  area.left = left;
  area.top = top;
  area.right = right;
  area.bottom = bottom;
  area.x = {x_ticks.lo, x_ticks.hi, left, right};
  area.y = {y_ticks.lo, y_ticks.hi, bottom, top};
  area.lanes_top = axis_bottom - lanes_height;
  area.lanes_bottom = axis_bottom;
  for (size_t i = 0; i < spec.lanes.size(); ++i) {
    area.lanes.push_back(area.lanes_top + 4 + (static_cast<double>(i) + 0.5) * lane_row);
  }

  const TextStyle tick_style{kTickSize, false, kMuted, TextAnchor::kMiddle, false};
  for (double value : x_ticks.values) {
    const double px = area.x(value);
    canvas.polyline({{px, top}, {px, bottom}}, {kGrid, 1, {}});
    if (!spec.lanes.empty()) canvas.polyline({{px, area.lanes_top}, {px, axis_bottom}}, {kGrid, 1, {}});
    canvas.polyline({{px, axis_bottom}, {px, axis_bottom + kTickLength}}, {kAxis, 1, {}});
    canvas.text(format_tick(value, x_ticks.step), {px, axis_bottom + kTickLength + 4 + kTickSize}, tick_style);
  }
  TextStyle y_tick_style = tick_style;
  y_tick_style.anchor = TextAnchor::kEnd;
  for (double value : y_ticks.values) {
    const double py = area.y(value);
    canvas.polyline({{left, py}, {right, py}}, {kGrid, 1, {}});
    canvas.polyline({{left - kTickLength, py}, {left, py}}, {kAxis, 1, {}});
    canvas.text(format_tick(value, y_ticks.step), {left - kTickLength - 4, py + kTickSize * 0.35}, y_tick_style);
  }
  canvas.polyline({{left, top}, {left, bottom}, {right, bottom}}, {kAxis, 1.2, {}});
  if (!spec.lanes.empty()) {
    canvas.polyline({{left, area.lanes_top}, {left, axis_bottom}, {right, axis_bottom}}, {kAxis, 1.2, {}});
    for (size_t i = 0; i < spec.lanes.size() && lane_font >= kMinLaneFont; ++i) {  // too thin lanes stay unnamed
      canvas.text(spec.lanes[i], {left - 8, area.lanes[i] + lane_font * 0.35},
                  {lane_font, false, palette_color(i), TextAnchor::kEnd, false});
    }
  }

  const TextStyle label_style{kLabelSize, false, kInk, TextAnchor::kMiddle, false};
  canvas.text(fit_text(canvas, spec.x_label, kLabelSize, false, right - left), {(left + right) / 2, height - kPad},
              label_style);
  TextStyle y_label_style = label_style;
  y_label_style.vertical = true;
  canvas.text(fit_text(canvas, spec.y_label, kLabelSize, false, bottom - top), {kPad + kLabelSize, (top + bottom) / 2},
              y_label_style);

  // Legend entries from the top of the plot area; what does not fit is counted on a last line.
  const double legend_x = right + kPad;
  const auto row_height = [](const LegendEntry& entry) { return kLegendRow + (entry.detail.empty() ? 0 : kDetailRow); };
  size_t shown = 0;
  double used = 0;
  const double legend_room = bottom - top - spec.legend_reserve;
  while (shown < spec.legend.size() && used + row_height(spec.legend[shown]) + kLegendRow <= legend_room) {
    used += row_height(spec.legend[shown++]);
  }
  if (shown + 1 == spec.legend.size() && used + row_height(spec.legend[shown]) <= legend_room) ++shown;
  double y = top + kLegendSize;
  for (size_t i = 0; i < shown; ++i) {
    const LegendEntry& entry = spec.legend[i];
    draw_legend_mark(canvas, entry, legend_x, y);
    canvas.text(fit_text(canvas, entry.label, kLegendSize, false, legend_text_room), {legend_x + kSwatch + 8, y},
                {kLegendSize, false, kInk, TextAnchor::kStart, false});
    if (!entry.detail.empty()) {
      canvas.text(fit_text(canvas, entry.detail, kDetailSize, false, legend_text_room),
                  {legend_x + kSwatch + 8, y + kDetailRow}, {kDetailSize, false, kMuted, TextAnchor::kStart, false});
    }
    y += row_height(entry);
  }
  if (shown < spec.legend.size()) {
    canvas.text("… and " + std::to_string(spec.legend.size() - shown) + " more", {legend_x + kSwatch + 8, y},
                {kLegendSize, false, kMuted, TextAnchor::kStart, false});
  }
  return area;
}

}  // namespace rlx
