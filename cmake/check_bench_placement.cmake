# Fails when benchmark code is part of a library users or plugins link: a file named like a
# benchmark (RLX_BENCH_NAME_REGEX) in a library folder of cmake/floors.cmake, or a library
# target compiling such a file or anything from bench/. Names the file and the target.
#   cmake -DRLX_SOURCE_DIR=<repository> -DRLX_LIBRARY_SOURCES=<file> -P cmake/check_bench_placement.cmake
# RLX_LIBRARY_SOURCES (written by tests/CMakeLists.txt) has one "target absolute-path" line per
# source of every target defined in a library folder.
cmake_minimum_required(VERSION 3.18)
if(NOT RLX_SOURCE_DIR OR NOT RLX_LIBRARY_SOURCES)
  message(FATAL_ERROR "check_bench_placement: pass -DRLX_SOURCE_DIR=<repository root> -DRLX_LIBRARY_SOURCES=<file>")
endif()
include(${CMAKE_CURRENT_LIST_DIR}/floors.cmake)

set(violations 0)

# Benchmark-named files in the library folders (their headers would also be installed).
set(globs "")
foreach(floor IN LISTS RLX_LIBRARY_FLOORS)
  list(APPEND globs "${RLX_SOURCE_DIR}/${floor}/*")
endforeach()
file(GLOB_RECURSE files LIST_DIRECTORIES false RELATIVE "${RLX_SOURCE_DIR}" ${globs})
list(SORT files)
foreach(file IN LISTS files)
  get_filename_component(name "${file}" NAME)
  if(name MATCHES "${RLX_BENCH_NAME_REGEX}")
    message("${file}: benchmark code in a library folder; it belongs in bench/")
    math(EXPR violations "${violations} + 1")
  endif()
endforeach()

# What the library targets compile.
file(STRINGS "${RLX_LIBRARY_SOURCES}" entries)
list(LENGTH entries source_count)
if(source_count EQUAL 0)
  message(FATAL_ERROR "check_bench_placement: ${RLX_LIBRARY_SOURCES} lists no library sources")
endif()
foreach(entry IN LISTS entries)
  string(REGEX REPLACE "^([^ ]+) (.*)$" "\\1" target "${entry}")
  string(REGEX REPLACE "^([^ ]+) (.*)$" "\\2" source "${entry}")
  file(RELATIVE_PATH rel "${RLX_SOURCE_DIR}" "${source}")
  get_filename_component(name "${source}" NAME)
  if(rel MATCHES "^bench/" OR name MATCHES "${RLX_BENCH_NAME_REGEX}")
    message("${rel}: compiled into ${target}, a library users link; benchmark code belongs in rlx_bench")
    math(EXPR violations "${violations} + 1")
  endif()
endforeach()

if(violations GREATER 0)
  message(FATAL_ERROR "check_bench_placement: ${violations} piece(s) of benchmark code outside bench/")
endif()
message("check_bench_placement: no benchmark code in ${source_count} library sources or the library folders")
