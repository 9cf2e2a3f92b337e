#!/usr/bin/env bash
# The README's test command: set up and build (scripts/setup.sh), run the whole ctest suite,
# then the ASan + UBSan build of the transport tests (scripts/sanitizer-tests.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache keys on paths relative to the checkout, so every clone (CI's too) shares its hits.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
scripts/setup.sh
ctest --test-dir build --output-on-failure -j 2
scripts/sanitizer-tests.sh
