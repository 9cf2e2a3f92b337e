// native/product_threads.h's contract: slices cover every row once on aligned bounds, and the
// products of native/dense_backprop.h, and so a SAC learner's gradient steps, give the same bits
// with any number of threads.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <random>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "native/dense_backprop.h"
#include "native/product_threads.h"
#include "native/sac_learner.h"

namespace rlx {
namespace {

// Sets the product threads for one scope and puts back the count it found.
class ScopedProductThreads {
 public:
  explicit ScopedProductThreads(int threads) : previous_(product_threads()) { set_product_threads(threads); }
  ~ScopedProductThreads() { set_product_threads(previous_); }
  ScopedProductThreads(const ScopedProductThreads&) = delete;
  ScopedProductThreads& operator=(const ScopedProductThreads&) = delete;

 private:
  int previous_;
};

std::vector<float> random_values(int64_t count, uint32_t seed) {
  std::mt19937 generator(seed);
  std::normal_distribution<float> normal;
  std::vector<float> values(static_cast<size_t>(count));
  for (float& v : values) v = normal(generator);
  return values;
}

// Both products of dense_backprop on [rows, k] x [k, n] inputs, as they come out.
std::vector<float> both_products(int64_t rows, int64_t k, int64_t n) {
  const std::vector<float> a = random_values(rows * k, 1), b_kn = random_values(k * n, 2), bias = random_values(n, 3);
  std::vector<float> b_nk(static_cast<size_t>(k * n));
  transpose(b_kn.data(), k, n, b_nk.data());
  std::vector<float> out(static_cast<size_t>(rows * n + k * n));
  matmul(a.data(), rows, k, b_kn.data(), b_nk.data(), n, bias.data(), out.data());
  const std::vector<float> g = random_values(rows * n, 4);
  matmul_transposed_a(a.data(), g.data(), rows, k, n, out.data() + rows * n);  // [k, n] = A^T G
  return out;
}

}  // namespace

TEST_CASE("for_row_slices covers each row once, on bounds that are multiples of align", "[native][threads]") {
  for (int threads : {1, 2, 3, 5}) {
    ScopedProductThreads scoped(threads);
    for (int64_t count : {1, 3, 4, 17, 256, 1001}) {
      std::vector<int> seen(static_cast<size_t>(count), 0);
      std::mutex mutex;
      std::vector<std::pair<int64_t, int64_t>> slices;
      for_row_slices(count, 4, [&](int64_t begin, int64_t end) {
        std::lock_guard<std::mutex> lock(mutex);
        slices.emplace_back(begin, end);
        for (int64_t r = begin; r < end; ++r) ++seen[static_cast<size_t>(r)];
      });
      INFO(threads << " threads, " << count << " rows");
      CHECK(std::count(seen.begin(), seen.end(), 1) == count);
      CHECK(static_cast<int>(slices.size()) <= threads);
      for (const auto& [begin, end] : slices) {
        CHECK(begin % 4 == 0);
        CHECK((end % 4 == 0 || end == count));
      }
    }
  }
}

TEST_CASE("set_product_threads refuses counts outside 1..kMaxProductThreads", "[native][threads]") {
  CHECK_THROWS_AS(set_product_threads(0), std::invalid_argument);
  CHECK_THROWS_AS(set_product_threads(kMaxProductThreads + 1), std::invalid_argument);
}

TEST_CASE("The products give the same bits with 1, 2 and 3 threads", "[native][threads]") {
  // 256 x 256 x 256 runs on threads; 259 x 250 x 200 also has rows past the last block of 4 and
  // columns past the last block of 16.
  for (auto [rows, k, n] : {std::tuple<int64_t, int64_t, int64_t>{256, 256, 256}, {259, 250, 200}}) {
    std::vector<float> one;
    {
      ScopedProductThreads scoped(1);
      one = both_products(rows, k, n);
    }
    for (int threads : {2, 3}) {
      ScopedProductThreads scoped(threads);
      INFO(threads << " threads, " << rows << " x " << k << " x " << n);
      CHECK(both_products(rows, k, n) == one);
    }
  }
}

TEST_CASE("SAC's gradient steps at 256-256 give the same parameters with 1 and 2 threads", "[native][threads][sac]") {
  ModelSpec model;
  model.obs_size = 11;
  model.action_space = Space::box({3}, -1.0f, 1.0f);
  model.hidden_sizes = {256, 256};
  model.activation = "relu";
  SacConfig config;
  config.batch_size = 256;
  config.learning_starts = 300;
  config.buffer_size = 1000;
  SampleBatch batch;
  batch.resize(300, 1, 11, 3, false);
  batch.obs = random_values(300 * 11, 5);
  batch.action_values = random_values(300 * 3, 6);
  for (float& a : batch.action_values) a = std::tanh(a);
  batch.rewards = random_values(300, 7);
  std::vector<std::vector<float>> parameters;
  for (int threads : {1, 2}) {
    ScopedProductThreads scoped(threads);
    NativeSacLearner learner(model, config, 11);
    learner.add(batch);
    learner.train(3, 300);
    std::vector<float> all = learner.actor_parameters();
    const std::vector<float> critics = learner.critic_parameters();
    all.insert(all.end(), critics.begin(), critics.end());
    parameters.push_back(all);
  }
  CHECK(parameters[0] == parameters[1]);
}

}  // namespace rlx
