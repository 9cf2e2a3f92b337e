// `rlx bench replay`: what keeping SAC's replay in checkpoints costs, the whole buffer in one
// file (as checkpoints held it before segments) against segments (native/replay_segments.h).
// The buffer holds N transitions of Hopper-v4 under uniformly random actions (real MuJoCo
// observations, which compress as a trained policy's do); then M more come in, as between two
// checkpoints. Medians of R repeats, one JSON line per measurement.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/bench/bench_subcommands.h"
#include "cli/command.h"
#include "core/binary_io.h"
#include "core/guarded_temp_dir.h"
#include "core/rng.h"
#include "core/sha256.h"
#include "envs/random_actions.h"
#include "envs/registry.h"
#include "envs/vector_env.h"
#include "native/continuous_replay.h"

namespace po = boost::program_options;

namespace rlx::cli {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Steps `envs` Hopper-v4 envs with random actions and adds `transitions` transitions to replay.
void add_hopper_steps(VectorEnv& envs, const Space& actions, Rng& rng, int64_t transitions, std::vector<float>& obs,
                      ContinuousReplay& replay) {
  const int32_t k = envs.num_envs();
  const int64_t o = envs.spec().observation_space.size(), a = actions.size();
  constexpr int32_t kSteps = 500;
  SampleBatch batch;
  std::vector<float> next(obs.size()), final_obs(obs.size()), rewards(static_cast<size_t>(k));
  std::vector<uint8_t> terminated(static_cast<size_t>(k)), truncated(static_cast<size_t>(k));
  for (int64_t done = 0; done < transitions; done += int64_t{kSteps} * k) {
    batch.resize(kSteps, k, o, a, false);
    for (int32_t t = 0; t < kSteps; ++t) {
      const size_t row = static_cast<size_t>(t) * static_cast<size_t>(k);
      std::copy(obs.begin(), obs.end(), batch.obs.begin() + static_cast<std::ptrdiff_t>(row * o));
      float* act = batch.action_values.data() + row * a;
      sample_actions(actions, rng, k, nullptr, act, nullptr, 0);
      VectorStepBuffers out{obs.data(), rewards.data(), terminated.data(), truncated.data(), final_obs.data()};
      envs.step(ActionBatch{nullptr, act}, out);
      for (int32_t i = 0; i < k; ++i) {
        batch.rewards[row + i] = rewards[static_cast<size_t>(i)];
        batch.terminated[row + i] = terminated[static_cast<size_t>(i)];
        batch.truncated[row + i] = truncated[static_cast<size_t>(i)];
        if (terminated[static_cast<size_t>(i)] || truncated[static_cast<size_t>(i)]) {
          batch.final_obs_index.push_back(static_cast<int32_t>(row + i));
          batch.final_obs.insert(batch.final_obs.end(), final_obs.begin() + i * o, final_obs.begin() + (i + 1) * o);
        }
      }
    }
    std::copy(obs.begin(), obs.end(), batch.bootstrap_obs.begin());
    replay.add(batch);
  }
}

// The whole buffer as one checkpoint file held it: serialised in memory, digested, written, synced.
double write_whole(const ContinuousReplay& replay, const std::filesystem::path& path, uint64_t& bytes) {
  const auto start = Clock::now();
  BinaryWriter writer;
  replay.save(writer);
  const std::string data = writer.take();
  const std::string digest = sha256_hex(data);
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (!file || std::fwrite(data.data(), 1, data.size(), file) != data.size() || std::fflush(file) != 0 ||
      ::fsync(::fileno(file)) != 0) {
    throw std::runtime_error("cannot write " + path.string());
  }
  std::fclose(file);
  bytes = data.size();
  (void)digest;
  return seconds_since(start);
}

}  // namespace

