// The env plugin ABI: what a shared library must export for rlx to load its environments.
//
// A plugin is a shared library (a CMake MODULE or SHARED library) that links only
// rlx::env_api (headers: core/*.h, envs/env.h, envs/registry.h and this file), never rlx's
// libraries. It writes, once, in one source file:
//
//   #include "envs/plugin.h"
//
//   RLX_ENV_PLUGIN(registrar) {
//     registrar.add(my_spec(), [] { return std::make_unique<MyEnv>(); });
//     registrar.add_multi_agent(my_game_spec(), [] { return std::make_unique<MyGame>(); });  // envs/multi_agent/multi_agent_env.h
//   }
//
// which defines two extern "C" functions with default visibility (so they are exported even
// when the plugin is built with -fvisibility=hidden):
//
//   int  rlx_env_plugin_abi_version();                 // kEnvPluginAbiVersion at compile time
//   void rlx_register_envs(rlx::EnvRegistrar& registrar); // the body written after the macro
//
// The host (envs/plugin_loader.h) dlopens the library, looks up both symbols, refuses the
// plugin unless its ABI version equals the host's kEnvPluginAbiVersion, and then calls the
// registration function with a registrar of its own. The registrar's add() may throw
// std::invalid_argument (malformed spec); a plugin lets such exceptions propagate.
//
// What the version covers: the C++ layout of everything that crosses the boundary (Env, RgbImage,
// EnvSpec, Space, Rng, Action, StepResult, EnvFactory, EnvRegistrar, and the multi-agent
// MultiAgentEnv, MultiAgentEnvSpec, MultiAgentOutput, MultiAgentEnvFactory). Any change to those
// headers that alters layout, virtual functions or semantics must bump kEnvPluginAbiVersion.
// Because C++ types (std::string, std::vector, std::function) cross the boundary, a plugin
// must also be built with a compiler and C++ standard library ABI-compatible with rlx's
// (in practice: the same toolchain, same _GLIBCXX_USE_CXX11_ABI).
//
// Lifetime: envs made by a plugin's factories run the plugin's code, so the host keeps every
// loaded plugin resident until the process exits.
#pragma once

#include "envs/registry.h"

namespace rlx {

// Version of the plugin ABI; bumped whenever the headers a plugin compiles against change
// incompatibly.
constexpr int kEnvPluginAbiVersion = 7;  // 3: Env::reset_seed(); 4: Env::render() and its hooks;
                                         // 5: every Gymnasium space, byte observations, action masks;
                                         // 6: Env's ObservationWriter keeps the byte bounds it checks;
                                         // 7: multi-agent envs (EnvRegistrar::add_multi_agent)

// Names of the two symbols every plugin exports (see RLX_ENV_PLUGIN).
constexpr const char* kEnvPluginAbiVersionSymbol = "rlx_env_plugin_abi_version";
constexpr const char* kEnvPluginRegisterSymbol = "rlx_register_envs";

// Signatures of the two exported symbols, as the host looks them up.
using EnvPluginAbiVersionFn = int (*)();
using EnvPluginRegisterFn = void (*)(EnvRegistrar&);

}  // namespace rlx

#if defined(_WIN32)
#define RLX_ENV_PLUGIN_EXPORT __declspec(dllexport)
#else
#define RLX_ENV_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

// Defines the plugin's exported ABI-version function and opens the definition of its
// registration function; `registrar` names the rlx::EnvRegistrar& parameter of the body.
#define RLX_ENV_PLUGIN(registrar)                                                 \
  extern "C" RLX_ENV_PLUGIN_EXPORT int rlx_env_plugin_abi_version() {             \
    return ::rlx::kEnvPluginAbiVersion;                                           \
  }                                                                               \
  extern "C" RLX_ENV_PLUGIN_EXPORT void rlx_register_envs(::rlx::EnvRegistrar& registrar)
