// Which instruction sets the vectorised kernels (models/network_kernel.cc,
// native/dense_backprop.cc) are compiled for. By default each function has clones that the
// loader picks per CPU: products with FMA (x86-64-v3) where there is one, AVX2, and baseline
// x86-64; their results differ in the last bits between CPUs with and without FMA. Built with
// RLX_BASELINE_KERNELS (cmake -DRLX_BASELINE_KERNELS=ON) they are baseline code only: every
// x86-64 CPU then computes the same bits, and this machine can run the path a CPU without AVX2
// would take.
#pragma once

#if defined(RLX_BASELINE_KERNELS)
#define RLX_PRODUCT_CLONES
#define RLX_VECTOR_CLONES
#else
// Matrix products: FMA where the CPU has it.
#define RLX_PRODUCT_CLONES __attribute__((target_clones("arch=x86-64-v3", "avx2", "default")))
// Element-wise loops: AVX2 or baseline, the same arithmetic either way.
#define RLX_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#endif
