// Instruction-set clones for this measurement, as in models/kernel_clones.h. By default the
// product (and element-wise) functions get the clones the workers' kernel uses today
// (models/network_kernel.cc: RLX_VECTOR_CLONES = avx2 + default, no FMA, -std=c++17 so no
// contraction: the same bits on every x86-64 CPU). Built with -DWFC_FMA the products also get an
// x86-64-v3 (FMA) clone, like RLX_PRODUCT_CLONES.
#pragma once

#define WFC_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#if defined(WFC_FMA)
#define WFC_PRODUCT_CLONES __attribute__((target_clones("arch=x86-64-v3", "avx2", "default")))
#else
#define WFC_PRODUCT_CLONES WFC_VECTOR_CLONES
#endif
