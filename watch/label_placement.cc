#include "watch/label_placement.h"

#include <algorithm>
#include <cmath>

namespace rlx {

namespace {

constexpr double kOffset = 6;  // between an anchor and its label
constexpr double kRingGap = 3;

}  // namespace

bool segment_crosses(const Point& a, const Point& b, const Box& box) {
  const int steps = 1 + static_cast<int>(std::hypot(b.x - a.x, b.y - a.y));  // a sample per pixel
  for (int i = 0; i <= steps; ++i) {
    const double t = static_cast<double>(i) / steps;
    if (box.contains({a.x + t * (b.x - a.x), a.y + t * (b.y - a.y)})) return true;
  }
  return false;
}

std::vector<PlacedLabel> place_labels(const std::vector<LabelRequest>& requests, const Box& bounds,
                                      const std::vector<Box>& obstacles, int rings) {
  std::vector<PlacedLabel> placed;
  std::vector<std::pair<Point, Point>> leaders;
  const auto inside = [&](const Box& box) {
    return box.x0 >= bounds.x0 && box.x1 <= bounds.x1 && box.y0 >= bounds.y0 && box.y1 <= bounds.y1;
  };
  for (size_t index = 0; index < requests.size(); ++index) {
    const LabelRequest& request = requests[index];
    const Point& p = request.anchor;
    const double w = request.width;
    const double h = request.height;
    std::optional<PlacedLabel> chosen;
    for (int ring = 0; ring < rings && !chosen; ++ring) {
      const double dy = ring * (h + kRingGap);
      const Box candidates[] = {{p.x + kOffset, p.y - kOffset - h - dy, p.x + kOffset + w, p.y - kOffset - dy},
                                {p.x + kOffset, p.y + kOffset + dy, p.x + kOffset + w, p.y + kOffset + h + dy},
                                {p.x - kOffset - w, p.y - kOffset - h - dy, p.x - kOffset, p.y - kOffset - dy},
                                {p.x - kOffset - w, p.y + kOffset + dy, p.x - kOffset, p.y + kOffset + h + dy}};
      for (const Box& box : candidates) {
        if (!inside(box)) continue;
        const auto hits = [&](const Box& other) { return box.overlaps(other); };
        if (std::any_of(obstacles.begin(), obstacles.end(), hits)) continue;
        if (std::any_of(placed.begin(), placed.end(), [&](const PlacedLabel& other) { return hits(other.box); })) continue;
        if (std::any_of(leaders.begin(), leaders.end(),
                        [&](const auto& leader) { return segment_crosses(leader.first, leader.second, box); })) {
          continue;
        }
        std::optional<std::pair<Point, Point>> leader;
        if (ring > 0) {
          const Point end{std::clamp(p.x, box.x0, box.x1), p.y < box.y0 ? box.y0 : box.y1};
          if (std::any_of(placed.begin(), placed.end(),
                          [&](const PlacedLabel& other) { return segment_crosses(p, end, other.box); })) {
            continue;
          }
          leader = std::make_pair(p, end);
        }
        chosen = PlacedLabel{index, box, leader};
        break;
      }
    }
    if (!chosen) continue;
    if (chosen->leader) leaders.push_back(*chosen->leader);
    placed.push_back(*chosen);
  }
  return placed;
}

}  // namespace rlx