int run_bench_replay(const std::vector<std::string>& args) {
  po::options_description options("rlx bench replay options");
  int64_t transitions = 1000000, increment = 100000;
  int repeats = 3;
  options.add_options()("help,h", "show this help")(
      "transitions", po::value(&transitions)->default_value(transitions), "transitions in the buffer (its capacity)")(
      "increment", po::value(&increment)->default_value(increment), "transitions between two checkpoints")(
      "repeats", po::value(&repeats)->default_value(repeats), "repeats of each measurement (medians reported)");
  const po::variables_map vm = parse_command_line(args, options, {});
  if (vm.count("help")) {
    std::cout << "usage: rlx bench replay [--transitions N] [--increment M] [--repeats R]\n\n" << options;
    return kExitOk;
  }
  if (transitions < 1 || increment < 1 || repeats < 1) throw UsageError("--transitions, --increment and --repeats must be >= 1");

  const EnvFactory& factory = global_env_registry().factory("Hopper-v4");
  VectorEnv envs(factory, 8);
  const Space actions = envs.spec().action_space;
  std::vector<float> obs(static_cast<size_t>(8 * envs.spec().observation_space.size()));
  envs.reset(1, obs.data());
  Rng rng(7);
  ContinuousReplay replay(transitions, envs.spec().observation_space.size(), actions);
  const auto fill_start = Clock::now();
  add_hopper_steps(envs, actions, rng, transitions, obs, replay);
  std::cerr << "filled " << replay.size() << " Hopper transitions in " << seconds_since(fill_start) << " s\n";

  const GuardedTempDir tmp("rlx-bench-replay-");
  std::vector<double> whole_write_s, whole_read_s, first_write_s, next_write_s, restore_s;
  uint64_t whole_bytes = 0, first_bytes = 0, next_bytes = 0;
  for (int r = 0; r < repeats; ++r) {
    const std::filesystem::path dir = tmp.path() / std::to_string(r);
    std::filesystem::create_directories(dir);
    // Before: every checkpoint writes the whole buffer, and a resume reads it whole.
    whole_write_s.push_back(write_whole(replay, dir / "replay.bin", whole_bytes));
    auto start = Clock::now();
    {
      std::ifstream in(dir / "replay.bin", std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (sha256_hex(bytes).size() != 64) throw std::logic_error("no digest");
      BinaryReader reader(bytes, "replay");
      ContinuousReplay loaded(transitions, replay.obs_size(), actions);
      loaded.load(reader);
    }
    whole_read_s.push_back(seconds_since(start));

    // After: the first checkpoint writes the whole buffer once; the next one only what came in.
    ReplaySegmentLog log;
    const auto write_rows = [&](uint64_t first, uint64_t end, SegmentWriter& out) { replay.write_rows(first, end, out); };
    const auto held = [&] { return static_cast<uint64_t>(replay.size()); };
    start = Clock::now();
    const ReplayListing first = log.checkpoint(dir / "segments", replay.inserted(), held(), write_rows);
    first_write_s.push_back(seconds_since(start));
    first_bytes = first.segments.back().bytes;
    add_hopper_steps(envs, actions, rng, increment, obs, replay);
    start = Clock::now();
    const ReplayListing next = log.checkpoint(dir / "segments", replay.inserted(), held(), write_rows);
    next_write_s.push_back(seconds_since(start));
    next_bytes = next.segments.back().bytes;
    start = Clock::now();
    ContinuousReplay restored(transitions, replay.obs_size(), actions);
    restored.reset_to(next.inserted);
    ReplaySegmentLog restored_log;
    restored_log.restore(dir / "segments", next, static_cast<uint64_t>(transitions),
                         [&](const ReplaySegment& segment, SegmentReader& in) { restored.read_rows(segment.first, segment.end, in); });
    restore_s.push_back(seconds_since(start));
    std::filesystem::remove_all(dir);
  }
  const auto line = [&](const char* what, uint64_t rows, uint64_t bytes, double write_s, double read_s) {
    nlohmann::json j = {{"bench", "replay"}, {"env", "Hopper-v4"}, {"what", what}, {"transitions", rows},
                        {"bytes", bytes}, {"write_s", write_s}, {"repeats", repeats}};
    if (read_s >= 0) j["read_s"] = read_s;
    std::cout << j.dump() << "\n";
  };
  line("whole_per_checkpoint", static_cast<uint64_t>(transitions), whole_bytes, median(whole_write_s), median(whole_read_s));
  line("segments_first_checkpoint", static_cast<uint64_t>(transitions), first_bytes, median(first_write_s), -1);
  line("segments_next_checkpoint", static_cast<uint64_t>(increment), next_bytes, median(next_write_s), median(restore_s));
  std::cout << nlohmann::json{{"bench", "replay"}, {"what", "ratio"},
                              {"next_checkpoint_bytes_vs_whole", static_cast<double>(next_bytes) / static_cast<double>(whole_bytes)},
                              {"next_checkpoint_time_vs_whole", median(next_write_s) / median(whole_write_s)},
                              {"first_checkpoint_bytes_vs_whole", static_cast<double>(first_bytes) / static_cast<double>(whole_bytes)}}
                   .dump()
            << "\n";
  return kExitOk;
}

}  // namespace rlx::cli
