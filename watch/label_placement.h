// Where text labels go beside the points they name, so that no two labels overlap and no
// leader line crosses a label: a greedy search over rings of spots around each point.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "watch/canvas.h"

namespace rlx {

// A rectangle in pixels, x0 < x1, y0 < y1.
struct Box {
  double x0 = 0;
  double y0 = 0;
  double x1 = 0;
  double y1 = 0;

  // Whether the two come closer than `gap` pixels.
  bool overlaps(const Box& other, double gap = 2) const {
    return x0 < other.x1 + gap && other.x0 < x1 + gap && y0 < other.y1 + gap && other.y0 < y1 + gap;
  }
  bool contains(const Point& p) const { return p.x >= x0 && p.x <= x1 && p.y >= y0 && p.y <= y1; }
};

// Whether the segment from a to b passes through `box`.
bool segment_crosses(const Point& a, const Point& b, const Box& box);

// A label to place: the point it names and its size.
struct LabelRequest {
  Point anchor;
  double width = 0;
  double height = 0;
};

struct PlacedLabel {
  size_t request = 0;  // index into the requests
  Box box;
  std::optional<std::pair<Point, Point>> leader;  // anchor to the box's nearer edge, when off the anchor
};

// Places the requests in order, each at the first spot around its anchor (above right, below
// right, above left, below left, then the same a label's height further out, up to `rings`
// times) that lies inside `bounds` and keeps clear of `obstacles`, of the labels placed before
// it and of their leader lines; a label off its anchor gets a leader that crosses no placed
// label. Requests without such a spot are left out of the result.
std::vector<PlacedLabel> place_labels(const std::vector<LabelRequest>& requests, const Box& bounds,
                                      const std::vector<Box>& obstacles, int rings = 10);

}  // namespace rlx
