// Which envs rlx can film, known without loading a renderer: the built-in envs watch/env_renderer.h
// draws, and any env whose own Env::render() draws it.
#pragma once

#include <string>
#include <vector>

namespace rlx {

// The ids of the envs make_env_renderer draws, sorted.
std::vector<std::string> renderable_env_ids();

// Whether make_env_renderer draws `env_id`.
bool is_renderable_env(const std::string& env_id);

// Whether rlx evaluate --record can film env_id, a registered id of global_env_registry():
// make_env_renderer draws it, or a fresh instance (constructed as a filming process constructs
// it, under ScopedPythonRenderMode) returns an image from render() after a reset with seed 0.
// Throws EnvContractError when that instance breaks the env contract (a malformed image, a
// Python env's render() returning None), PythonEnvError when a Python env raises.
bool can_film_env(const std::string& env_id);

}  // namespace rlx
