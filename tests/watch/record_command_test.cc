// `rlx evaluate CHECKPOINT --record OUT.mp4|OUT.gif` for every built-in env, a plugin env and a
// Python env that draw themselves, as a user runs it: a checkpoint from a short training, then
// the videos decoded with FFmpeg.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../cli/run_rlx.h"
#include "../core/test_util.h"
#include "video_decode.h"

namespace {

namespace fs = std::filesystem;
using rlx::test::CommandOutput;
using rlx::test::run_rlx;

// A checkpoint of `env_id` after one PPO iteration of 256 steps; `more` adds lines to the
// experiment (e.g. "  plugins: [...]\n").
fs::path short_training_checkpoint(const rlx::test::TempDir& tmp, const std::string& env_id, const std::string& more = "") {
  const fs::path experiment = tmp / "tiny.yaml";
  rlx::test::write_text(experiment, "tiny:\n  env: " + env_id + "\n" + more +
                                        "  algorithm: PPO\n  stop: {timesteps_total: 256}\n"
                                        "  config: {num_workers: 0, rollout_fragment_length: 256, "
                                        "train_batch_size: 256, num_epochs: 1, checkpoint_freq: 1}\n");
  const CommandOutput run =
      run_rlx("train " + experiment.string() + " --trial-name t --output " + (tmp / "runs").string() + " -q");
  INFO(run.err);
  REQUIRE(run.exit_code == 3);  // stopped by timesteps_total, the reward target unset
  return tmp / "runs" / "tiny" / "t" / "checkpoints" / "checkpoint_000001";
}

// The JSON summary rlx evaluate prints last.
nlohmann::json summary_of(const CommandOutput& run) {
  const std::string& out = run.out;
  const size_t start = out.rfind('{');
  REQUIRE(start != std::string::npos);
  return nlohmann::json::parse(out.substr(start));
}

void check_records(const std::string& env_id) {
  INFO(env_id);
  rlx::test::TempDir tmp;
  const fs::path checkpoint = short_training_checkpoint(tmp, env_id);
  for (const char* extension : {".mp4", ".gif"}) {
    const fs::path video = tmp / (std::string("episode") + extension);
    const CommandOutput run = run_rlx("evaluate " + checkpoint.string() + " --episodes 2 --record-episodes 1 --record " +
                                      video.string() + " --width 64 --height 48");
    INFO(run.out << run.err);
    REQUIRE(run.exit_code == 0);
    const nlohmann::json summary = summary_of(run);
    const int64_t frames_written = summary.at("video_frames").get<int64_t>();
    CHECK(frames_written >= 2);  // the reset and at least one step
    const rlx::test::DecodedVideo decoded = rlx::test::decode_video(video.string());
    CHECK(decoded.width == 64);
    CHECK(decoded.height == 48);
    CHECK(decoded.frames >= 2);
    // Every frame in the MP4; a GIF of a faster env keeps every k-th (at most 50 a second).
    if (std::string(extension) == ".mp4") {
      CHECK(decoded.frames == frames_written);
    } else {
      CHECK(decoded.frames <= frames_written);
    }
    CHECK(decoded.frames_differing_from_previous >= 1);
  }
}

}  // namespace

TEST_CASE("rlx evaluate --record films every classic-control env in MP4 and GIF", "[watch][video][cli]") {
  for (const char* env_id : {"CartPole-v1", "Pendulum-v1", "Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0"}) {
    check_records(env_id);
  }
}

TEST_CASE("rlx evaluate --record films every MuJoCo env in MP4 and GIF", "[watch][video][cli]") {
  for (const char* env_id : {"Hopper-v4", "HalfCheetah-v4", "Walker2d-v4", "Ant-v4", "InvertedPendulum-v4"}) {
    check_records(env_id);
  }
}

TEST_CASE("rlx evaluate --record refuses a bad video name before it runs", "[watch][video][cli]") {
  rlx::test::TempDir tmp;
  const CommandOutput run = run_rlx("evaluate " + (tmp / "none").string() + " --record " + (tmp / "clip.avi").string());
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("clip.avi") != std::string::npos);
  CHECK(run.err.find(".mp4 or .gif") != std::string::npos);
}

