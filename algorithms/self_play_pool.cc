#include "algorithms/self_play_pool.h"

#include <cmath>
#include <stdexcept>

#include "core/binary_io.h"

namespace rlx {

namespace {

constexpr uint64_t kMaxSnapshotFloats = uint64_t{1} << 30;

std::string snapshot_file(size_t index) { return "self_play.snapshot_" + std::to_string(index) + ".bin"; }

}  // namespace

SelfPlayPool::SelfPlayPool(SelfPlaySetup setup) : setup_(std::move(setup)) {
  for (const std::string& rule : setup_.league) snapshots_.push_back(Snapshot{0, nullptr, rule, 0, 0, 0});
}

void SelfPlayPool::add(int64_t iteration, std::shared_ptr<const Weights> weights) {
  snapshots_.push_back(Snapshot{iteration, std::move(weights), "", 0, 0, 0});
  const auto league = static_cast<int64_t>(setup_.league.size());
  if (static_cast<int64_t>(snapshots_.size()) - league > setup_.pool_size) {
    snapshots_.erase(snapshots_.begin() + league);  // the oldest snapshot, after the league's members
  }
}

size_t SelfPlayPool::choose(Rng& rng) const {
  if (snapshots_.empty()) throw std::logic_error("SelfPlayPool::choose: the pool is empty");
  if (setup_.sampling != "pfsp") return static_cast<size_t>(rng.uniform_int(static_cast<int64_t>(snapshots_.size())));
  std::vector<double> weights;
  double total = 0.0;
  for (const Snapshot& snapshot : snapshots_) {
    weights.push_back(std::pow(1.0 - snapshot.win_rate(), 2.0) + 1e-6);
    total += weights.back();
  }
  double draw = rng.uniform() * total;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (draw < weights[i]) return i;
    draw -= weights[i];
  }
  return weights.size() - 1;
}

void SelfPlayPool::record(size_t index, double outcome) {
  Snapshot& snapshot = snapshots_.at(index);
  ++snapshot.games;
  if (outcome > 0) ++snapshot.wins;
  if (outcome == 0) ++snapshot.draws;
}

std::vector<CheckpointFile> SelfPlayPool::checkpoint_files() const {
  std::vector<CheckpointFile> files;
  for (size_t i = 0; i < snapshots_.size(); ++i) {
    if (!snapshots_[i].weights) continue;  // a scripted member: its rule is in the state
    const Weights& w = *snapshots_[i].weights;
    BinaryWriter out;
    out.put<uint64_t>(w.policy_version);
    out.put_vector(w.params);
    out.put_vector(w.obs_mean);
    out.put_vector(w.obs_var);
    out.put<double>(w.obs_count);
    files.push_back({snapshot_file(i), out.take()});
  }
  return files;
}

nlohmann::json SelfPlayPool::checkpoint_state() const {
  nlohmann::json snapshots = nlohmann::json::array();
  for (const Snapshot& s : snapshots_) {
    snapshots.push_back({{"iteration", s.iteration}, {"scripted", s.scripted}, {"wins", s.wins}, {"draws", s.draws}, {"games", s.games}});
  }
  return {{"snapshots", snapshots}};
}

void SelfPlayPool::restore(const Checkpoint& checkpoint, const nlohmann::json& state) {
  std::deque<Snapshot> restored;
  const nlohmann::json& snapshots = state.at("snapshots");
  for (size_t i = 0; i < snapshots.size(); ++i) {
    const nlohmann::json& s = snapshots[i];
    const std::string scripted = s.value("scripted", std::string());
    if (!scripted.empty()) {
      restored.push_back(Snapshot{0, nullptr, scripted, s.at("wins").get<int64_t>(), s.at("draws").get<int64_t>(), s.at("games").get<int64_t>()});
      continue;
    }
    const auto file = checkpoint.files.find(snapshot_file(i));
    if (file == checkpoint.files.end()) throw std::invalid_argument("no " + snapshot_file(i));
    BinaryReader in(file->second, snapshot_file(i));
    auto weights = std::make_shared<Weights>();
    weights->policy_version = in.get<uint64_t>();
    weights->params = in.get_vector<float>(kMaxSnapshotFloats);
    weights->obs_mean = in.get_vector<double>(kMaxSnapshotFloats);
    weights->obs_var = in.get_vector<double>(kMaxSnapshotFloats);
    weights->obs_count = in.get<double>();
    in.expect_end();
    restored.push_back(Snapshot{s.at("iteration").get<int64_t>(), std::move(weights), "", s.at("wins").get<int64_t>(),
                                s.at("draws").get<int64_t>(), s.at("games").get<int64_t>()});
  }
  snapshots_ = std::move(restored);
}

}  // namespace rlx
