#!/usr/bin/env bash
# The one-line settings behind run.sh's servers, measured: each variant below is the
# server of run.sh with one line changed (sed on a copy, built into a temp dir), run
# next to the unchanged server through run.sh (ROUNDS=1 by default: single runs).
#   httplib_nagle, civetweb_nagle   TCP_NODELAY left at the library's default (off)   c=1
#   httplib_ka                      keep-alive without cpp-httplib's 5-request limit  c=64, 256
#   civetweb_t300                   300 worker threads instead of CivetWeb's 50       c=64, 256
#
#   bench/http_library_choice/asides.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
export BUILD_DIR=${BUILD_DIR:-$(mktemp -d /tmp/http_library_choice.XXXXXX)}
export ROUNDS=${ROUNDS:-1} SKIP_BUILD=1

# variant NAME SOURCE SED_EXPR: copy SOURCE with SED_EXPR applied, fail if nothing changed.
variant() {
  local name=$1 src=$2 expr=$3
  sed "$expr" "$here/$src" > "$BUILD_DIR/$name.cc"
  if cmp -s "$here/$src" "$BUILD_DIR/$name.cc"; then
    echo "variant $name: '$expr' changed nothing in $src"; exit 1
  fi
}
variant httplib_nagle httplib_server.cc '/set_tcp_nodelay(true)/d'
variant civetweb_nagle civetweb_server.cc '/"tcp_nodelay", "1",/d'
variant httplib_ka httplib_server.cc \
  's/server.set_tcp_nodelay(true);/&\n  server.set_keep_alive_max_count(1000000);/'
variant civetweb_t300 civetweb_server.cc \
  's/"enable_keep_alive", "yes",/& "num_threads", "300",/'

echo "building into $BUILD_DIR"
CXX="g++ -std=c++17 -O2 -Wall -Wextra -pthread -I$here"
HTTPLIB="$(pkg-config --cflags cpp-httplib)"
$CXX $HTTPLIB -o "$BUILD_DIR/httplib_server" "$here/httplib_server.cc" -lcpp-httplib &
$CXX -o "$BUILD_DIR/civetweb_server" "$here/civetweb_server.cc" -lcivetweb &
for v in httplib_nagle httplib_ka; do
  $CXX $HTTPLIB -o "$BUILD_DIR/${v}_server" "$BUILD_DIR/$v.cc" -lcpp-httplib &
done
for v in civetweb_nagle civetweb_t300; do
  $CXX -o "$BUILD_DIR/${v}_server" "$BUILD_DIR/$v.cc" -lcivetweb &
done
for job in $(jobs -p); do wait "$job"; done   # a failed build stops the script

LIBS="httplib httplib_nagle civetweb civetweb_nagle" CONCURRENCIES=1 "$here/run.sh"
LIBS="httplib httplib_ka civetweb civetweb_t300" CONCURRENCIES="64 256" "$here/run.sh"
