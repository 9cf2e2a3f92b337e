// `rlx bench recurrent`: a recurrent policy against the MLP of the same width, side by side in
// one run (bench/recurrent_benchmark.h). JSON lines: one per measurement ("repeat": r), then one
// per stage and model with the median ("median": true) and its ratio to the MLP's.
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/recurrent_benchmark.h"
#include "cli/bench/bench_subcommands.h"
#include "cli/command.h"
#include "cli/number_list.h"

namespace po = boost::program_options;

namespace rlx::cli {

namespace {

// Throws UsageError unless lo <= value <= hi.
void check_range(const char* option, int64_t value, int64_t lo, int64_t hi) {
  if (value < lo || value > hi) {
    throw UsageError(std::string("--") + option + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                     "], got " + std::to_string(value));
  }
}

RecurrentBenchmarkOptions options_from(const po::variables_map& values) {
  RecurrentBenchmarkOptions bench;
  bench.env_id = values["env"].as<std::string>();
  bench.width = values["width"].as<int64_t>();
  bench.cores = parse_word_list(values["cores"].as<std::string>(), "cores", {"lstm", "gru"});
  bench.activation = values["activation"].as<std::string>();
  bench.envs = values["envs"].as<int>();
  bench.values = values["values"].as<bool>();
  bench.act_calls = values["calls"].as<int>();
  bench.steps = values["steps"].as<int>();
  bench.fragments = values["fragments"].as<int>();
  bench.num_epochs = values["epochs"].as<int>();
  bench.minibatch_size = values["minibatch"].as<int64_t>();
  bench.max_seq_len = values["max-seq-len"].as<int64_t>();
  bench.autograd_mlp = !values["no-autograd-mlp"].as<bool>();
  bench.repeats = values["repeats"].as<int>();
  check_range("width", bench.width, 1, 4096);
  check_range("envs", bench.envs, 1, 4096);
  check_range("calls", bench.act_calls, 1, 10000000);
  check_range("steps", bench.steps, 1, 100000);
  check_range("fragments", bench.fragments, 1, 1000);
  check_range("epochs", bench.num_epochs, 1, 1000);
  check_range("minibatch", bench.minibatch_size, 1, 1 << 24);
  check_range("max-seq-len", bench.max_seq_len, 1, 100000);
  check_range("repeats", bench.repeats, 1, 1000);
  return bench;
}

void print_lines(const RecurrentBenchmarkOptions& bench, const RecurrentBenchmarkResult& result) {
  const nlohmann::json act_setup = {{"env", bench.env_id}, {"width", bench.width}, {"envs", bench.envs},
                                    {"values", bench.values}, {"calls", bench.act_calls}};
  const nlohmann::json update_setup = {{"env", bench.env_id}, {"width", bench.width}, {"samples", result.batch_samples},
                                       {"envs", bench.envs}, {"steps", bench.steps}, {"fragments", bench.fragments},
                                       {"epochs", bench.num_epochs}, {"minibatch", bench.minibatch_size},
                                       {"max_seq_len", bench.max_seq_len}};
  const auto line = [](const char* stage, const RecurrentModelTimings& m, const nlohmann::json& setup) {
    nlohmann::json j = {{"bench", "recurrent"}, {"stage", stage}, {"model", m.model}, {"params", m.num_parameters}};
    j.update(setup);
    return j;
  };
  for (int r = 0; r < bench.repeats; ++r) {
    for (const RecurrentModelTimings& m : result.models) {
      if (m.act_us.empty()) continue;
      nlohmann::json j = line("act", m, act_setup);
      j["repeat"] = r + 1;
      j["us_per_act"] = m.act_us.at(r);
      std::cout << j.dump() << "\n";
    }
    for (const RecurrentModelTimings& m : result.models) {
      nlohmann::json j = line("update", m, update_setup);
      j["repeat"] = r + 1;
      j["minibatch_steps"] = m.minibatch_steps;
      j["ms_per_update"] = m.update_ms.at(r);
      std::cout << j.dump() << "\n";
    }
  }
  const RecurrentModelTimings& mlp = result.models.front();
  const auto ratio = [](double x, double base) { return base > 0.0 ? x / base : 0.0; };
  for (const RecurrentModelTimings& m : result.models) {
    if (m.act_us.empty()) continue;
    nlohmann::json j = line("act", m, act_setup);
    j["median"] = true;
    j["repeats"] = bench.repeats;
    j["us_per_act"] = m.median_act_us();
    j["ratio_to_mlp"] = ratio(m.median_act_us(), mlp.median_act_us());
    std::cout << j.dump() << "\n";
  }
  for (const RecurrentModelTimings& m : result.models) {
    nlohmann::json j = line("update", m, update_setup);
    j["median"] = true;
    j["repeats"] = bench.repeats;
    j["minibatch_steps"] = m.minibatch_steps;
    j["ms_per_update"] = m.median_update_ms();
    j["ratio_to_mlp"] = ratio(m.median_update_ms(), mlp.median_update_ms());
    std::cout << j.dump() << "\n";
  }
  std::cout << std::flush;
}

}  // namespace

int run_bench_recurrent(const std::vector<std::string>& args) {
  po::options_description options("rlx bench recurrent: a recurrent policy against the MLP of the same width");
  options.add_options()("help,h", "show this help")(
      "env", po::value<std::string>()->default_value("CartPoleNoVel-v1"), "environment of the observations and fragments")(
      "width", po::value<int64_t>()->default_value(64), "H: the MLP's one hidden layer, and the cores' size (hidden_sizes [])")(
      "cores", po::value<std::string>()->default_value("lstm,gru"), "recurrent cores to time, comma-separated")(
      "activation", po::value<std::string>()->default_value("relu"), "the MLP's activation")(
      "envs", po::value<int>()->default_value(8), "K: envs per act() call and per fragment")(
      "values", po::bool_switch(), "act() computes V(s) too (PPO's workers leave it to the learner)")(
      "calls", po::value<int>()->default_value(2000), "timed act() calls per repeat")(
      "steps", po::value<int>()->default_value(32), "steps per fragment of the learner's batch")(
      "fragments", po::value<int>()->default_value(1), "fragments in the learner's batch")(
      "epochs", po::value<int>()->default_value(20), "epochs per update")(
      "minibatch", po::value<int64_t>()->default_value(256), "minibatch size")(
      "max-seq-len", po::value<int64_t>()->default_value(32), "the cores' training sequences, at most this many steps")(
      "no-autograd-mlp", po::bool_switch(), "leave out the MLP's update with autograd (the cores' gradient path)")(
      "repeats", po::value<int>()->default_value(5), "timed repeats; the final lines are their medians");
  const po::variables_map values = parse_command_line(args, options, {});
  if (values.count("help")) {
    std::cout << "usage: rlx bench recurrent [--width H] [--envs K] [--cores lstm,gru] [--repeats R] ...\n\n"
              << "Times ActorCriticPolicy::act (us per call for K envs) and PpoLearner::update (ms, one\n"
              << "thread) for an MLP [H] and for each core of H units; JSON lines, the medians last.\n\n"
              << options;
    return kExitOk;
  }
  const RecurrentBenchmarkOptions bench = options_from(values);
  print_lines(bench, run_recurrent_benchmark(bench));
  return kExitOk;
}

}  // namespace rlx::cli
