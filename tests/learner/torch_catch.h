// Catch2 after LibTorch: Debian's LibTorch pulls in glog, whose CHECK(condition) macro would
// otherwise replace Catch's CHECK. Include this instead of <catch2/catch.hpp> in torch tests.
#pragma once

#include <torch/torch.h>

#ifdef CHECK
#undef CHECK
#endif

#include <catch2/catch.hpp>
