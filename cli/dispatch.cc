#include "cli/dispatch.h"

#include <iostream>
#include <stdexcept>

#include "cli/command.h"
#include "core/checkpoint_dir.h"
#include "core/config_error.h"
#include "core/error_text.h"
#include "core/log.h"
#include "core/version.h"
#include "envs/env.h"
#include "envs/python_env.h"

namespace rlx::cli {

namespace {

void print_usage(std::ostream& out, const std::vector<Subcommand>& commands) {
  out << "usage: rlx [--help] [--version] [--log-level LEVEL] COMMAND [ARGS...]\n\n"
         "rlx: distributed reinforcement learning in C++.\n\ncommands:\n";
  for (const Subcommand& sub : commands) {
    if (std::string(sub.summary).empty()) continue;
    out << "  " << sub.name << std::string(10 - std::string(sub.name).size(), ' ') << sub.summary << "\n";
  }
  out << "\n--log-level " << rlx::log_level_names("|")
      << ": the lines logged (default info), on stderr and in a run's\n"
         "logs/; given anywhere on the line, and passed on to the workers, learner ranks and trials rlx starts.\n"
         "\n`rlx COMMAND --help` describes a command.\n";
}

// Takes every `--log-level LEVEL` / `--log-level=LEVEL` out of args (the last one wins) and sets
// the level; UsageError-like message and false on a bad or missing level.
bool take_log_level(std::vector<std::string>& args) {
  constexpr const char* kOption = "--log-level";
  for (size_t i = 0; i < args.size();) {
    std::string value;
    size_t taken = 0;
    if (args[i] == kOption) {
      if (i + 1 >= args.size()) {
        std::cerr << "rlx: --log-level needs a level: " << rlx::log_level_names(", ") << "\n";
        return false;
      }
      value = args[i + 1];
      taken = 2;
    } else if (args[i].rfind(std::string(kOption) + "=", 0) == 0) {
      value = args[i].substr(std::string(kOption).size() + 1);
      taken = 1;
    } else {
      ++i;
      continue;
    }
    try {
      rlx::set_log_level(rlx::parse_log_level(value));
    } catch (const std::invalid_argument& e) {
      std::cerr << "rlx: --log-level: " << e.what() << "\n";
      return false;
    }
    args.erase(args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(i + taken));
  }
  return true;
}

// The final message of a failed command, "rlx NAME: [LABEL: ]TEXT": on stderr as the user sees
// it, and in the open log files; where stderr is itself a log file, one detailed line there.
void report(const std::string& name, const std::string& label, const std::string& text) {
  const std::string message = label.empty() ? text : label + ": " + text;
  if (rlx::log_stderr_detailed()) {
    rlx::logger().error("{}", label == "error" ? text : message);
    return;
  }
  std::cerr << "rlx " << name << ": " << message << "\n";
  rlx::file_logger().error("{}", label == "error" ? text : message);
}

}  // namespace

int run_rlx(int argc, char** argv, const std::vector<Subcommand>& commands) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!take_log_level(args)) return kExitUsage;
  if (args.empty()) {
    print_usage(std::cerr, commands);
    return kExitUsage;
  }
  const std::string& name = args.front();
  if (name == "--help" || name == "-h" || name == "help") {
    print_usage(std::cout, commands);
    return kExitOk;
  }
  if (name == "--version") {
    std::cout << "rlx " << rlx::kRlxVersion << "\n";
    return kExitOk;
  }
  for (const Subcommand& sub : commands) {
    if (name != sub.name) continue;
    rlx::set_log_role(name, "rlx " + name);
    try {
      return sub.run(std::vector<std::string>(args.begin() + 1, args.end()));
    } catch (const UsageError& e) {
      report(name, "", std::string(e.what()) + "\n(see `rlx " + name + " --help`)");
      return kExitUsage;
    } catch (const rlx::ConfigError& e) {
      report(name, "", e.what());
      return kExitUsage;
    } catch (const rlx::CheckpointRefused& e) {
      report(name, "", e.what());
      return kExitUsage;
    } catch (const rlx::EnvContractError& e) {
      report(name, "env error", e.what());
      return kExitUsage;
    } catch (const rlx::PythonEnvError& e) {  // a Python env raised: its traceback goes to the log
      report(name, "", "the Python traceback:\n" + e.traceback());
      report(name, "error", e.what());
      return kExitError;
    } catch (const std::exception& e) {
      report(name, "error", error_text(e));
      return kExitError;
    }
  }
  std::cerr << "rlx: unknown command '" << name << "'\n\n";
  print_usage(std::cerr, commands);
  return kExitUsage;
}

}  // namespace rlx::cli
