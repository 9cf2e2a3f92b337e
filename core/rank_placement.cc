// rank_placement(): flags, then torchrun's variables, then Slurm's.
#include "core/rank_placement.h"

#include <unistd.h>

#include <cctype>
#include <iterator>

extern char** environ;

namespace rlx {
namespace {

// One field's value and the name of the flag or variable it came from.
template <typename T>
struct Sourced {
  std::optional<T> value;
  std::string name;
};

int parse_count(const std::string& name, const std::string& text) {
  if (text.empty() || text.size() > 9) {
    throw PlacementError(name + "=\"" + text + "\": expected a non-negative integer");
  }
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) {
      throw PlacementError(name + "=\"" + text + "\": expected a non-negative integer");
    }
  }
  return std::stoi(text);
}

// The flag's value, else the first of `variables` set in the environment.
template <typename T, typename Parse>
Sourced<T> pick(const std::optional<T>& flag, const std::string& flag_name,
                const std::map<std::string, std::string>& environment, const std::vector<std::string>& variables,
                Parse parse) {
  if (flag) return {flag, flag_name};
  for (const std::string& variable : variables) {
    const auto it = environment.find(variable);
    if (it != environment.end()) return {parse(variable, it->second), variable};
  }
  return {std::nullopt, ""};
}

Sourced<int> pick_count(const std::optional<int>& flag, const std::string& flag_name,
                        const std::map<std::string, std::string>& environment, const std::vector<std::string>& variables) {
  return pick<int>(flag, flag_name, environment, variables, parse_count);
}

// Splits at the commas outside brackets.
std::vector<std::string> split_top_level(std::string_view list) {
  std::vector<std::string> items;
  std::string item;
  int depth = 0;
  for (char c : list) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (depth < 0 || depth > 1) throw PlacementError("Slurm host list \"" + std::string(list) + "\": unbalanced brackets");
    if (c == ',' && depth == 0) {
      items.push_back(item);
      item.clear();
    } else {
      item += c;
    }
  }
  if (depth != 0) throw PlacementError("Slurm host list \"" + std::string(list) + "\": unbalanced brackets");
  items.push_back(item);
  return items;
}

// "01-03" -> 01 02 03; "7" -> 7.
std::vector<std::string> expand_range(const std::string& range, std::string_view list) {
  const auto bad = [&] { return PlacementError("Slurm host list \"" + std::string(list) + "\": bad range \"" + range + "\""); };
  const size_t dash = range.find('-');
  const std::string first = range.substr(0, dash);
  const std::string last = dash == std::string::npos ? first : range.substr(dash + 1);
  for (const std::string& bound : {first, last}) {
    if (bound.empty() || bound.size() > 9) throw bad();
    for (char c : bound) {
      if (!std::isdigit(static_cast<unsigned char>(c))) throw bad();
    }
  }
  const int from = std::stoi(first), to = std::stoi(last);
  if (to < from || to - from > 100000) throw bad();
  std::vector<std::string> names;
  for (int n = from; n <= to; ++n) {
    std::string text = std::to_string(n);
    if (text.size() < first.size()) text.insert(0, first.size() - text.size(), '0');
    names.push_back(text);
  }
  return names;
}

// One item of a host list, its bracket groups expanded in order ("r[1-2]n[1-2]": r1n1 r1n2 r2n1 r2n2).
void expand_item(const std::string& item, std::string_view list, std::vector<std::string>& out) {
  const size_t open = item.find('[');
  if (open == std::string::npos) {
    if (item.empty()) throw PlacementError("Slurm host list \"" + std::string(list) + "\": an empty host name");
    out.push_back(item);
    return;
  }
  const size_t close = item.find(']', open);
  const std::string prefix = item.substr(0, open);
  const std::string rest = item.substr(close + 1);
  std::string ranges = item.substr(open + 1, close - open - 1);
  size_t start = 0;
  while (start <= ranges.size()) {
    const size_t comma = ranges.find(',', start);
    const std::string range = ranges.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    for (const std::string& number : expand_range(range, list)) expand_item(prefix + number + rest, list, out);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
}

}  // namespace

std::vector<std::string> expand_slurm_hostlist(std::string_view list) {
  std::vector<std::string> hosts;
  for (const std::string& item : split_top_level(list)) expand_item(item, list, hosts);
  return hosts;
}

