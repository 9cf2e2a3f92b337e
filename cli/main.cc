// The `rlx` binary: dispatches to one subcommand per file.
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "core/checkpoint_dir.h"
#include "core/config_error.h"
#include "envs/env.h"
#include "learner/error_text.h"

namespace {

constexpr const char* kVersion = "0.1.0";

struct Subcommand {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& args);
};

const Subcommand kSubcommands[] = {
    {"train", "train an experiment file (PPO, DQN) until its stop criterion", rlx::cli::run_train_command},
    {"tune", "tune hyperparameters: search spaces, ASHA, population-based training", rlx::cli::run_tune_command},
    {"evaluate", "run a saved policy (a checkpoint) for some episodes", rlx::cli::run_evaluate_command},
    {"envs", "list, describe, roll out and benchmark environments", rlx::cli::run_envs_command},
    {"worker", "run a rollout worker that joins a learner (--connect ENDPOINT)", rlx::cli::run_worker_command},
    {"keys", "CURVE keys for authenticated remote workers (init, add-worker)", rlx::cli::run_keys_command},
    {"bench", "benchmarks: transport, sampling, scale, learner", rlx::cli::run_bench_command},
};

void print_usage(std::ostream& out) {
  out << "usage: rlx [--help] [--version] COMMAND [ARGS...]\n\n"
         "rlx: distributed reinforcement learning in C++.\n\ncommands:\n";
  for (const Subcommand& sub : kSubcommands) {
    out << "  " << sub.name << std::string(10 - std::string(sub.name).size(), ' ') << sub.summary << "\n";
  }
  out << "\n`rlx COMMAND --help` describes a command.\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    print_usage(std::cerr);
    return rlx::cli::kExitUsage;
  }
  const std::string& name = args.front();
  if (name == "--help" || name == "-h" || name == "help") {
    print_usage(std::cout);
    return rlx::cli::kExitOk;
  }
  if (name == "--version") {
    std::cout << "rlx " << kVersion << "\n";
    return rlx::cli::kExitOk;
  }
  // Hidden: a data-parallel learner rank, spawned by `rlx train --learners M`.
  static const Subcommand kLearner = {"learner", "", rlx::cli::run_learner_command};
  std::vector<const Subcommand*> commands;
  for (const Subcommand& sub : kSubcommands) commands.push_back(&sub);
  commands.push_back(&kLearner);
  for (const Subcommand* command : commands) {
    const Subcommand& sub = *command;
    if (name != sub.name) continue;
    try {
      return sub.run(std::vector<std::string>(args.begin() + 1, args.end()));
    } catch (const rlx::cli::UsageError& e) {
      std::cerr << "rlx " << name << ": " << e.what() << "\n(see `rlx " << name << " --help`)\n";
      return rlx::cli::kExitUsage;
    } catch (const rlx::ConfigError& e) {
      std::cerr << "rlx " << name << ": " << e.what() << "\n";
      return rlx::cli::kExitUsage;
    } catch (const rlx::CheckpointRefused& e) {
      std::cerr << "rlx " << name << ": " << e.what() << "\n";
      return rlx::cli::kExitUsage;
    } catch (const rlx::EnvContractError& e) {
      std::cerr << "rlx " << name << ": env error: " << e.what() << "\n";
      return rlx::cli::kExitUsage;
    } catch (const std::exception& e) {
      std::cerr << "rlx " << name << ": error: " << rlx::error_text(e) << "\n";
      return rlx::cli::kExitError;
    }
  }
  std::cerr << "rlx: unknown command '" << name << "'\n\n";
  print_usage(std::cerr);
  return rlx::cli::kExitUsage;
}
