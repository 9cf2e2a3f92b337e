// `rlx plot` end to end on synthetic trials: the images it writes (read back with Cairo; the SVG
// as text) and its errors.
#include <catch2/catch.hpp>

#include <cairo.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>

#include "core/temp_dir.h"
#include "run_rlx.h"

namespace fs = std::filesystem;
using rlx::test::read_text_file;
using rlx::test::run_rlx;

namespace {

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// A trial whose return climbs from `start` by `slope` per 1000 steps, logged every 1000 steps.
void write_trial(const fs::path& dir, const std::string& experiment, int seed, double start, double slope,
                 int rows = 40, double lr = 0.0003) {
  std::string csv = "training_iteration,timesteps_total,time_total_s,episodes_total,episode_return_mean,learner/policy_loss\n";
  for (int i = 1; i <= rows; ++i) {
    csv += std::to_string(i) + "," + std::to_string(i * 1000) + "," + std::to_string(i) + "," + std::to_string(i * 10) +
           "," + std::to_string(start + slope * i + 5 * std::sin(i + seed)) + "," + std::to_string(0.1 / i) + "\n";
  }
  write_file(dir / "progress.csv", csv);
  write_file(dir / "params.yaml", experiment + ":\n  env: CartPole-v1\n  config:\n    seed: " + std::to_string(seed) +
                                      "\n    lr: " + std::to_string(lr) + "\n    clip_param: 0.2\n");
}

// Three seeds of one experiment and a single run of another, under root/.
void write_experiments(const fs::path& root) {
  for (int seed = 0; seed < 3; ++seed) {
    write_trial(root / "cartpole-ppo" / ("PPO_seed" + std::to_string(seed)), "cartpole-ppo", seed, 20, 8 + seed);
  }
  write_trial(root / "cartpole-dqn" / "DQN_seed0", "cartpole-dqn", 0, 10, 5);
}

// A PBT experiment: four trials, two exploits.
void write_pbt_experiment(const fs::path& dir) {
  for (int i = 0; i < 4; ++i) {
    write_trial(dir / ("trial_0000" + std::to_string(i)), "pbt-cartpole-ppo", i, 10, 2 + 2 * i, 30, 0.001 * (i + 1));
  }
  write_file(dir / "pbt_log.jsonl",
             R"({"id":"trial_00000@1","trial":"trial_00000","donor":"trial_00003","donor_timesteps_total":10000,)"
             R"("timesteps_total":10000,"training_iteration":10,"new_params":{"lr":0.0048,"clip_param":0.3},)"
             R"("old_params":{"lr":0.001,"clip_param":0.2}})"
             "\n"
             R"({"id":"trial_00001@1","trial":"trial_00001","donor":"trial_00002","donor_timesteps_total":20000,)"
             R"("timesteps_total":20000,"training_iteration":20,"new_params":{"lr":0.0024,"clip_param":0.1},)"
             R"("old_params":{"lr":0.002,"clip_param":0.2}})"
             "\n");
}

struct SurfaceDeleter {
  void operator()(cairo_surface_t* surface) const { cairo_surface_destroy(surface); }
};

struct PngSummary {
  int width = 0;
  int height = 0;
  size_t colours = 0;           // distinct ARGB values in the whole image
  double inked_fraction = 0;    // of the central region's pixels, those not white
};

PngSummary read_png(const fs::path& path) {
  std::unique_ptr<cairo_surface_t, SurfaceDeleter> surface(cairo_image_surface_create_from_png(path.c_str()));
  REQUIRE(cairo_surface_status(surface.get()) == CAIRO_STATUS_SUCCESS);
  cairo_surface_flush(surface.get());
  PngSummary summary;
  summary.width = cairo_image_surface_get_width(surface.get());
  summary.height = cairo_image_surface_get_height(surface.get());
  const int stride = cairo_image_surface_get_stride(surface.get());
  const unsigned char* data = cairo_image_surface_get_data(surface.get());
  std::set<uint32_t> colours;
  size_t inked = 0;
  size_t central = 0;
  for (int y = 0; y < summary.height; ++y) {
    const auto* row = reinterpret_cast<const uint32_t*>(data + static_cast<ptrdiff_t>(y) * stride);
    for (int x = 0; x < summary.width; ++x) {
      colours.insert(row[x]);
      if (x > summary.width / 8 && x < summary.width * 5 / 8 && y > summary.height / 6 && y < summary.height * 5 / 6) {
        ++central;
        if (row[x] != 0xFFFFFFFFu) ++inked;
      }
    }
  }
  summary.colours = colours.size();
  summary.inked_fraction = static_cast<double>(inked) / static_cast<double>(central);
  return summary;
}

}  // namespace

