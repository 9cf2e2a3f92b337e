# The floors of rlx (../shared/DESIGN.md, "Layout"): each source folder and the folders its
# files may #include besides its own. Includes point only downwards; the table mirrors the
# libraries' target_link_libraries. Read by tests/CMakeLists.txt and by the checks
# cmake/check_layering.cmake and cmake/check_bench_placement.cmake (ctest -R layering).
#
# A file belongs to the longest folder named here that holds it (cli/bench/ before cli/).

# Folders whose code is part of a library users or plugins link: no benchmark code here.
set(RLX_LIBRARY_FLOORS core envs models native transport rollout watch learner algorithms tune serve)

set(RLX_FLOOR_core "")
set(RLX_FLOOR_envs core)
set(RLX_FLOOR_transport core models)  # models/weights.h: the Weights message
set(RLX_FLOOR_models core)  # network descriptions and the torch-free inference kernel
set(RLX_FLOOR_rollout core envs transport models)
set(RLX_FLOOR_watch core envs)  # what users look at: TensorBoard event files, videos
set(RLX_FLOOR_native core models)  # the torch-free PPO learner (GAE, running statistics, metrics)
set(RLX_FLOOR_learner core envs models native transport)  # no rollout/: models/ holds what both share
set(RLX_FLOOR_algorithms core envs transport models native rollout watch learner)
set(RLX_FLOOR_tune core)  # trials are `rlx train` processes, so tune links no learner
set(RLX_FLOOR_serve core models transport)  # policies from models/; a checkpoint is exported by the CLI
# bench/ sits above the libraries it measures; only the benchmark commands link it.
set(RLX_FLOOR_bench ${RLX_LIBRARY_FLOORS})
set(RLX_FLOOR_cli ${RLX_LIBRARY_FLOORS})
set(RLX_FLOOR_cli/bench ${RLX_LIBRARY_FLOORS} cli bench)

set(RLX_FLOORS ${RLX_LIBRARY_FLOORS} bench cli cli/bench)

# File names that mark benchmark code (harnesses, synthetic peers): they belong in bench/.
set(RLX_BENCH_NAME_REGEX "benchmark|synthetic_")
