// `rlx keys init DIR` / `rlx keys add-worker DIR NAME`: CURVE keys for authenticated remote workers.
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "transport/curve.h"

namespace po = boost::program_options;

namespace rlx::cli {

namespace {

const char* const kKeysUsage =
    "usage: rlx keys SUBCOMMAND\n\n"
    "  init DIR               the learner's key pair: DIR/server.key, DIR/server.pub, DIR/clients/\n"
    "  add-worker DIR NAME    a worker key pair in DIR/workers/NAME/ (with a copy of server.pub),\n"
    "                         authorized by DIR/clients/NAME.pub\n\n"
    "The learner runs with --auth-keys DIR; a worker with --auth-keys DIR/workers/NAME (copy that\n"
    "folder to the worker's machine). Without keys the learner binds to loopback only.\n";

int run_init(const std::vector<std::string>& args) {
  if (args.size() != 1) throw UsageError(std::string("keys init takes one DIR\n") + kKeysUsage);
  const std::filesystem::path dir = args[0];
  if (std::filesystem::exists(dir / "server.key")) {
    throw std::runtime_error("'" + (dir / "server.key").string() + "' exists already; refusing to replace a key");
  }
  std::filesystem::create_directories(dir / "clients");
  save_curve_keypair(dir / "server", generate_curve_keypair());
  std::cout << "wrote " << (dir / "server.key").string() << " and " << (dir / "server.pub").string() << "\n";
  return kExitOk;
}

int run_add_worker(const std::vector<std::string>& args) {
  if (args.size() != 2) throw UsageError(std::string("keys add-worker takes DIR and NAME\n") + kKeysUsage);
  const std::filesystem::path dir = args[0];
  const std::string name = args[1];
  if (name.empty() || name.find('/') != std::string::npos || name[0] == '.') {
    throw UsageError("worker NAME must be a plain file name, got '" + name + "'");
  }
  load_curve_public_key(dir / "server.pub");  // fails clearly unless `keys init DIR` ran
  const std::filesystem::path worker_dir = dir / "workers" / name;
  if (std::filesystem::exists(dir / "clients" / (name + ".pub"))) {
    throw std::runtime_error("worker '" + name + "' already has a key in " + (dir / "clients").string());
  }
  std::filesystem::create_directories(worker_dir);
  const CurveKeyPair keys = generate_curve_keypair();
  save_curve_keypair(worker_dir / "client", keys);
  std::filesystem::copy_file(dir / "server.pub", worker_dir / "server.pub",
                             std::filesystem::copy_options::overwrite_existing);
  save_curve_public_key(dir / "clients" / (name + ".pub"), keys.public_key);  // the learner keeps only public keys
  std::cout << "wrote " << worker_dir.string() << "/ (give it to the worker: --auth-keys " << worker_dir.string()
            << ") and authorized " << (dir / "clients" / (name + ".pub")).string() << "\n";
  return kExitOk;
}

}  // namespace

int run_keys_command(const std::vector<std::string>& args) {
  if (args.empty()) throw UsageError(std::string("missing subcommand\n") + kKeysUsage);
  if (args[0] == "--help" || args[0] == "-h") {
    std::cout << kKeysUsage;
    return kExitOk;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "init") return run_init(rest);
  if (args[0] == "add-worker") return run_add_worker(rest);
  throw UsageError("unknown subcommand '" + args[0] + "'\n" + kKeysUsage);
}

}  // namespace rlx::cli