TEST_CASE("rlx plot draws seeds as a band and other runs as lines into a PNG of the size asked", "[cli][plot]") {
  const rlx::TempDir dir("rlx-plot-");
  write_experiments(dir.path());
  const fs::path png = dir.path() / "curves.png";
  const auto result = run_rlx("plot " + (dir.path() / "cartpole-ppo").string() + " " +
                              (dir.path() / "cartpole-dqn" / "DQN_seed0").string() + " -o " + png.string() +
                              " --size 800x500");
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  CHECK_THAT(result.out, Catch::Contains("4 trials"));
  const PngSummary summary = read_png(png);
  CHECK(summary.width == 800);
  CHECK(summary.height == 500);
  CHECK(summary.colours > 20);               // text, grid, two curve colours, a band, anti-aliasing
  CHECK(summary.inked_fraction > 0.02);      // curves and the band cover the plot area
}

TEST_CASE("rlx plot writes an SVG whose axis labels, title and legend are text", "[cli][plot]") {
  const rlx::TempDir dir("rlx-plot-");
  write_experiments(dir.path());
  const fs::path svg = dir.path() / "curves.svg";
  const auto result = run_rlx("plot " + dir.path().string() + " -o " + svg.string());
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  const std::string text = read_text_file(svg.string());
  CHECK_THAT(text, Catch::StartsWith("<?xml"));
  CHECK_THAT(text, Catch::Contains(">environment steps</text>"));
  CHECK_THAT(text, Catch::Contains(">episode return (mean of last 100 episodes)</text>"));
  CHECK_THAT(text, Catch::Contains(">cartpole-ppo: mean of 3 seeds</text>"));
  CHECK_THAT(text, Catch::Contains(">cartpole-dqn (DQN_seed0)</text>"));
  CHECK_THAT(text, Catch::Contains("episode return against environment steps</text>"));
  CHECK_THAT(text, Catch::Contains(">40k</text>"));  // a tick label
}

TEST_CASE("rlx plot tells groups of one experiment apart by the config keys they differ in", "[cli][plot]") {
  const rlx::TempDir dir("rlx-plot-");
  for (int seed = 0; seed < 2; ++seed) {
    write_trial(dir.path() / "a" / ("PPO_seed" + std::to_string(seed)), "cartpole-ppo", seed, 20, 8, 40, 0.0003);
    write_trial(dir.path() / "b" / ("PPO_seed" + std::to_string(seed)), "cartpole-ppo", seed, 20, 4, 40, 0.001);
  }
  const fs::path svg = dir.path() / "lr.svg";
  const auto result = run_rlx("plot " + dir.path().string() + " -o " + svg.string());
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  const std::string text = read_text_file(svg.string());
  CHECK_THAT(text, Catch::Contains(">cartpole-ppo (lr 3e-4): mean of 2 seeds</text>"));
  CHECK_THAT(text, Catch::Contains(">cartpole-ppo (lr 1e-3): mean of 2 seeds</text>"));
}

TEST_CASE("rlx plot --metric draws another progress.csv column", "[cli][plot]") {
  const rlx::TempDir dir("rlx-plot-");
  write_experiments(dir.path());
  const fs::path svg = dir.path() / "loss.svg";
  const auto result = run_rlx("plot " + dir.path().string() + " --metric learner/policy_loss -o " + svg.string());
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  CHECK_THAT(read_text_file(svg.string()), Catch::Contains(">policy loss (learner/policy_loss)</text>"));
}

TEST_CASE("rlx plot --pbt draws the family tree with exploit edges and hyperparameter labels", "[cli][plot]") {
  const rlx::TempDir dir("rlx-plot-");
  write_pbt_experiment(dir.path() / "pbt-cartpole-ppo");
  const fs::path svg = dir.path() / "tree.svg";
  const fs::path png = dir.path() / "tree.png";
  const auto result = run_rlx("plot --pbt " + (dir.path() / "pbt-cartpole-ppo").string() + " -o " + svg.string());
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  CHECK_THAT(result.out, Catch::Contains("4 trials, 2 exploits"));
  const std::string text = read_text_file(svg.string());
  CHECK_THAT(text, Catch::Contains("population-based training, 4 trials, 2 exploits</text>"));
  CHECK_THAT(text, Catch::Contains(">exploit: donor → receiver</text>"));
  CHECK_THAT(text, Catch::Contains(">clip_param 0.3, lr 4.8e-3</text>"));  // trial_00000's exploit
  CHECK_THAT(text, Catch::Contains(">start: clip_param 0.2, lr 4e-3</text>"));  // trial_00003's, from params.yaml
  CHECK_THAT(text, Catch::Contains(">start: clip_param 0.2, lr 1e-3</text>"));  // trial_00000's, from its exploit
  CHECK_THAT(text, Catch::Contains(">trial_00003</text>"));  // a lineage lane's name

  const auto png_result = run_rlx("plot --pbt " + (dir.path() / "pbt-cartpole-ppo").string() + " -o " + png.string());
  REQUIRE(png_result.exit_code == 0);
  const PngSummary summary = read_png(png);
  CHECK(summary.width == 1200);
  CHECK(summary.height == 900);  // --pbt's default: room for the lineage under the curves
  CHECK(summary.colours > 20);
  CHECK(summary.inked_fraction > 0.02);
}

