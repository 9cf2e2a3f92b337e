// A plot's frame on a canvas: title, axes with labelled ticks and a grid, the axis labels, and
// a legend to the right of the plot area (outside it, so it never covers a curve).
#pragma once

#include <string>
#include <vector>

#include "watch/canvas.h"
#include "watch/plot_axes.h"

namespace rlx {

struct LegendEntry {
  enum class Mark { kLine, kBandAndLine, kDashedArrow, kDot };
  std::string label;
  Color color;
  Mark mark = Mark::kLine;
  std::string detail;  // a smaller second line under the label; may be empty
  std::vector<double> dashes;  // a kLine mark's dash pattern (palette_dashes); empty: solid
};

struct FrameSpec {
  std::string title;
  std::string subtitle;  // a smaller line under the title (how the curves were made); may be empty
  std::string x_label;
  std::string y_label;
  double x_lo = 0;  // the data's range, which the axes widen to whole ticks
  double x_hi = 1;
  double y_lo = 0;
  double y_hi = 1;
  std::vector<LegendEntry> legend;
  // Rows of a second panel under the plot, sharing its x axis (a PBT run's lineage): one per
  // name, which is written left of its row in palette_color(row). Empty: no such panel.
  std::vector<std::string> lanes;
  double legend_reserve = 0;  // pixels kept free at the bottom of the legend's column
};

// The rectangle data is drawn in, and the maps into it.
struct PlotArea {
  double left = 0;
  double top = 0;
  double right = 0;
  double bottom = 0;
  AxisMap x;
  AxisMap y;
  std::vector<double> lanes;  // each lane's y, when the spec has lanes
  double lanes_top = 0;
  double lanes_bottom = 0;

  Point at(double data_x, double data_y) const { return {x(data_x), y(data_y)}; }
};

// Draws the background and the frame `spec` describes; returns where the data goes.
PlotArea draw_frame(Canvas& canvas, const FrameSpec& spec);

// The i-th colour of the plots' palette (Tableau 10, repeating).
Color palette_color(size_t i);

// The dash pattern of the i-th line: solid for the first ten (one per palette colour), then
// dashed, dotted and dash-dotted, so that lines sharing a colour differ.
std::vector<double> palette_dashes(size_t i);

// `color` with its alpha set to `alpha`.
Color with_alpha(Color color, double alpha);

// `text` cut to at most `width` pixels at `size`, ending in "…" when cut.
std::string fit_text(const Canvas& canvas, const std::string& text, double size, bool bold, double width);

}  // namespace rlx
