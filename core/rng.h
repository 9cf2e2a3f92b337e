// Rng: a small, fast, seedable generator (xoshiro256++) with the draws environments need.
#pragma once

#include <cmath>
#include <cstdint>

namespace rlx {

// Deterministic pseudo-random generator; the same seed always gives the same stream.
class Rng {
 public:
  // Everything the stream depends on, for checkpoints.
  struct State {
    uint64_t words[4] = {0, 0, 0, 0};
    double spare_normal = 0.0;
    bool has_spare_normal = false;
  };

  // A generator at the start of `seed`'s stream.
  explicit Rng(uint64_t seed = 0) { seed_with(seed); }

  // The generator's state; set_state(state()) continues the same stream.
  State state() const {
    State s;
    for (int i = 0; i < 4; ++i) s.words[i] = state_[i];
    s.spare_normal = spare_normal_;
    s.has_spare_normal = has_spare_normal_;
    return s;
  }
  // Continues the stream a state() was taken from, exactly.
  void set_state(const State& s) {
    for (int i = 0; i < 4; ++i) state_[i] = s.words[i];
    spare_normal_ = s.spare_normal;
    has_spare_normal_ = s.has_spare_normal;
  }

  // Restarts the stream from a seed (expanded with splitmix64, as xoshiro's authors advise);
  // every seed, 0 included, gives a usable stream of its own.
  void seed_with(uint64_t seed) {
    uint64_t x = seed;
    for (uint64_t& word : state_) word = splitmix64(x);
    has_spare_normal_ = false;
  }

  // Next 64 random bits, each 0 or 1 with equal chance.
  uint64_t next_u64() {
    const uint64_t result = rotl(state_[0] + state_[3], 23) + state_[0];
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  // Uniform double in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

  // Uniform double in [low, high) for low < high (low itself when low == high).
  double uniform(double low, double high) { return low + (high - low) * uniform(); }

  // Uniform integer in [0, n); n must be positive (n <= 0 gives meaningless values).
  int64_t uniform_int(int64_t n) {
    // Lemire's multiply-shift; the tiny bias for huge n is irrelevant for env use.
    return static_cast<int64_t>((static_cast<unsigned __int128>(next_u64()) * static_cast<uint64_t>(n)) >> 64);
  }

  // Standard normal draw: mean 0, standard deviation 1, any finite value (Marsaglia's polar
  // method, which makes two draws at a time: the second is kept for the next call).
  double normal() {
    if (has_spare_normal_) {
      has_spare_normal_ = false;
      return spare_normal_;
    }
    double u, v, s;
    do {
      u = uniform(-1.0, 1.0);
      v = uniform(-1.0, 1.0);
      s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    const double scale = std::sqrt(-2.0 * std::log(s) / s);
    spare_normal_ = v * scale;
    has_spare_normal_ = true;
    return u * scale;
  }

  // Normal draw with the given mean and standard deviation (stddev >= 0).
  double normal(double mean, double stddev) { return mean + stddev * normal(); }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t splitmix64(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  uint64_t state_[4] = {0, 0, 0, 0};
  double spare_normal_ = 0.0;
  bool has_spare_normal_ = false;
};

}  // namespace rlx
