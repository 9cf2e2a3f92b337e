// The interface between rlx and its Python env bridge module (rlx-python-envs.so, the one
// library that links libpython): two exported functions, looked up by envs/python_env_loader.cc.
// C++ types cross it, so the module is built with rlx itself (the same toolchain and headers).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "envs/registry.h"

namespace rlx {

// Bumped whenever this interface or the layout of what crosses it changes.
constexpr int kPythonBridgeAbiVersion = 4;  // 2: PythonEnvRegistration, render(); 3: every space, action masks (EnvSpec, ObsSpan);
                                            // 4: multi-agent envs (EnvRegistrar::add_multi_agent)

constexpr const char* kPythonBridgeAbiVersionSymbol = "rlx_python_bridge_abi_version";
constexpr const char* kPythonRegisterEnvSymbol = "rlx_python_register_env";

// What the bridge needs to register one Python env.
struct PythonEnvRegistration {
  std::string env_id;                    // "python:MODULE:ATTRIBUTE"
  std::string env_config_json;           // a JSON object: the constructor's keyword arguments
  std::vector<std::string> python_path;  // put in front of sys.path
  // Asked at each construction: true while the process films envs (ScopedPythonRenderMode), and
  // the instance is then constructed with render_mode="rgb_array" when env_config sets no
  // render_mode and the constructor has that parameter. Unset: never.
  std::function<bool()> rendering;
};

// Registers registration.env_id with the class ATTRIBUTE of MODULE, constructed with
// env_config_json's object as keyword arguments, python_path put in front of sys.path.
// Throws as register_python_env (envs/python_env.h) says.
using PythonRegisterEnvFn = void (*)(EnvRegistrar& registrar, const PythonEnvRegistration& registration);

}  // namespace rlx
