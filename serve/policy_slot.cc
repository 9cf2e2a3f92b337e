#include "serve/policy_slot.h"

#include <stdexcept>

#include "core/checkpoint_dir.h"
#include "core/log.h"

namespace rlx {

PolicySlot::PolicySlot(std::string name, ModelSource source, CheckpointExporter exporter, const PolicySlotOptions& options)
    : name_(std::move(name)),
      source_(std::move(source)),
      exporter_(std::move(exporter)),
      options_(options),
      sessions_(options.max_sessions, options.session_ttl) {
  const std::optional<std::filesystem::path> origin = newest_model_origin(source_);
  if (!origin) throw std::invalid_argument(source_.path.string() + ": the trial has no checkpoint that verifies yet");
  const ModelSourceKind kind = source_.kind == ModelSourceKind::kTrial ? ModelSourceKind::kCheckpoint : source_.kind;
  model_ = load_served_model(*origin, kind, source_.policy, exporter_, 1, options_.threads, options_.seed);
  looked_at_ = *origin;
}

std::shared_ptr<const ServedModel> PolicySlot::model() const {
  std::lock_guard<std::mutex> lock(model_mutex_);
  return model_;
}

ReloadOutcome PolicySlot::reload(bool force) {
  std::lock_guard<std::mutex> reloading(reload_mutex_);
  const std::shared_ptr<const ServedModel> serving = model();
  ReloadOutcome outcome;
  outcome.version = serving->version();
  if (!force && source_.kind == ModelSourceKind::kTrial) {
    // A watch: verifying a checkpoint reads it whole, so only a newest one not looked at yet is.
    std::filesystem::path newest;
    try {
      newest = resolve_checkpoint(source_.path);
    } catch (const std::exception& error) {
      outcome.message = error.what();  // none yet, or the trial is gone: nothing to swap in
      return outcome;
    }
    if (newest == looked_at_) {
      outcome.message = "version " + std::to_string(serving->version()) + " (" + serving->fingerprint() + ") is the newest";
      return outcome;
    }
    looked_at_ = newest;
  }
  std::optional<std::filesystem::path> origin;
  try {
    origin = newest_model_origin(source_);
  } catch (const std::exception& error) {
    outcome.result = ReloadOutcome::Result::kRefused;
    outcome.message = error.what();
    return outcome;
  }
  if (!origin || (!force && *origin == serving->origin())) {
    outcome.message = "version " + std::to_string(serving->version()) + " (" + serving->fingerprint() + ") is the newest";
    return outcome;
  }
  const ModelSourceKind kind = source_.kind == ModelSourceKind::kTrial ? ModelSourceKind::kCheckpoint : source_.kind;
  std::shared_ptr<const ServedModel> loaded;
  try {
    loaded = load_served_model(*origin, kind, source_.policy, exporter_, serving->version() + 1, options_.threads,
                               options_.seed);
  } catch (const std::exception& error) {
    outcome.result = ReloadOutcome::Result::kRefused;
    outcome.message = origin->string() + ": " + error.what();
    logger().warn("policy {}: refused {}; version {} keeps serving", name_, outcome.message, serving->version());
    return outcome;
  }
  const std::string difference = serving->spaces().difference(loaded->spaces());
  if (!difference.empty()) {
    outcome.result = ReloadOutcome::Result::kRefused;
    outcome.message = origin->string() + " has " + difference;
    logger().warn("policy {}: refused {}; version {} keeps serving", name_, outcome.message, serving->version());
    return outcome;
  }
  if (loaded->fingerprint() == serving->fingerprint()) {
    outcome.message = "version " + std::to_string(serving->version()) + " (" + serving->fingerprint() + ") is the newest";
    return outcome;
  }
  {
    std::lock_guard<std::mutex> lock(model_mutex_);
    model_ = loaded;
  }
  outcome.result = ReloadOutcome::Result::kSwapped;
  outcome.version = loaded->version();
  outcome.message = "version " + std::to_string(loaded->version()) + " from " + origin->string() + " (" + loaded->fingerprint() + ")";
  logger().info("policy {}: serving {}", name_, outcome.message);
  return outcome;
}

}  // namespace rlx
