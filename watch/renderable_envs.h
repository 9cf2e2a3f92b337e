// Which envs rlx can film (watch/env_renderer.h draws them), known without loading a renderer.
#pragma once

#include <string>
#include <vector>

namespace rlx {

// The ids of the envs make_env_renderer draws, sorted.
std::vector<std::string> renderable_env_ids();

// Whether make_env_renderer draws `env_id`.
bool is_renderable_env(const std::string& env_id);

}  // namespace rlx
