#include "native/ppo_state_file.h"

#include <cstring>
#include <istream>
#include <limits>
#include <ostream>
#include <stdexcept>

namespace rlx {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the PPO learner file is little-endian");

namespace {

constexpr char kMagic[8] = {'R', 'L', 'X', 'N', 'P', 'P', 'O', '1'};

void write_u64(std::ostream& out, uint64_t value) { out.write(reinterpret_cast<const char*>(&value), sizeof(value)); }

void write_floats(std::ostream& out, const float* values, size_t count) {
  out.write(reinterpret_cast<const char*>(values), static_cast<std::streamsize>(count * sizeof(float)));
}

// Reads `bytes` bytes or throws naming what was being read and how much of it the stream held.
void read_exactly(std::istream& in, void* data, size_t bytes, const char* what) {
  in.read(static_cast<char*>(data), static_cast<std::streamsize>(bytes));
  if (static_cast<size_t>(in.gcount()) != bytes) {
    throw std::invalid_argument(std::string("PPO learner file is truncated in ") + what + ": expected " +
                                std::to_string(bytes) + " bytes, found " + std::to_string(in.gcount()));
  }
}

}  // namespace

void write_ppo_learner_state(std::ostream& out, const PpoLearnerState& state) {
  const size_t p = state.params.size();
  const bool has_moments = !state.exp_avg.empty() || !state.exp_avg_sq.empty();
  if (has_moments && (state.exp_avg.size() != p || state.exp_avg_sq.size() != p)) {
    throw std::invalid_argument("PPO learner state has " + std::to_string(p) + " parameters but Adam moments of " +
                                std::to_string(state.exp_avg.size()) + " and " + std::to_string(state.exp_avg_sq.size()));
  }
  const std::vector<float> zeros(has_moments ? 0 : p, 0.0f);
  out.write(kMagic, sizeof(kMagic));
  write_u64(out, p);
  write_floats(out, state.params.data(), p);
  write_u64(out, static_cast<uint64_t>(state.adam_step));
  write_floats(out, has_moments ? state.exp_avg.data() : zeros.data(), p);
  write_floats(out, has_moments ? state.exp_avg_sq.data() : zeros.data(), p);
  if (!out) throw std::runtime_error("could not write the PPO learner file");
}

bool is_ppo_learner_state(const std::string& bytes) {
  return bytes.size() >= sizeof(kMagic) && std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) == 0;
}

PpoLearnerState read_ppo_learner_state(std::istream& in, int64_t num_parameters) {
  char magic[sizeof(kMagic)] = {};
  read_exactly(in, magic, sizeof(magic), "the magic");
  if (std::memcmp(magic, kMagic, sizeof(kMagic)) != 0) {
    throw std::invalid_argument("PPO learner file has magic \"" + std::string(magic, sizeof(magic)) +
                                "\", expected \"RLXNPPO1\"");
  }
  uint64_t count = 0, step = 0;
  read_exactly(in, &count, sizeof(count), "the parameter count");
  if (num_parameters < 0 || count != static_cast<uint64_t>(num_parameters)) {
    throw std::invalid_argument("PPO learner file holds " + std::to_string(count) + " parameters, the model has " +
                                std::to_string(num_parameters));
  }
  PpoLearnerState state;
  const auto p = static_cast<size_t>(num_parameters);
  state.params.resize(p);
  state.exp_avg.resize(p);
  state.exp_avg_sq.resize(p);
  read_exactly(in, state.params.data(), p * sizeof(float), "the parameters");
  read_exactly(in, &step, sizeof(step), "the Adam step");
  if (step > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    throw std::invalid_argument("PPO learner file has an Adam step of " + std::to_string(step));
  }
  state.adam_step = static_cast<int64_t>(step);
  read_exactly(in, state.exp_avg.data(), p * sizeof(float), "Adam's exp_avg");
  read_exactly(in, state.exp_avg_sq.data(), p * sizeof(float), "Adam's exp_avg_sq");
  return state;
}

nlohmann::json ppo_statistics_json(const PpoStatistics& statistics) {
  return {{"obs_stats", statistics.obs_stats.to_json()},
          {"reward_scaler", statistics.reward_scaler.to_json()},
          {"num_updates", statistics.num_updates},
          {"seed", statistics.seed}};
}

PpoStatistics parse_ppo_statistics(const nlohmann::json& state, int64_t obs_size, double gamma, uint64_t seed) {
  if (!state.is_object() || !state.contains("num_updates") || !state.at("num_updates").is_number_integer() ||
      !state.contains("obs_stats") || !state.contains("reward_scaler")) {
    throw std::invalid_argument("PPO learner state needs \"obs_stats\", \"reward_scaler\" and \"num_updates\"");
  }
  PpoStatistics statistics{RunningMeanStd(obs_size), RewardScaler(gamma), 0, seed};
  statistics.obs_stats.load_json(state.at("obs_stats"));
  statistics.reward_scaler.load_json(state.at("reward_scaler"));
  statistics.reward_scaler.set_gamma(gamma);
  statistics.num_updates = state.at("num_updates").get<int64_t>();
  if (statistics.num_updates < 0) throw std::invalid_argument("PPO learner state has a negative num_updates");
  if (state.contains("seed")) statistics.seed = state.at("seed").get<uint64_t>();
  return statistics;
}

}  // namespace rlx