TEST_CASE("record_video_every films the policy of every N-th iteration into videos/", "[watch][video][cli]") {
  rlx::test::TempDir tmp;
  const CommandOutput run = run_rlx("train " + std::string(RLX_SOURCE_DIR) +
                                    "/experiments/cartpole-ppo.yaml --workers 0 --seed 2 --set stop.timesteps_total=4096 "
                                    "--set record_video_every=2 --set checkpoint_freq=0 --trial-name t --output " +
                                    (tmp / "runs").string() + " -q");
  INFO(run.err);
  REQUIRE(run.exit_code == 3);  // stopped by timesteps_total
  const fs::path trial = tmp / "runs" / "cartpole-ppo" / "t";
  CHECK(rlx::test::names_in(trial / "videos") ==
        std::vector<std::string>{"iteration_000002.mp4", "iteration_000004.mp4"});
  for (const char* name : {"iteration_000002.mp4", "iteration_000004.mp4"}) {
    const rlx::test::DecodedVideo video = rlx::test::decode_video((trial / "videos" / name).string());
    CHECK(video.width == 600);
    CHECK(video.height == 400);
    CHECK(video.frames >= 2);
  }
  // Each video came from a checkpoint of its iteration.
  CHECK(fs::exists(trial / "checkpoints" / "checkpoint_000002"));
}

TEST_CASE("record_video_every is refused for an env rlx cannot film", "[watch][video][cli]") {
  rlx::test::TempDir tmp;
  const fs::path experiment = tmp / "plugin.yaml";
  rlx::test::write_text(experiment, "counter:\n  env: PluginCounter-v0\n  algorithm: PPO\n  plugins: [" +
                                        std::string(RLX_TEST_PLUGIN_GOOD) +
                                        "]\n  stop: {timesteps_total: 512}\n  config: {num_workers: 0, record_video_every: 1}\n");
  const CommandOutput run = run_rlx("train " + experiment.string() + " --output " + (tmp / "runs").string() + " -q");
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("record_video_every") != std::string::npos);
  CHECK(run.err.find("PluginCounter-v0") != std::string::npos);
}

namespace {

// The first frame's pixel (x, y) as its brightest channel.
int brightness(const rlx::test::DecodedVideo& video, int x, int y) {
  const size_t at = (static_cast<size_t>(y) * static_cast<size_t>(video.width) + static_cast<size_t>(x)) * 3;
  return std::max({video.first_frame.at(at), video.first_frame.at(at + 1), video.first_frame.at(at + 2)});
}

// The plugin of tests/plugins/drawing.cc, as an experiment line.
std::string drawing_plugin() { return "  plugins: [" + std::string(RLX_TEST_PLUGIN_DRAWING) + "]\n"; }

}  // namespace

TEST_CASE("rlx evaluate --record films a plugin env through its render(), in MP4 and GIF, at the env's frame rate",
          "[watch][video][cli][plugins]") {
  rlx::test::TempDir tmp;
  const fs::path checkpoint = short_training_checkpoint(tmp, "PluginWalker-v0", drawing_plugin());
  for (const char* extension : {".mp4", ".gif"}) {
    INFO(extension);
    const fs::path video = tmp / (std::string("walker") + extension);
    const CommandOutput run = run_rlx("evaluate " + checkpoint.string() + " --episodes 1 --record " + video.string());
    INFO(run.out << run.err);
    REQUIRE(run.exit_code == 0);
    CHECK(summary_of(run).at("video_frames") == 11);  // the reset and 10 steps
    const rlx::test::DecodedVideo decoded = rlx::test::decode_video(video.string());
    CHECK(decoded.width == 176);  // the env's own picture: 11 squares of 16 pixels
    CHECK(decoded.height == 32);
    CHECK(decoded.frames == 11);
    CHECK(decoded.frames_differing_from_previous == 10);  // the walker moves every step
    // After the reset the walker's square is the first one of the top row.
    CHECK(brightness(decoded, 8, 8) > 200);
    CHECK(brightness(decoded, 40, 8) < 50);
    CHECK(brightness(decoded, 8, 24) < 50);
    if (std::string(extension) == ".mp4") CHECK(decoded.duration_s == Approx(1.1).margin(0.05));  // 10 frames a second
  }
  SECTION("--width scales the env's picture, keeping its aspect; --fps overrides its rate") {
    const fs::path video = tmp / "wide.mp4";
    const CommandOutput run =
        run_rlx("evaluate " + checkpoint.string() + " --episodes 1 --fps 20 --width 352 --record " + video.string());
    INFO(run.out << run.err);
    REQUIRE(run.exit_code == 0);
    const rlx::test::DecodedVideo decoded = rlx::test::decode_video(video.string());
    CHECK(decoded.width == 352);
    CHECK(decoded.height == 64);
    CHECK(brightness(decoded, 16, 16) > 200);
    CHECK(brightness(decoded, 80, 16) < 50);
    CHECK(decoded.duration_s == Approx(0.55).margin(0.05));
  }
}

