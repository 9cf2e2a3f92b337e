// The `rlx` subcommands: each lives in its own file and is listed in main.cc.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

namespace rlx::cli {

// Bad command-line input: printed with the command's usage, exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Exit statuses shared by every subcommand: one per kind of end, whichever command meets it.
constexpr int kExitOk = 0;
constexpr int kExitError = 1;  // an error at run time: I/O, a crash, a lost worker beyond its restarts, ...
constexpr int kExitUsage = 2;  // bad input: usage, config, experiment file, plugin, env contract, refused checkpoint
constexpr int kExitBudgetSpent = 3;   // `rlx train`: a stop criterion other than the reward ended the run
constexpr int kExitLearnerGone = 4;  // `rlx worker`: the learner stayed silent past --learner-timeout
constexpr int kExitPaused = 5;       // `rlx train --pause-at`: paused with a checkpoint, to be resumed
constexpr int kExitStopped = 6;      // `rlx train`, `rlx tune`: SIGTERM/SIGINT stopped it cleanly, resumable

// `rlx tune FILE.yaml ...`.
int run_tune_command(const std::vector<std::string>& args);

// `rlx envs ...`: list, info, rollout, bench. args excludes "rlx envs".
int run_envs_command(const std::vector<std::string>& args);

// `rlx bench transport | sampling | scale ...`. args excludes "rlx bench".
int run_bench_command(const std::vector<std::string>& args);

// `rlx worker --connect ENDPOINT ...`.
int run_worker_command(const std::vector<std::string>& args);

// `rlx train FILE.yaml ...`.
int run_train_command(const std::vector<std::string>& args);

// `rlx learner --store HOST:PORT --rank R --world M` (hidden: started by `rlx train --learners M`).
int run_learner_command(const std::vector<std::string>& args);

// `rlx evaluate CHECKPOINT ...`.
int run_evaluate_command(const std::vector<std::string>& args);

// `rlx export CHECKPOINT [-o policy.rlxp]`.
int run_export_command(const std::vector<std::string>& args);

// `rlx serve [NAME=]MODEL...`.
int run_serve_command(const std::vector<std::string>& args);

// `rlx keys init DIR` / `rlx keys add-worker DIR NAME`.
int run_keys_command(const std::vector<std::string>& args);

// `rlx plot DIR... [--metric COLUMN] [-o FILE.png|FILE.svg] [--pbt]`: run by rlx-plot alone.
int run_plot_command(const std::vector<std::string>& args);

// Adds the repeatable `--env-plugin PATH` option to a subcommand's options.
void add_env_plugin_option(boost::program_options::options_description& options);

// Adds `--env-config JSON` (a Python env's constructor arguments) for commands that name an env id.
void add_env_config_option(boost::program_options::options_description& options);

// Loads every `--env-plugin` given into the global env registry (throws on a bad plugin) and
// puts every `--python-path` in front of sys.path for Python envs.
void load_env_plugins_from(const boost::program_options::variables_map& values);

// The `--python-path` directories given, absolute.
std::vector<std::string> python_path_from(const boost::program_options::variables_map& values);

// Registers env_id with `--env-config` when it names a Python env (envs/python_env.h); nothing otherwise.
void prepare_env(const std::string& env_id, const boost::program_options::variables_map& values);

// The checkpoint directory a CHECKPOINT argument names (resolve_checkpoint, core/checkpoint_dir.h):
// when `given` is a trial directory or its checkpoints/ folder, its newest checkpoint, said on
// stderr (say_checkpoint_taken).
std::filesystem::path checkpoint_argument(const std::string& given);

// Says on stderr that `taken` is the checkpoint used, when it is not `given` itself (a trial
// directory or checkpoints/ folder named it); nothing otherwise.
void say_checkpoint_taken(const std::string& given, const std::filesystem::path& taken);

// Parses args against options and positionals; throws UsageError with the parser's message.
boost::program_options::variables_map parse_command_line(
    const std::vector<std::string>& args, const boost::program_options::options_description& options,
    const boost::program_options::positional_options_description& positionals);

}  // namespace rlx::cli