std::optional<RankPlacement> rank_placement(const std::map<std::string, std::string>& process_env,
                                            const RankFlags& flags) {
  // Slurm's variables place a task of an srun step only: a batch script (or a salloc shell)
  // also has SLURM_PROCID=0 and the job's SLURM_NTASKS, but it is one process, not a rank.
  std::map<std::string, std::string> environment = process_env;
  if (!environment.count("SLURM_STEP_ID") && !environment.count("SLURM_STEP_NUM_TASKS")) {
    for (auto it = environment.begin(); it != environment.end();) {
      it = it->first.rfind("SLURM_", 0) == 0 ? environment.erase(it) : std::next(it);
    }
  }
  const Sourced<int> rank = pick_count(flags.rank, "--rank", environment, {"RANK", "SLURM_PROCID"});
  const Sourced<int> world = pick_count(flags.world_size, "--world-size", environment,
                                        {"WORLD_SIZE", "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"});
  if (!rank.value && !world.value) return std::nullopt;
  if (!rank.value) throw PlacementError(world.name + " is set but no rank is (--rank, RANK or SLURM_PROCID)");
  if (!world.value) {
    throw PlacementError(rank.name + " is set but no world size is (--world-size, WORLD_SIZE or SLURM_NTASKS)");
  }
  const auto launcher = [](const std::string& name) {
    return name.rfind("--", 0) == 0 ? "flags" : name.rfind("SLURM_", 0) == 0 ? "Slurm" : "torchrun";
  };
  if (launcher(rank.name) != launcher(world.name) && std::string(launcher(rank.name)) != "flags" &&
      std::string(launcher(world.name)) != "flags") {
    throw PlacementError("the rank comes from " + rank.name + " but the world size from " + world.name +
                         ": set both of one launcher (RANK and WORLD_SIZE, or SLURM_PROCID and SLURM_NTASKS)");
  }
  if (*world.value < 1) throw PlacementError(world.name + "=" + std::to_string(*world.value) + ": expected at least 1");
  if (*rank.value >= *world.value) {
    throw PlacementError(rank.name + "=" + std::to_string(*rank.value) + " is not below " + world.name + "=" +
                         std::to_string(*world.value));
  }
  const Sourced<int> local = pick_count(flags.local_rank, "--local-rank", environment, {"LOCAL_RANK", "SLURM_LOCALID"});
  Sourced<int> port = pick_count(flags.master_port, "--master-port", environment, {"MASTER_PORT"});
  if (!port.value && launcher(rank.name) == std::string("Slurm") && environment.count("SLURM_JOB_ID")) {
    // Jobs that share a node must not share a port; a requeued job gets its own again.
    const int job = parse_count("SLURM_JOB_ID", environment.at("SLURM_JOB_ID").substr(0, 9));
    port = {kSlurmPortBase + job % kSlurmPortSpan, "SLURM_JOB_ID"};
  }
  if (port.value && (*port.value < 1 || *port.value > 65535)) {
    throw PlacementError(port.name + "=" + std::to_string(*port.value) + ": expected a port in [1, 65535]");
  }
  const auto first_host = [](const std::string&, const std::string& text) { return expand_slurm_hostlist(text).front(); };
  const auto as_is = [](const std::string& variable, const std::string& text) {
    if (text.empty()) throw PlacementError(variable + " is empty: expected a host name or address");
    return text;
  };
  Sourced<std::string> master = pick<std::string>(flags.master_addr, "--master-addr", environment, {"MASTER_ADDR"}, as_is);
  if (!master.value) {
    master = pick<std::string>(std::nullopt, "", environment, {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST"}, first_host);
  }
  if (!master.value) {
    if (*world.value > 1) {
      throw PlacementError("no rendezvous address for " + std::to_string(*world.value) +
                           " ranks: set --master-addr, MASTER_ADDR or run under srun (SLURM_STEP_NODELIST)");
    }
    master = {std::string("127.0.0.1"), "a one-rank default"};
  }

  RankPlacement placement;
  placement.rank = *rank.value;
  placement.world_size = *world.value;
  placement.local_rank = local.value.value_or(0);
  placement.master_addr = *master.value;
  placement.master_port = port.value.value_or(kDefaultMasterPort);
  placement.origin = "rank from " + rank.name + ", world size from " + world.name + ", rendezvous host from " +
                     master.name + (local.value ? ", local rank from " + local.name : "") +
                     (port.value ? ", port from " + port.name : "");
  return placement;
}

std::map<std::string, std::string> process_environment() {
  std::map<std::string, std::string> environment;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text(*entry);
    const size_t equals = text.find('=');
    if (equals != std::string::npos) environment.emplace(text.substr(0, equals), text.substr(equals + 1));
  }
  return environment;
}

}  // namespace rlx