TEST_CASE("rlx evaluate --record films a MinAtar env through its own 160 x 160 picture at 20 frames a second",
          "[watch][video][cli][minatar]") {
  rlx::test::TempDir tmp;
  const fs::path checkpoint = short_training_checkpoint(tmp, "MinAtar/SpaceInvaders-v1");
  const fs::path video = tmp / "invaders.mp4";
  const CommandOutput run = run_rlx("evaluate " + checkpoint.string() + " --episodes 1 --record " + video.string());
  INFO(run.out << run.err);
  REQUIRE(run.exit_code == 0);
  const int64_t frames = summary_of(run).at("video_frames").get<int64_t>();
  CHECK(frames >= 2);  // the reset and every step of the episode
  const rlx::test::DecodedVideo decoded = rlx::test::decode_video(video.string());
  CHECK(decoded.width == 160);
  CHECK(decoded.height == 160);
  CHECK(decoded.frames == frames);
  CHECK(decoded.frames_differing_from_previous >= 1);
  CHECK(decoded.duration_s == Approx(frames / 20.0).margin(0.06));
  CHECK(brightness(decoded, 8, 8) < 50);     // cell (0, 0): empty, black
  CHECK(brightness(decoded, 40, 8) > 50);    // cell (2, 0): an alien of the first wave
}

TEST_CASE("rlx evaluate --record refuses an env that nothing can draw, naming it and how to give it a render()",
          "[watch][video][cli][plugins]") {
  rlx::test::TempDir tmp;
  const fs::path checkpoint = short_training_checkpoint(tmp, "PluginCounter-v0",
                                                        "  plugins: [" + std::string(RLX_TEST_PLUGIN_GOOD) + "]\n");
  const fs::path video = tmp / "counter.mp4";
  const CommandOutput run = run_rlx("evaluate " + checkpoint.string() + " --episodes 1 --record " + video.string());
  INFO(run.out << run.err);
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("PluginCounter-v0 cannot be filmed") != std::string::npos);
  CHECK(run.err.find("override Env::render_image()") != std::string::npos);
  CHECK_FALSE(fs::exists(video));
}

TEST_CASE("a plugin env's malformed picture stops the recording, naming the env, render and what was expected",
          "[watch][video][cli][plugins]") {
  rlx::test::TempDir tmp;
  const fs::path checkpoint = short_training_checkpoint(tmp, "BadFrame-v0", drawing_plugin());
  const fs::path video = tmp / "bad.gif";
  const CommandOutput run = run_rlx("evaluate " + checkpoint.string() + " --episodes 1 --record " + video.string());
  INFO(run.out << run.err);
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("BadFrame-v0: render (episode step 0): image has 16895 bytes of RGB, expected width * height * "
                     "3 = 16896 (176 x 32 pixels)") != std::string::npos);
  CHECK_FALSE(fs::exists(video));

  // record_video_every asks an instance for a picture before the run starts.
  const fs::path experiment = tmp / "bad.yaml";
  rlx::test::write_text(experiment, "bad:\n  env: BadFrame-v0\n" + drawing_plugin() +
                                        "  algorithm: PPO\n  stop: {timesteps_total: 256}\n"
                                        "  config: {num_workers: 0, record_video_every: 1}\n");
  const CommandOutput train = run_rlx("train " + experiment.string() + " --output " + (tmp / "runs").string() + " -q");
  INFO(train.err);
  CHECK(train.exit_code == 2);
  CHECK(train.err.find("record_video_every: BadFrame-v0: render (episode step 0): image has 16895 bytes") != std::string::npos);
  CHECK_FALSE(fs::exists(tmp / "runs" / "bad"));
}

