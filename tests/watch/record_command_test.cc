// `rlx evaluate CHECKPOINT --record OUT.mp4|OUT.gif` for every built-in env, as a user runs it:
// a checkpoint from a short training, then the videos decoded with FFmpeg.
#include <catch2/catch.hpp>

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

// A checkpoint of `env_id` after one PPO iteration of 256 steps.
fs::path short_training_checkpoint(const rlx::test::TempDir& tmp, const std::string& env_id) {
  const fs::path experiment = tmp / "tiny.yaml";
  rlx::test::write_text(experiment, "tiny:\n  env: " + env_id +
                                        "\n  algorithm: PPO\n  stop: {timesteps_total: 256}\n"
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
