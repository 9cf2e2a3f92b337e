// `rlx evaluate CHECKPOINT`: run a saved policy for some episodes and summarise the returns.
#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/evaluation.h"
#include "cli/command.h"
#include "envs/python_env.h"
#include "core/atomic_file.h"
#include "core/config_schema.h"
#include "envs/env.h"
#include "watch/episode_recorder.h"
#include "watch/video_writer.h"

namespace po = boost::program_options;

namespace rlx::cli {

namespace {

// One step of `--trace`: {"episode", "step", "obs", "action"} and, when the env has them,
// "obs_bytes" and "action_mask": everything a policy reader needs to give the action again. "obs"
// holds the observation's floats (written so that they read back to the same float32),
// "obs_bytes" its bytes (uint8 Box and MultiBinary leaves), "action_mask" the mask (1 = legal);
// "action" is what the env got: a Discrete value, a list of MultiDiscrete / MultiBinary values, or
// a Box's floats. Episodes are whole and in order, "step" 0 where each starts: where a recurrent
// policy's state starts from zeros, in evaluation and in a reader's replay (docs/deploy.md).
std::string trace_line(int episode, int64_t step, const ObsRow& obs, const Action& action, const Env& env) {
  const EnvSpec& spec = env.spec();
  const ObservationLayout& layout = env.observation_layout();
  nlohmann::json line = {{"episode", episode}, {"step", step}};
  line["obs"] = std::vector<float>(obs.floats, obs.floats + layout.float_slots);
  if (layout.mask_offset > 0) line["obs_bytes"] = std::vector<int>(obs.bytes, obs.bytes + layout.mask_offset);
  if (layout.mask_size > 0) {
    const uint8_t* mask = obs.bytes + layout.mask_offset;
    line["action_mask"] = std::vector<int>(mask, mask + layout.mask_size);
  }
  const Space& actions = spec.action_space;
  if (actions.is_discrete()) {
    line["action"] = action.index;
  } else if (actions.is_box()) {
    line["action"] = std::vector<float>(action.values, action.values + actions.size());
  } else {
    line["action"] = std::vector<int64_t>(action.indices, action.indices + actions.size());
  }
  return line.dump() + "\n";
}

}  // namespace

int run_evaluate_command(const std::vector<std::string>& args) {
  po::options_description options("rlx evaluate CHECKPOINT: run a saved policy for some episodes");
  options.add_options()("help,h", "show this help")("checkpoint", po::value<std::string>(),
                                                     "checkpoint directory, or a trial directory or its checkpoints/ "
                                                     "folder: its newest checkpoint")(
      "episodes", po::value<int>()->default_value(10), "episodes to run")(
      "deterministic", "argmax / mean actions instead of sampling")(
      "seed", po::value<uint64_t>()->default_value(0), "episode i resets with seed + i")(
      "env", po::value<std::string>(), "run in this env instead of the checkpoint's (same spaces)")(
      "policy", po::value<std::string>()->default_value(""), "a multi-agent checkpoint: the policy that plays --against")(
      "against", po::value<std::string>()->default_value(""),
      "a two-agent env: play --policy against a scripted rule (random, connect_four_lookahead) or another checkpoint, "
      "sides dealt at random each episode; prints wins, draws and losses with a 95% interval")(
      "against-policy", po::value<std::string>()->default_value(""), "the --against checkpoint's policy (default: --policy)")(
      "record", po::value<std::string>(), "write a video of the first episodes to this .mp4 or .gif file")(
      "record-episodes", po::value<int>()->default_value(1), "episodes the video shows (the first N)")(
      "width", po::value<int>()->default_value(0), "video width in pixels (0: the env's default)")(
      "height", po::value<int>()->default_value(0), "video height in pixels (0: the env's default)")(
      "fps", po::value<double>()->default_value(0), "video frames per second (0: the env's own rate)")(
      "trace", po::value<std::string>(),
      "write every step's observation and action to this JSON-lines file ({episode, step, obs, action}, with "
      "obs_bytes and action_mask where the env has them)");
  add_env_plugin_option(options);
  po::positional_options_description positionals;
  positionals.add("checkpoint", 1);
  const po::variables_map values = parse_command_line(args, options, positionals);
  if (values.count("help")) {
    std::cout << "usage: rlx evaluate CHECKPOINT [--episodes N] [--deterministic] [--seed S] [--env ID]\n"
                 "                    [--env-plugin PATH ...] [--policy NAME --against RULE|CHECKPOINT [--against-policy NAME]]\n"
                 "                    [--record OUT.mp4|OUT.gif [--record-episodes N] [--width W] [--height H] [--fps F]]\n"
                 "                    [--trace STEPS.jsonl]\n\n"
              << options;
    return kExitOk;
  }
  if (!values.count("checkpoint")) throw UsageError("missing CHECKPOINT directory");
  EvaluationOptions evaluation;
  evaluation.checkpoint = checkpoint_argument(values["checkpoint"].as<std::string>());
  evaluation.episodes = values["episodes"].as<int>();
  if (evaluation.episodes < 1) throw UsageError("--episodes must be >= 1");
  evaluation.deterministic = values.count("deterministic") > 0;
  evaluation.seed = values["seed"].as<uint64_t>();
  if (values.count("env")) evaluation.env_id = values["env"].as<std::string>();
  if (values.count("env-plugin")) evaluation.env_plugins = values["env-plugin"].as<std::vector<std::string>>();
  evaluation.policy = values["policy"].as<std::string>();
  evaluation.against = values["against"].as<std::string>();
  evaluation.against_policy = values["against-policy"].as<std::string>();
  add_python_path(python_path_from(values));  // besides the checkpoint's own python_path

  std::optional<EpisodeRecorder> recorder;
  std::optional<ScopedPythonRenderMode> python_render_mode;  // a Python env filmed is made to draw
  RecordOptions record;
  if (values.count("record")) {
    python_render_mode.emplace();
    record.path = values["record"].as<std::string>();
    record.episodes = values["record-episodes"].as<int>();
    record.width = values["width"].as<int>();
    record.height = values["height"].as<int>();
    record.fps = values["fps"].as<double>();
    if (record.episodes < 1) throw UsageError("--record-episodes must be >= 1");
    if (record.width < 0 || record.height < 0) throw UsageError("--width and --height must be >= 0");
    if (record.fps < 0) throw UsageError("--fps must be >= 0");
    try {
      check_video_path(record.path);
    } catch (const std::invalid_argument& error) {
      throw UsageError(std::string("--record ") + error.what());
    }
    evaluation.on_state = [&recorder, &record](int episode, const Env& env) {
      if (!recorder) recorder.emplace(env.spec().id, record);
      recorder->observe(episode, env);
    };
  }

  std::string trace;  // JSON lines, written once the episodes are done
  if (values.count("trace")) {
    evaluation.on_action = [&trace](int episode, int64_t step, const Env& env, const ObsRow& obs, const Action& action) {
      trace += trace_line(episode, step, obs, action, env);
    };
  }

  const EvaluationResult r = evaluate_checkpoint(evaluation);
  if (values.count("trace")) write_file_atomic(values["trace"].as<std::string>(), trace);
  int64_t frames = 0;
  if (recorder) frames = recorder->finish();
  std::cout << r.algorithm << " policy on " << r.env_id << ", " << r.returns.size() << " episodes"
            << (evaluation.deterministic ? " (deterministic)" : "") << ": return " << format_readable(r.return_mean)
            << " +- " << format_readable(r.return_std) << " (min " << format_readable(r.return_min) << ", max "
            << format_readable(r.return_max) << "), length " << format_readable(r.len_mean) << "\n";
  nlohmann::json summary = {{"episodes", r.returns.size()}, {"return_mean", r.return_mean},
                                  {"return_std", r.return_std},   {"return_min", r.return_min},
                                  {"return_max", r.return_max},   {"len_mean", r.len_mean}};
  if (!r.policy_return_means.empty()) {  // a multi-agent checkpoint: the return is the agents' sum
    std::cout << "per policy:";
    for (const auto& [policy, mean] : r.policy_return_means) std::cout << " " << policy << " " << format_readable(mean);
    std::cout << "\nper agent:";
    for (const auto& [agent, mean] : r.agent_return_means) std::cout << " " << agent << " " << format_readable(mean);
    std::cout << "\n";
    summary["policy_return_means"] = r.policy_return_means;
    summary["agent_return_means"] = r.agent_return_means;
  }
  if (r.match) {
    const auto [low, high] = r.match->win_rate_interval();
    std::cout << r.match->policy << " against " << r.match->against << ": " << r.match->wins << " wins, " << r.match->draws
              << " draws, " << r.match->losses << " losses of " << r.match->games() << "; win rate "
              << format_readable(r.match->win_rate()) << " (95% interval " << format_readable(low) << " to "
              << format_readable(high) << ")\n";
    summary["match"] = {{"policy", r.match->policy}, {"against", r.match->against}, {"wins", r.match->wins},
                        {"draws", r.match->draws}, {"losses", r.match->losses}, {"win_rate", r.match->win_rate()},
                        {"win_rate_interval", {low, high}}};
  }
  if (recorder) {
    std::cout << "video: " << record.path.string() << " (" << frames << " frames of "
              << std::min(record.episodes, evaluation.episodes) << " episode"
              << (std::min(record.episodes, evaluation.episodes) == 1 ? "" : "s") << ")\n";
    summary["video"] = record.path.string();
    summary["video_frames"] = frames;
  }
  std::cout << summary.dump() << std::endl;
  return kExitOk;
}

}  // namespace rlx::cli
