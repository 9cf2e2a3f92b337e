#include <catch2/catch.hpp>

#include "core/byte_size_text.h"

TEST_CASE("byte sizes read in the largest binary unit, one decimal below 10", "[core]") {
  CHECK(rlx::byte_size_text(0) == "0 B");
  CHECK(rlx::byte_size_text(1023) == "1023 B");
  CHECK(rlx::byte_size_text(1024) == "1.0 KiB");
  CHECK(rlx::byte_size_text(427008) == "417 KiB");
  CHECK(rlx::byte_size_text(894566400) == "853 MiB");
  CHECK(rlx::byte_size_text(3ULL << 29) == "1.5 GiB");
  CHECK(rlx::byte_size_text(5ULL << 40) == "5.0 TiB");
}
