# Install rules and the rlx package config (filled in with the plugin work).
#
# find_package(rlx) works from an install prefix (<prefix>/lib/cmake/rlx) and from a build
# tree (-Drlx_DIR=<build dir>). It provides rlx::core and rlx::env_api (headers; all an env
# plugin needs), rlx::policy (static; runs exported policies, models/policy.h, and links nothing
# but the C++ runtime) and rlx::envs (static; needs MuJoCo, looked for by the config, and is a
# component: find_package(rlx REQUIRED COMPONENTS envs) fails when MuJoCo is missing).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(RLX_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/rlx)

# Exported names drop the rlx_ prefix, matching the in-tree aliases rlx::core etc.
set_target_properties(rlx_core PROPERTIES EXPORT_NAME core)
set_target_properties(rlx_env_api PROPERTIES EXPORT_NAME env_api)
set_target_properties(rlx_envs PROPERTIES EXPORT_NAME envs)
set_target_properties(rlx_models PROPERTIES EXPORT_NAME models)
set_target_properties(rlx_policy PROPERTIES EXPORT_NAME policy)

install(TARGETS rlx RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# rlx execs it for the commands that need LibTorch (cli/forward_to_torch.h looks there).
install(TARGETS rlx_torch RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/rlx)
# And the Python env bridge, which rlx dlopens for envs named python:MODULE:CLASS (envs/python_env.h).
install(TARGETS rlx_python_envs LIBRARY DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/rlx)
# And rlx-plot for `rlx plot` (the one executable that links Cairo).
install(TARGETS rlx_plot_program RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/rlx)
install(TARGETS rlx_core rlx_env_api rlx_envs rlx_models rlx_policy
  EXPORT rlxTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

# Headers keep their layout under include/rlx (rlx_core's INSTALL_INTERFACE include dir),
# so "core/space.h" and "envs/plugin.h" resolve the same in and out of the tree.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/ DESTINATION include/rlx/core
  FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/generated/core/version.h DESTINATION include/rlx/core)
# rlx::policy's one header: applications include "models/policy.h".
install(FILES ${PROJECT_SOURCE_DIR}/models/policy.h DESTINATION include/rlx/models)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/envs/ DESTINATION include/rlx/envs
  FILES_MATCHING PATTERN "*.h"
  PATTERN "assets" EXCLUDE)

write_basic_package_version_file(${PROJECT_BINARY_DIR}/rlxConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)

# Installed package: config, version and targets under <prefix>/lib/cmake/rlx.
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/rlxConfig.cmake.in
  ${PROJECT_BINARY_DIR}/package-install/rlxConfig.cmake
  INSTALL_DESTINATION ${RLX_INSTALL_CMAKEDIR})
install(FILES
  ${PROJECT_BINARY_DIR}/package-install/rlxConfig.cmake
  ${PROJECT_BINARY_DIR}/rlxConfigVersion.cmake
  DESTINATION ${RLX_INSTALL_CMAKEDIR})
install(EXPORT rlxTargets NAMESPACE rlx:: DESTINATION ${RLX_INSTALL_CMAKEDIR})

# Build-tree package: -Drlx_DIR=<build dir> uses the targets where they were built.
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/rlxConfig.cmake.in
  ${PROJECT_BINARY_DIR}/rlxConfig.cmake
  INSTALL_DESTINATION ${PROJECT_BINARY_DIR}
  INSTALL_PREFIX ${PROJECT_BINARY_DIR})
export(EXPORT rlxTargets NAMESPACE rlx:: FILE ${PROJECT_BINARY_DIR}/rlxTargets.cmake)
