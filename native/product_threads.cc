#include "native/product_threads.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace rlx {

namespace {

// How long a helper that finished its slice keeps watching for the next job before it sleeps:
// the products of one gradient step come microseconds apart, and waking a sleeping thread
// costs tens of microseconds on a virtual machine.
constexpr auto kSpinBeforeSleep = std::chrono::microseconds(200);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Helper threads that each run one slice of a job, then watch for the next one. Every helper
// acknowledges every job (those without a slice too), so a job's fields never change under a
// helper that is still reading them.
class SlicePool {
 public:
  explicit SlicePool(int helpers) {
    threads_.reserve(static_cast<size_t>(helpers));
    for (int i = 0; i < helpers; ++i) threads_.emplace_back([this, i] { serve(i + 1); });
  }

  ~SlicePool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& thread : threads_) thread.join();
  }

  SlicePool(const SlicePool&) = delete;
  SlicePool& operator=(const SlicePool&) = delete;

  int helpers() const { return static_cast<int>(threads_.size()); }

  // Runs slice 0 on the caller and slices 1..slices-1 on helpers; returns when all are done.
  void run(int slices, const std::function<void(int)>& slice) {
    job_ = &slice;
    slices_ = slices;
    unacknowledged_.store(helpers(), std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(mutex_);  // a helper about to sleep sees the new job
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    slice(0);
    for (int spins = 1; unacknowledged_.load(std::memory_order_acquire) != 0; ++spins) {
      if (spins % 1024 == 0) {
        std::this_thread::yield();
      } else {
        cpu_relax();
      }
    }
  }

 private:
  void serve(int index) {
    uint64_t seen = 0;
    while (true) {
      const auto spin_end = std::chrono::steady_clock::now() + kSpinBeforeSleep;
      for (int spins = 1; generation_.load(std::memory_order_acquire) == seen; ++spins) {
        cpu_relax();
        if (spins % 64 == 0 && std::chrono::steady_clock::now() > spin_end) {
          std::unique_lock<std::mutex> lock(mutex_);
          wake_.wait(lock, [&] { return stopping_ || generation_.load(std::memory_order_relaxed) != seen; });
          if (stopping_) return;
        }
      }
      seen = generation_.load(std::memory_order_acquire);
      if (index < slices_) (*job_)(index);
      unacknowledged_.fetch_sub(1, std::memory_order_acq_rel);
    }
  }

  std::mutex mutex_;  // guards stopping_ and the sleep on wake_
  std::condition_variable wake_;
  std::vector<std::thread> threads_;
  const std::function<void(int)>* job_ = nullptr;  // written before generation_ moves
  int slices_ = 0;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> unacknowledged_{0};  // helpers yet to finish the current job
  bool stopping_ = false;
};

std::mutex g_config_mutex;            // guards g_threads and g_pool's replacement
std::atomic<int> g_threads{1};
std::unique_ptr<SlicePool> g_pool;    // product_threads() - 1 helpers, made on first use
std::mutex g_use_mutex;               // one job on the pool at a time

}  // namespace

int available_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

void set_product_threads(int threads) {
  if (threads < 1 || threads > kMaxProductThreads) {
    throw std::invalid_argument("set_product_threads: want 1 to " + std::to_string(kMaxProductThreads) +
                                " threads, got " + std::to_string(threads));
  }
  std::lock_guard<std::mutex> use(g_use_mutex);
  std::lock_guard<std::mutex> lock(g_config_mutex);
  if (g_pool && g_pool->helpers() != threads - 1) g_pool.reset();
  g_threads = threads;
}

int product_threads() { return g_threads.load(std::memory_order_relaxed); }

void for_row_slices(int64_t count, int64_t align, const std::function<void(int64_t, int64_t)>& part) {
  if (count <= 0) return;
  align = std::max<int64_t>(align, 1);
  const int64_t units = (count + align - 1) / align;
  const int threads = static_cast<int>(std::min<int64_t>(product_threads(), units));
  std::unique_lock<std::mutex> use(g_use_mutex, std::try_to_lock);
  if (threads <= 1 || !use.owns_lock()) {
    part(0, count);
    return;
  }
  SlicePool* pool;
  {
    std::lock_guard<std::mutex> lock(g_config_mutex);
    if (!g_pool) g_pool = std::make_unique<SlicePool>(g_threads - 1);
    pool = g_pool.get();
  }
  const int slices = std::min(threads, pool->helpers() + 1);
  pool->run(slices, [&](int slice) {
    const int64_t begin = std::min(count, units * slice / slices * align);
    const int64_t end = std::min(count, units * (slice + 1) / slices * align);
    if (begin < end) part(begin, end);
  });
}

}  // namespace rlx
