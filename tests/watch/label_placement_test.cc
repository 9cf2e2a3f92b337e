// Label placement for rlx plot --pbt: labels never overlap, stay inside, and leaders cross none.
#include <catch2/catch.hpp>

#include <vector>

#include "watch/label_placement.h"

TEST_CASE("place_labels puts a lone label above right of its anchor", "[watch][plot]") {
  const std::vector<rlx::PlacedLabel> placed = rlx::place_labels({{{100, 100}, 50, 12}}, {0, 0, 400, 300}, {});
  REQUIRE(placed.size() == 1);
  CHECK(placed[0].box.x0 > 100);
  CHECK(placed[0].box.y1 < 100);
  CHECK_FALSE(placed[0].leader);
}

TEST_CASE("place_labels keeps crowded labels apart, inside the bounds, and their leaders off other labels",
          "[watch][plot]") {
  std::vector<rlx::LabelRequest> requests;
  for (int i = 0; i < 40; ++i) requests.push_back({{200.0 + (i % 5) * 10, 150.0 + (i % 3) * 5}, 90, 14});
  const rlx::Box bounds{0, 0, 500, 300};
  const rlx::Box obstacle{195, 145, 205, 155};
  const std::vector<rlx::PlacedLabel> placed = rlx::place_labels(requests, bounds, {obstacle});
  CHECK(placed.size() > 10);
  CHECK(placed.size() < requests.size());  // not all fit: the rest are left out, not piled up
  for (size_t i = 0; i < placed.size(); ++i) {
    const rlx::Box& box = placed[i].box;
    CHECK(box.x0 >= bounds.x0);
    CHECK(box.x1 <= bounds.x1);
    CHECK(box.y0 >= bounds.y0);
    CHECK(box.y1 <= bounds.y1);
    CHECK_FALSE(box.overlaps(obstacle));
    for (size_t j = 0; j < placed.size(); ++j) {
      if (i == j) continue;
      CHECK_FALSE(box.overlaps(placed[j].box));
      if (placed[j].leader) CHECK_FALSE(rlx::segment_crosses(placed[j].leader->first, placed[j].leader->second, box));
    }
  }
}

TEST_CASE("place_labels leaves out a label wider than the bounds", "[watch][plot]") {
  CHECK(rlx::place_labels({{{50, 50}, 500, 12}}, {0, 0, 200, 100}, {}).empty());
}