TEST_CASE("rlx plot --x draws against another column, the PBT tree's exploits placed at their rows", "[cli][plot]") {
  const rlx::TempDir dir("rlx-plot-");
  write_pbt_experiment(dir.path() / "pbt-cartpole-ppo");
  const fs::path svg = dir.path() / "tree.svg";
  const auto result = run_rlx("plot --pbt " + (dir.path() / "pbt-cartpole-ppo").string() +
                              " --x training_iteration -o " + svg.string());
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  const std::string text = read_text_file(svg.string());
  CHECK_THAT(text, Catch::Contains(">training iterations</text>"));
  CHECK_THAT(text, Catch::Contains(">clip_param 0.3, lr 4.8e-3</text>"));  // the exploit at step 10000: iteration 10
  CHECK_THAT(text, Catch::Contains(">30</text>"));                         // iterations, not steps, on the axis
}

TEST_CASE("rlx plot names a folder without trials and exits 2", "[cli][plot]") {
  const rlx::TempDir dir("rlx-plot-");
  fs::create_directories(dir.path() / "empty");
  const auto result = run_rlx("plot " + (dir.path() / "empty").string() + " -o " + (dir.path() / "x.png").string());
  CHECK(result.exit_code == 2);
  CHECK_THAT(result.err, Catch::Contains("empty' holds no trial"));
  CHECK_FALSE(fs::exists(dir.path() / "x.png"));
}

TEST_CASE("rlx plot with an unknown metric lists the columns there are and exits 2", "[cli][plot]") {
  const rlx::TempDir dir("rlx-plot-");
  write_experiments(dir.path());
  const auto result = run_rlx("plot " + dir.path().string() + " --metric learner/nope -o " + (dir.path() / "x.png").string());
  CHECK(result.exit_code == 2);
  CHECK_THAT(result.err, Catch::Contains("'learner/nope' is no column of"));
  CHECK_THAT(result.err, Catch::Contains("episode_return_mean, learner/policy_loss"));
}

TEST_CASE("rlx plot refuses an output that is neither .png nor .svg and exits 2", "[cli][plot]") {
  const rlx::TempDir dir("rlx-plot-");
  write_experiments(dir.path());
  const auto result = run_rlx("plot " + dir.path().string() + " -o " + (dir.path() / "x.jpg").string());
  CHECK(result.exit_code == 2);
  CHECK_THAT(result.err, Catch::Contains("x.jpg': unknown image format '.jpg'"));
  CHECK_THAT(result.err, Catch::Contains(".png or .svg"));
}

TEST_CASE("rlx plot --pbt on a folder without pbt_log.jsonl says so and exits 2", "[cli][plot]") {
  const rlx::TempDir dir("rlx-plot-");
  write_experiments(dir.path());
  const auto result = run_rlx("plot --pbt " + (dir.path() / "cartpole-ppo").string() + " -o " +
                              (dir.path() / "x.png").string());
  CHECK(result.exit_code == 2);
  CHECK_THAT(result.err, Catch::Contains("cartpole-ppo' has no pbt_log.jsonl"));
}

TEST_CASE("rlx plot refuses a bad --size and exits 2", "[cli][plot]") {
  const rlx::TempDir dir("rlx-plot-");
  write_experiments(dir.path());
  const auto result = run_rlx("plot " + dir.path().string() + " --size 12x9000 -o " + (dir.path() / "x.png").string());
  CHECK(result.exit_code == 2);
  CHECK_THAT(result.err, Catch::Contains("--size '12x9000'"));
}

TEST_CASE("rlx-plot alone links Cairo, and neither it nor rlx links LibTorch", "[cli][plot][lean]") {
  const std::string binary_dir = RLX_BINARY_DIR;
  const auto ldd = [](const std::string& program) {
    std::string out;
    FILE* pipe = ::popen(("ldd " + program).c_str(), "r");
    REQUIRE(pipe != nullptr);
    char buffer[4096];
    while (size_t n = std::fread(buffer, 1, sizeof(buffer), pipe)) out.append(buffer, n);
    ::pclose(pipe);
    return out;
  };
  const std::string light = ldd(binary_dir + "/rlx");
  const std::string plot = ldd(binary_dir + "/rlx-plot");
  INFO("ldd rlx:\n" << light << "\nldd rlx-plot:\n" << plot);
  REQUIRE_THAT(light, Catch::Contains("libc.so"));  // ldd ran
  CHECK_THAT(light, !Catch::Contains("libcairo"));   // `rlx worker` loads no Cairo
  CHECK_THAT(plot, Catch::Contains("libcairo"));
  CHECK_THAT(plot, !Catch::Contains("torch") && !Catch::Contains("libc10"));
}

TEST_CASE("rlx-torch hands plot over to rlx-plot as rlx does", "[cli][plot]") {
  const rlx::TempDir dir("rlx-plot-");
  write_experiments(dir.path());
  const fs::path svg = dir.path() / "curves.svg";
  const std::string command = std::string(RLX_BINARY_DIR) + "/rlx-torch plot " + dir.path().string() + " -o " +
                              svg.string() + " >/dev/null 2>&1";
  CHECK(std::system(command.c_str()) == 0);
  CHECK(fs::exists(svg));
}
