#include "algorithms/make_sampler.h"

#include "algorithms/local_sampler.h"
#include "algorithms/multi_agent_algorithm.h"
#include "core/config_error.h"
#include "algorithms/progress_line.h"
#include "algorithms/remote_multi_agent_sampler.h"
#include "algorithms/remote_sampler.h"
#include "core/atomic_file.h"
#include "core/byte_size_text.h"
#include "core/plugin_refs.h"
#include "transport/curve.h"
#include "transport/sockets.h"

namespace rlx {

namespace {

// The CURVE keys of a run with --auth-keys: the server's pair and the clients it authorizes from
// the key dir, and a key pair of the local workers' own for this run (in `keys`), authorized
// alongside.
void add_curve_keys(const std::filesystem::path& auth_keys, RemoteSamplerOptions& o,
                    std::unique_ptr<GuardedTempDir>& keys) {
  o.curve_server = load_server_keys(auth_keys);
  o.authorized_client_keys = load_client_keys(auth_keys);
  keys = std::make_unique<GuardedTempDir>("rlx-local-worker-keys-");
  const CurveKeyPair local = generate_curve_keypair();
  save_curve_keypair(keys->path() / "client", local);
  save_curve_public_key(keys->path() / "server.pub", o.curve_server->public_key);
  keys->guard_contents();
  o.authorized_client_keys.push_back(local.public_key);
  o.local_worker_key_dir = keys->path().string();
}

// Tells the user where workers connect, what their queued fragments may take, and writes a TCP
// endpoint to the endpoint file (rlx worker --connect-file).
void announce(const TrainOptions& options, const RemoteSampler& sampler, const RemoteSamplerOptions& o,
              const std::filesystem::path& trial_dir, int64_t workers) {
  const uint64_t per_worker = sampler.queued_bytes_bound() / o.max_workers;
  progress_logger(options.progress)
      .info("workers connect to {} ({} local, at most {} at once); their logs: {}", sampler.endpoint(), workers,
            o.max_workers, o.log_dir.string());
  progress_logger(options.progress)
      .info("queued fragments: a bound of {} a worker (credits x the largest fragment), {} with the local workers, "
            "{} with max_workers {}: memory is taken only as fragments arrive",
            byte_size_text(per_worker), byte_size_text(per_worker * static_cast<uint64_t>(workers)),
            byte_size_text(sampler.queued_bytes_bound()), o.max_workers);
  if (sampler.endpoint().rfind("tcp://", 0) == 0) {
    const std::filesystem::path file =
        options.endpoint_file.empty() ? trial_dir / kEndpointFileName : options.endpoint_file;
    const std::string reachable = reachable_endpoint(sampler.endpoint(), local_host_name());
    write_file_atomic(file, reachable + "\n");
    progress_logger(options.progress).info("wrote {} to {} (rlx worker --connect-file)", reachable, file.string());
  }
  if (workers == 0) progress_logger(options.progress).info("no local workers: every worker connects from elsewhere");
}

}  // namespace

std::unique_ptr<Sampler> make_sampler(const TrainOptions& options, const Algorithm& algorithm,
                                      const std::filesystem::path& trial_dir, std::unique_ptr<GuardedTempDir>& keys) {
  const Experiment& e = options.experiment;
  const CommonConfig& config = e.config.common();
  const int64_t workers = config.num_workers;
  // num_workers: 0 samples in this process, unless workers are to connect (--bind): then every
  // worker is remote (a fleet started elsewhere, e.g. by srun).
  const auto* multi = dynamic_cast<const MultiAgentAlgorithm*>(&algorithm);
  if (workers == 0 && options.bind_endpoint.empty()) {
    if (multi) return multi->make_local_sampler();
    return std::make_unique<LocalSampler>(algorithm.worker_setup());
  }
  RemoteSamplerOptions o;
  if (!multi) o.setup = algorithm.worker_setup();
  o.num_local_workers = static_cast<int>(workers);
  o.worker_program = options.worker_program;
  o.env_plugins = plugin_paths(e.plugins);
  o.python_path = e.python_path;
  o.bind_endpoint = options.bind_endpoint;
  o.max_policy_lag = static_cast<uint64_t>(config.max_policy_lag);
  o.credits_per_worker = algorithm.worker_credits(workers);
  o.max_worker_restarts = static_cast<int>(config.max_worker_restarts);
  o.max_workers = static_cast<size_t>(config.max_workers);
  o.worker_learner_timeout_s = config.worker_learner_timeout_s;
  o.log_dir = trial_dir / kLogsDirName;
  o.launcher = options.launcher;
  if (options.auth_keys) add_curve_keys(*options.auth_keys, o, keys);
  if (multi) {
    std::unique_ptr<MultiAgentSampler> sampler = multi->make_remote_sampler(o);
    announce(options, dynamic_cast<RemoteMultiAgentSampler&>(*sampler).remote(), o, trial_dir, workers);
    return sampler;
  }
  auto sampler = std::make_unique<RemoteSampler>(o);
  announce(options, *sampler, o, trial_dir, workers);
  return sampler;
}

}  // namespace rlx