TEST_CASE("record_video_every films a plugin env that draws itself into videos/", "[watch][video][cli][plugins]") {
  rlx::test::TempDir tmp;
  const fs::path experiment = tmp / "walker.yaml";
  rlx::test::write_text(experiment, "walker:\n  env: PluginWalker-v0\n" + drawing_plugin() +
                                        "  algorithm: PPO\n  stop: {timesteps_total: 256}\n"
                                        "  config: {num_workers: 0, rollout_fragment_length: 256, train_batch_size: 256, "
                                        "num_epochs: 1, record_video_every: 1}\n");
  const CommandOutput run = run_rlx("train " + experiment.string() + " --trial-name t --output " + (tmp / "runs").string() + " -q");
  INFO(run.err);
  REQUIRE(run.exit_code == 3);  // stopped by timesteps_total, after one iteration
  const fs::path videos = tmp / "runs" / "walker" / "t" / "videos";
  REQUIRE(rlx::test::names_in(videos) == std::vector<std::string>{"iteration_000001.mp4"});
  const rlx::test::DecodedVideo video = rlx::test::decode_video((videos / "iteration_000001.mp4").string());
  CHECK(video.width == 176);
  CHECK(video.height == 32);
  CHECK(video.frames == 11);
  CHECK(video.frames_differing_from_previous == 10);
  CHECK(brightness(video, 8, 8) > 200);
}

TEST_CASE("rlx evaluate --record and record_video_every film a Python env, constructed with render_mode='rgb_array'",
          "[watch][video][cli][python]") {
  rlx::test::TempDir tmp;
  const std::string python_env = "  python_path: [" + std::string(RLX_SOURCE_DIR) + "/examples/python_env]\n";
  const fs::path checkpoint = short_training_checkpoint(tmp, "python:cartpole_env:CartPoleEnv", python_env);
  const fs::path video = tmp / "cartpole.mp4";
  const CommandOutput run =
      run_rlx("evaluate " + checkpoint.string() + " --episodes 1 --deterministic --record " + video.string());
  INFO(run.out << run.err);
  REQUIRE(run.exit_code == 0);
  const int64_t frames = summary_of(run).at("video_frames").get<int64_t>();
  const rlx::test::DecodedVideo decoded = rlx::test::decode_video(video.string());
  CHECK(decoded.width == 600);  // examples/python_env/cartpole_env.py draws Gymnasium's 600 x 400
  CHECK(decoded.height == 400);
  CHECK(decoded.frames == frames);
  CHECK(decoded.frames_differing_from_previous >= 1);
  CHECK(decoded.duration_s == Approx(static_cast<double>(frames) / 50).margin(0.05));  // metadata["render_fps"] = 50
  CHECK(brightness(decoded, 300, 300) < 50);   // the track under the cart
  CHECK(brightness(decoded, 300, 100) > 200);  // the sky above the pole

  SECTION("record_video_every") {
    const fs::path experiment = tmp / "python.yaml";
    rlx::test::write_text(experiment, "cartpole:\n  env: python:cartpole_env:CartPoleEnv\n" + python_env +
                                          "  algorithm: PPO\n  stop: {timesteps_total: 256}\n"
                                          "  config: {num_workers: 0, rollout_fragment_length: 256, train_batch_size: 256, "
                                          "num_epochs: 1, record_video_every: 1}\n");
    const CommandOutput train =
        run_rlx("train " + experiment.string() + " --trial-name t --output " + (tmp / "runs").string() + " -q");
    INFO(train.err);
    REQUIRE(train.exit_code == 3);
    const fs::path filmed = tmp / "runs" / "cartpole" / "t" / "videos" / "iteration_000001.mp4";
    REQUIRE(fs::exists(filmed));
    CHECK(rlx::test::decode_video(filmed.string()).width == 600);
  }
}
