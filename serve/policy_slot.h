// One served policy: its name, where its versions come from, the version serving now (swapped
// atomically by reload) and its recurrent sessions.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "serve/served_model.h"
#include "serve/session_store.h"

namespace rlx {

// What a reload did.
struct ReloadOutcome {
  enum class Result { kSwapped, kUnchanged, kRefused };
  Result result = Result::kUnchanged;
  uint64_t version = 0;  // the version serving after it
  std::string message;   // what was loaded, or why it was refused
};

struct PolicySlotOptions {
  int threads = 1;      // threads that act (inference threads and inline lanes): one rlx::Policy each per version
  uint64_t seed = 0;    // stochastic actions' generators: seed + thread
  size_t max_sessions = 10000;
  std::chrono::milliseconds session_ttl{std::chrono::minutes(10)};
};

class PolicySlot {
 public:
  // Loads the source's newest version as version 1; throws (naming the source) when there is
  // none or it cannot be served.
  PolicySlot(std::string name, ModelSource source, CheckpointExporter exporter, const PolicySlotOptions& options);

  const std::string& name() const { return name_; }
  const ModelSource& source() const { return source_; }
  // The version serving now; requests hold on to it until they are answered.
  std::shared_ptr<const ServedModel> model() const;
  // Loads the source's newest version beside the serving one when it is another (`force`: also
  // from the same path, e.g. a policy file rewritten in place), verifies it (checksums, the same
  // spaces) and swaps it in unless it is the serving one (the same checkpoint, or a file of the same SHA-256). A
  // version that fails is refused and logged, and the old one keeps serving.
  ReloadOutcome reload(bool force);
  SessionStore& sessions() { return sessions_; }
  const SessionStore& sessions() const { return sessions_; }

 private:
  const std::string name_;
  const ModelSource source_;
  const CheckpointExporter exporter_;
  const PolicySlotOptions options_;
  std::mutex reload_mutex_;     // one reload at a time
  mutable std::mutex model_mutex_;  // guards model_ (the swap)
  std::shared_ptr<const ServedModel> model_;
  std::filesystem::path looked_at_;  // a trial's newest checkpoint when a watch last verified one
  SessionStore sessions_;
};

}  // namespace rlx
