// Threads for native/dense_backprop.h's large matrix products: a product's output rows are cut
// into contiguous slices, one per thread (the calling thread takes the first), and every row is
// computed by one thread with exactly the arithmetic it has without threads, so the results are
// bit-identical for any thread count. One process-wide set of threads, started on first use.
// A product that finds the threads busy with another thread's product runs on its own caller.
#pragma once

#include <cstdint>
#include <functional>

namespace rlx {

constexpr int kMaxProductThreads = 64;

// The threads this process may run on (its CPU affinity), at least 1.
int available_cpus();

// Sets how many threads (the caller included) split each large product from now on; 1 runs
// every product on its caller. Throws std::invalid_argument outside [1, kMaxProductThreads].
void set_product_threads(int threads);

// The count set_product_threads last set; 1 until it is called.
int product_threads();

// Runs part(begin, end) over [0, count) cut into at most product_threads() contiguous slices
// whose bounds are multiples of `align` (the last ends at count), concurrently, and returns
// when all have run. `part` must not throw.
void for_row_slices(int64_t count, int64_t align, const std::function<void(int64_t, int64_t)>& part);

}  // namespace rlx
