// rlx plot's axes: tick positions and how tick labels and hyperparameters read.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "watch/plot_axes.h"

TEST_CASE("nice_ticks steps by 1, 2, 2.5 or 5 times a power of ten and covers the range", "[watch][plot]") {
  const rlx::Ticks steps = rlx::nice_ticks(0, 43000, 8);
  CHECK(steps.step == Approx(5000));
  CHECK(steps.lo == 0);
  CHECK(steps.hi == Approx(45000));
  REQUIRE(steps.values.size() == 10);
  CHECK(steps.values.back() == Approx(45000));

  const rlx::Ticks returns = rlx::nice_ticks(21.4, 479.2, 10);
  CHECK(returns.step == Approx(50));
  CHECK(returns.lo == 0);
  CHECK(returns.hi == Approx(500));

  const rlx::Ticks losses = rlx::nice_ticks(-0.048, 0.477, 10);
  CHECK(losses.step == Approx(0.05));
  CHECK(losses.lo == Approx(-0.05));
  CHECK(losses.hi == Approx(0.5));
  CHECK(std::count(losses.values.begin(), losses.values.end(), 0.0) == 1);  // zero exactly, not 1e-17
}

TEST_CASE("nice_ticks widens a range of one value and orders a reversed one", "[watch][plot]") {
  const rlx::Ticks flat = rlx::nice_ticks(200, 200, 5);
  CHECK(flat.lo < 200);
  CHECK(flat.hi > 200);
  const rlx::Ticks reversed = rlx::nice_ticks(10, 0, 5);
  CHECK(reversed.lo == 0);
  CHECK(reversed.hi == Approx(10));
}

TEST_CASE("format_tick writes thousands as k and millions as M with the decimals the step needs", "[watch][plot]") {
  CHECK(rlx::format_tick(0, 5000) == "0");
  CHECK(rlx::format_tick(500, 250) == "500");
  CHECK(rlx::format_tick(1000, 250) == "1k");
  CHECK(rlx::format_tick(1250, 250) == "1.25k");
  CHECK(rlx::format_tick(100000, 50000) == "100k");
  CHECK(rlx::format_tick(1000000, 200000) == "1M");
  CHECK(rlx::format_tick(1500000, 500000) == "1.5M");
  CHECK(rlx::format_tick(2500000000.0, 500000000) == "2.5B");
  CHECK(rlx::format_tick(-2000, 1000) == "-2k");
}

TEST_CASE("format_tick writes fractions plainly and small steps in scientific notation", "[watch][plot]") {
  CHECK(rlx::format_tick(0.25, 0.05) == "0.25");
  CHECK(rlx::format_tick(-0.05, 0.05) == "-0.05");
  CHECK(rlx::format_tick(1.5, 0.5) == "1.5");
  CHECK(rlx::format_tick(2e-4, 1e-4) == "2e-4");
  CHECK(rlx::format_tick(7.5e-4, 2.5e-4) == "7.5e-4");
  CHECK(rlx::format_tick(1e-3, 2.5e-4) == "1e-3");
  CHECK(rlx::format_tick(1e-17, 0.05) == "0");  // rounding noise at zero
}

TEST_CASE("format_compact keeps three significant digits", "[watch][plot]") {
  CHECK(rlx::format_compact(0.2) == "0.2");
  CHECK(rlx::format_compact(0.01) == "0.01");
  CHECK(rlx::format_compact(0.0003) == "3e-4");
  CHECK(rlx::format_compact(0.0005894622555308) == "5.89e-4");
  CHECK(rlx::format_compact(475) == "475");
  CHECK(rlx::format_compact(1500) == "1.5k");
  CHECK(rlx::format_compact(12345) == "12.3k");
  CHECK(rlx::format_compact(0) == "0");
}

TEST_CASE("format_compact_text shortens numbers and keeps other text", "[watch][plot]") {
  CHECK(rlx::format_compact_text("0.000300") == "3e-4");
  CHECK(rlx::format_compact_text("0.2") == "0.2");
  CHECK(rlx::format_compact_text("tanh") == "tanh");
  CHECK(rlx::format_compact_text("[64, 64]") == "[64, 64]");
}

TEST_CASE("column_label names the unit of the standard columns and passes others through", "[watch][plot]") {
  CHECK(rlx::column_label("timesteps_total") == "environment steps");
  CHECK(rlx::column_label("episode_return_mean") == "episode return (mean of last 100 episodes)");
  CHECK(rlx::column_label("learner/policy_loss") == "policy loss (learner/policy_loss)");
  CHECK(rlx::column_label("learner/grad_norm") == "learner/grad_norm");
}

TEST_CASE("AxisMap maps the range onto pixels, flipped for a y axis", "[watch][plot]") {
  const rlx::AxisMap y{0, 500, 600, 100};
  CHECK(y(0) == Approx(600));
  CHECK(y(500) == Approx(100));
  CHECK(y(250) == Approx(350));
}
