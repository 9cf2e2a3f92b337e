// The interface between rlx and its Python env bridge module (rlx-python-envs.so, the one
// library that links libpython): two exported functions, looked up by envs/python_env_loader.cc.
// C++ types cross it, so the module is built with rlx itself (the same toolchain and headers).
#pragma once

#include <string>
#include <vector>

#include "envs/registry.h"

namespace rlx {

// Bumped whenever this interface or the layout of what crosses it changes.
constexpr int kPythonBridgeAbiVersion = 1;

constexpr const char* kPythonBridgeAbiVersionSymbol = "rlx_python_bridge_abi_version";
constexpr const char* kPythonRegisterEnvSymbol = "rlx_python_register_env";

// Registers env_id ("python:MODULE:ATTRIBUTE") with the class ATTRIBUTE of MODULE, constructed
// with env_config_json's object as keyword arguments, python_path put in front of sys.path.
// Throws as register_python_env (envs/python_env.h) says.
using PythonRegisterEnvFn = void (*)(EnvRegistrar& registrar, const std::string& env_id,
                                     const std::string& env_config_json, const std::vector<std::string>& python_path);

}  // namespace rlx
