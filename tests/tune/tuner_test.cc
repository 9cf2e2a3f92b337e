// `rlx tune` end to end with real `rlx train` processes: a short synchronous PBT run, a
// crashed trial retried from its checkpoint, a SIGKILLed tuner resumed with no trial lost or
// repeated, the replay of one trial's lineage (donors' checkpoints included), and the checks
// that refuse an experiment before any trial starts.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "core/atomic_file.h"
#include "core/checkpoint_dir.h"
#include "core/config_schema.h"
#include "core/sha256.h"
#include "tests/cli/run_rlx.h"
#include "tests/core/test_util.h"
#include "core/child_process.h"
#include "tune/exploit.h"
#include "tune/trial.h"
#include "tune/tuner.h"

namespace rlx {
namespace {

namespace fs = std::filesystem;

// 4 CartPole PPO trials of 12 iterations x 128 steps, PBT every 384 steps, 2 at a time.
const char* kPbtYaml = R"(pbt-test:
  env: CartPole-v1
  algorithm: PPO
  stop: {timesteps_total: 1536}
  config:
    num_workers: 0
    num_envs_per_worker: 2
    rollout_fragment_length: 64
    minibatch_size: 64
    num_epochs: 2
    checkpoint_freq: 0
  tune:
    num_samples: 4
    max_concurrent_trials: 2
    max_failures: 2
    seed: 3
    scheduler:
      type: pbt
      time_attr: timesteps_total
      perturbation_interval: 384
      synch: true
      hyperparam_mutations:
        lr: {loguniform: [1.0e-4, 1.0e-2]}
        clip_param: [0.1, 0.2, 0.3]
)";

nlohmann::json read_json(const fs::path& path) { return nlohmann::json::parse(read_file(path)); }

// Every trial ran to the end, with one result row per iteration (none lost, none repeated),
// and every exploit's checkpoint holds the donor checkpoint's files and its params, explored.
void check_finished_run(const fs::path& dir) {
  const nlohmann::json state = read_json(dir / kExperimentStateName);
  CHECK(state.at("finished") == true);
  REQUIRE(state.at("trials").size() == 4);
  for (const auto& trial : state.at("trials")) {
    INFO(trial.dump());
    CHECK(trial.at("status") == "TERMINATED");
    CHECK(trial.at("timesteps_total") == 1536);
    std::istringstream rows(read_file(dir / trial.at("name").get<std::string>() / "result.jsonl"));
    std::string line;
    int64_t expected = 1;
    while (std::getline(rows, line)) CHECK(nlohmann::json::parse(line).at("training_iteration") == expected++);
    CHECK(expected == 13);
    // The trial's last checkpoint records the params the tuner holds for it.
    const Checkpoint last = read_checkpoint_dir(trial.at("checkpoint").get<std::string>());
    for (const auto& [key, value] : trial.at("params").items()) CHECK(last.manifest.at("experiment").at("config").at(key) == value);
  }
  const auto log = read_pbt_log(dir / kPbtLogName);
  CHECK(!log.empty());
  std::set<std::string> ids;
  for (const auto& entry : log) {
    INFO(entry.dump());
    CHECK(ids.insert(entry.at("id").get<std::string>()).second);
    const Checkpoint copy = read_checkpoint_dir(entry.at("trial_checkpoint").get<std::string>());
    const Checkpoint donor = read_checkpoint_dir(entry.at("donor_checkpoint").get<std::string>());
    CHECK(copy.manifest.at("exploited_from").at("checkpoint") == entry.at("donor_checkpoint"));
    CHECK(copy.files == donor.files);
    CHECK(copy.manifest.at("algorithm_state") == donor.manifest.at("algorithm_state"));
    const auto& copied_config = copy.manifest.at("experiment").at("config");
    for (const auto& [key, value] : entry.at("new_params").items()) CHECK(copied_config.at(key) == value);
    // Every key other than the mutated ones is the donor checkpoint's.
    for (const auto& [key, value] : donor.manifest.at("experiment").at("config").items()) {
      if (key != "lr" && key != "clip_param") CHECK(copied_config.at(key) == value);
    }
    CHECK(entry.at("time").get<double>() >= 384);
    // The log records which donor checkpoint was copied, and what it was then.
    CHECK(entry.at("donor_checkpoint_sha256") == sha256_file_hex(fs::path(entry.at("donor_checkpoint").get<std::string>()) / kCheckpointManifestName));
    CHECK(entry.at("donor_training_iteration") == donor.manifest.at("counters").at("training_iteration"));
    CHECK(entry.at("donor_timesteps_total") == donor.manifest.at("counters").at("timesteps_total"));
  }
  const std::string csv = read_file(dir / kTrialsCsvName);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 5);
}

// Pids of running `rlx train` processes whose command line mentions `needle`.
std::vector<pid_t> train_processes(const std::string& needle) {
  std::vector<pid_t> pids;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ifstream stat_in(entry.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(stat_in)), std::istreambuf_iterator<char>());
    const bool zombie = stat.find(") Z") != std::string::npos;
    if (!zombie && cmdline.find(std::string("train") + '\0') != std::string::npos && cmdline.find(needle) != std::string::npos) {
      pids.push_back(std::stoi(name));
    }
  }
  return pids;
}

template <typename Predicate>
bool wait_for(Predicate done, std::chrono::seconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

std::optional<nlohmann::json> state_of(const fs::path& dir) {
  if (!fs::exists(dir / kExperimentStateName)) return std::nullopt;
  return read_json(dir / kExperimentStateName);  // written atomically: always whole
}

}  // namespace

// 2 CartPole APPO trials, workers 2 versions behind, PBT over APPO's own rho_bar and PPO's lr;
// then ASHA over c_bar; every trial records its lag and every exploit's keys reach the trial.
const char* kAppoTuneYaml = R"(appo-tune:
  env: CartPole-v1
  algorithm: APPO
  stop: {timesteps_total: 1536}
  config:
    num_workers: 0
    worker_weight_delay: 2
    num_envs_per_worker: 2
    rollout_fragment_length: 64
    minibatch_size: 64
    num_epochs: 2
    checkpoint_freq: 0
  tune:
    num_samples: 2
    max_concurrent_trials: 2
    seed: 5
    scheduler:
      type: pbt
      time_attr: timesteps_total
      perturbation_interval: 384
      quantile_fraction: 0.5
      synch: true
      hyperparam_mutations:
        lr: {loguniform: [1.0e-4, 1.0e-2]}
        rho_bar: [0.5, 1.0, 2.0]
)";

TEST_CASE("rlx tune runs PBT and ASHA on APPO, its own keys included", "[tune][appo]") {
  test::TempDir tmp;
  test::write_text(tmp / "appo.yaml", kAppoTuneYaml);
  const auto run = test::run_rlx("tune " + (tmp / "appo.yaml").string() + " --output " + (tmp / "runs").string());
  INFO(run.out << run.err);
  REQUIRE(run.exit_code == 0);
  const fs::path dir = tmp / "runs/appo-tune";
  for (const char* trial : {"trial_00000", "trial_00001"}) {
    const nlohmann::json result = read_json(dir / trial / "result.json");
    CHECK(result.at("timesteps_total") == 1536);
    CHECK(result.at("learner").at("policy_lag").at("max").get<int>() == 2);
  }
  const auto exploits = read_pbt_log(dir / kPbtLogName);
  REQUIRE(!exploits.empty());  // the worse of two trials exploits the better at every boundary
  for (const auto& entry : exploits) {
    INFO(entry.dump());
    const Checkpoint last = read_checkpoint_dir(*latest_checkpoint(dir / entry.at("trial").get<std::string>()));
    CHECK(last.manifest.at("experiment").at("algorithm") == "APPO");
    CHECK(entry.at("new_params").contains("rho_bar"));
  }

  std::string asha = kAppoTuneYaml;
  asha.replace(asha.find("    scheduler:"), std::string::npos,
               "    param_space:\n      c_bar: {uniform: [0.5, 1.0]}\n    scheduler:\n      type: asha\n"
               "      time_attr: timesteps_total\n      grace_period: 512\n      reduction_factor: 2\n");
  test::write_text(tmp / "asha.yaml", asha);
  const auto asha_run = test::run_rlx("tune " + (tmp / "asha.yaml").string() + " --output " + (tmp / "asha").string());
  INFO(asha_run.out << asha_run.err);
  CHECK(asha_run.exit_code == 0);
  CHECK_THAT(asha_run.out, Catch::Contains("best trial: trial_000"));
}

TEST_CASE("rlx tune runs a short synchronous PBT end to end and replays a trial's lineage, donors' weights included",
          "[tune]") {
  test::TempDir tmp;
  test::write_text(tmp / "pbt.yaml", kPbtYaml);
  const auto run = test::run_rlx("tune " + (tmp / "pbt.yaml").string() + " --output " + (tmp / "runs").string());
  INFO(run.out << run.err);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Catch::Contains("best trial: trial_000") && Catch::Contains("checkpoint: "));
  CHECK_THAT(run.err, Catch::Contains("TERMINATED") && Catch::Contains("episode_return_mean"));
  const fs::path dir = tmp / "runs/pbt-test";
  check_finished_run(dir);

  // The best trial reported is the best by the metric at the trials' last checkpoints.
  std::vector<Trial> final_trials;
  const nlohmann::json final_state = read_json(dir / kExperimentStateName);
  for (const auto& entry : final_state.at("trials")) final_trials.push_back(trial_from_json(entry));
  const auto best = best_trial_index(final_trials, "max");
  REQUIRE(best);
  CHECK_THAT(run.out, Catch::Contains("best trial: " + final_trials[*best].name + " (episode_return_mean " +
                                      format_readable(*final_trials[*best].checkpoint_metric) + " at its last checkpoint"));
  CHECK_THAT(run.out, Catch::Contains("checkpoint: " + *final_trials[*best].checkpoint));

  // Replay the trial with the most explores on its schedule.
  std::map<std::string, int> changes;
  for (const auto& entry : read_pbt_log(dir / kPbtLogName)) ++changes[entry.at("trial").get<std::string>()];
  const auto most = std::max_element(changes.begin(), changes.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
  const auto replay = test::run_rlx("tune --replay " + (dir / most->first).string());
  INFO(replay.out << replay.err);
  CHECK(replay.exit_code == 3);  // the budget (timesteps_total) ended it
  const fs::path replay_dir = dir / ("replay_" + most->first);
  const Checkpoint last = read_checkpoint_dir(*latest_checkpoint(replay_dir));
  std::vector<nlohmann::json> exploits;
  for (const auto& entry : read_pbt_log(dir / kPbtLogName)) {
    if (entry.at("trial") == most->first) exploits.push_back(entry);
  }
  REQUIRE(!exploits.empty());
  for (const auto& [key, value] : exploits.back().at("new_params").items()) {
    CHECK(last.manifest.at("experiment").at("config").at(key) == value);
  }
  CHECK(last.manifest.at("counters").at("timesteps_total") == 1536);
  // At each exploit the replay loaded the donor's checkpoint the log records: right after it,
  // the replay's checkpoint holds the donor's weights, optimizer and state, with its own counters.
  const std::string replay_log = read_file(dir / "logs" / ("replay_" + most->first + ".log"));
  for (const auto& entry : exploits) {
    INFO(entry.dump());
    const std::string donor_path = entry.at("donor_checkpoint").get<std::string>();
    CHECK_THAT(replay.out, Catch::Contains("loaded donor checkpoint " + donor_path));
    CHECK_THAT(replay_log, Catch::Contains("loaded donor checkpoint " + donor_path));
    const Checkpoint donor = read_checkpoint_dir(donor_path);
    const Checkpoint copy = read_checkpoint_dir(checkpoint_path(replay_dir, entry.at("training_iteration").get<int64_t>()));
    CHECK(copy.files == donor.files);
    CHECK(copy.manifest.at("algorithm_state") == donor.manifest.at("algorithm_state"));
    CHECK(copy.manifest.at("exploited_from").at("checkpoint") == donor_path);
    CHECK(copy.manifest.at("counters").at("timesteps_total") == entry.at("timesteps_total"));
  }
  // From the last exploit on, the replay trains what the trial trained: it ends where the trial did.
  const nlohmann::json trial_end = read_json(dir / most->first / "result.json");
  const nlohmann::json replay_end = read_json(replay_dir / "result.json");
  CHECK(replay_end.at("episode_return_mean") == trial_end.at("episode_return_mean"));

  // A donor checkpoint removed since: the replay says so and goes on with its own weights.
  const fs::path gone = exploits.front().at("donor_checkpoint").get<std::string>();
  fs::rename(gone, tmp / "moved_checkpoint");
  fs::remove_all(replay_dir);
  const auto without = test::run_rlx("tune --replay " + (dir / most->first).string());
  INFO(without.out << without.err);
  CHECK(without.exit_code == 3);
  CHECK_THAT(without.out, Catch::Contains("donor checkpoint " + gone.string() + " of " +
                                          exploits.front().at("donor").get<std::string>() + " no longer exists") &&
                              Catch::Contains("goes on with its own weights"));
  const Checkpoint own = read_checkpoint_dir(checkpoint_path(replay_dir, exploits.front().at("training_iteration").get<int64_t>()));
  CHECK_FALSE(own.manifest.contains("exploited_from"));
}

TEST_CASE("a SIGKILLed rlx tune takes its trials down and resumes with none lost or repeated", "[tune]") {
  test::TempDir tmp;
  test::write_text(tmp / "pbt.yaml", kPbtYaml);
  const fs::path dir = tmp / "runs/pbt-test";
  {
    ChildProcess tuner({std::string(RLX_BINARY_DIR) + "/rlx", "tune", (tmp / "pbt.yaml").string(), "--output",
                        (tmp / "runs").string(), "--quiet"},
                       tmp / "tune1.log");
    // Crash one trial's segment process: the tuner retries it from its checkpoint.
    REQUIRE(wait_for([&] {
      const auto state = state_of(dir);
      return state && state->at("trials")[0].at("segments").get<int>() >= 2 && !train_processes((dir / "trial_00000").string()).empty();
    }, std::chrono::seconds(120)));
    // (a kill may land just as a segment ends on its own: kill again until the state shows it)
    REQUIRE(wait_for([&] {
      const auto state = state_of(dir);
      if (state && state->at("trials")[0].at("failures").get<int>() >= 1) return true;
      for (pid_t pid : train_processes((dir / "trial_00000").string())) ::kill(pid, SIGKILL);
      return false;
    }, std::chrono::seconds(120)));
    // Then kill the tuner itself after the first exploits, mid-run.
    REQUIRE(wait_for([&] { return !read_pbt_log(dir / kPbtLogName).empty() && !train_processes(dir.string()).empty(); },
                     std::chrono::seconds(120)));
    tuner.kill();
  }
  // PR_SET_PDEATHSIG: no trial outlives the tuner.
  CHECK(wait_for([&] { return train_processes(dir.string()).empty(); }, std::chrono::seconds(10)));
  const nlohmann::json before = *state_of(dir);
  CHECK(before.at("finished") == false);
  const auto log_before = read_pbt_log(dir / kPbtLogName);

  const auto resumed = test::run_rlx("tune --resume " + dir.string() + " --quiet");
  INFO(read_file(tmp / "tune1.log") << resumed.out << resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK_THAT(resumed.out, Catch::Contains("resuming 4 trials"));
  check_finished_run(dir);
  const nlohmann::json after = *state_of(dir);
  CHECK(after.at("trials")[0].at("failures") == 1);
  // The exploits logged before the kill are still there, once each, in order.
  const auto log_after = read_pbt_log(dir / kPbtLogName);
  REQUIRE(log_after.size() >= log_before.size());
  for (size_t i = 0; i < log_before.size(); ++i) CHECK(log_after[i] == log_before[i]);
}

TEST_CASE("a SIGTERMed rlx tune stops its trials with checkpoints, exits 6 and resumes with none lost", "[tune][stop]") {
  // 2 FIFO trials of 60 iterations x 512 steps, each iteration ~60 ms of SGD on an idle machine
  // (16 epochs of 64-sample minibatches, 128x128 networks): the signal, sent after 3 iterations,
  // lands seconds before a trial could finish by itself (1 epoch took 0.5 s for all 60 and lost
  // that race on a loaded machine).
  test::TempDir tmp;
  test::write_text(tmp / "fifo.yaml", R"(fifo-test:
  env: CartPole-v1
  algorithm: PPO
  stop: {timesteps_total: 30720}
  config: {num_workers: 0, num_envs_per_worker: 8, rollout_fragment_length: 64, minibatch_size: 64, num_epochs: 16,
           hidden_sizes: [128, 128], checkpoint_freq: 0}
  tune:
    num_samples: 2
    max_concurrent_trials: 2
    param_space: {lr: {loguniform: [1.0e-4, 1.0e-3]}}
)");
  const fs::path dir = tmp / "runs/fifo-test";
  const auto rows_of = [&](const char* trial) {
    const fs::path path = dir / trial / "result.jsonl";
    if (!fs::exists(path)) return int64_t{0};
    const std::string text = read_file(path);
    return static_cast<int64_t>(std::count(text.begin(), text.end(), '\n'));
  };
  ChildProcess tuner({std::string(RLX_BINARY_DIR) + "/rlx", "tune", (tmp / "fifo.yaml").string(), "--output",
                      (tmp / "runs").string(), "--quiet"},
                     tmp / "tune1.log");
  REQUIRE(wait_for([&] { return rows_of("trial_00000") >= 3 && rows_of("trial_00001") >= 3; }, std::chrono::seconds(120)));
  tuner.terminate();
  REQUIRE(wait_for([&] { return tuner.poll().has_value(); }, std::chrono::seconds(60)));
  INFO(read_file(tmp / "tune1.log"));
  CHECK(tuner.poll()->describe() == "exit status 6");
  CHECK_THAT(read_file(tmp / "tune1.log"), Catch::Contains("stopped by SIGTERM; continue with: rlx tune --resume " + dir.string()));
  CHECK(train_processes(dir.string()).empty());
  const nlohmann::json stopped = *state_of(dir);
  CHECK(stopped.at("finished") == false);
  for (const auto& trial : stopped.at("trials")) {
    const std::string name = trial.at("name").get<std::string>();
    INFO(trial.dump());
    // Each running segment got the SIGTERM passed on, finished its iteration and checkpointed it.
    CHECK_THAT(read_file(dir / "logs" / (name + ".log")), Catch::Contains("stopped by SIGTERM at iteration"));
    CHECK(trial.at("status") == "PAUSED");
    CHECK(trial.at("failures") == 0);
    CHECK(trial.at("training_iteration") == rows_of(name.c_str()));
    CHECK(trial.at("checkpoint") == checkpoint_path(dir / name, trial.at("training_iteration").get<int64_t>()).string());
  }
  const auto resumed = test::run_rlx("tune --resume " + dir.string() + " --quiet");
  INFO(resumed.out << resumed.err);
  REQUIRE(resumed.exit_code == 0);
  for (const auto& trial : state_of(dir)->at("trials")) {
    CHECK(trial.at("status") == "TERMINATED");
    std::istringstream rows(read_file(dir / trial.at("name").get<std::string>() / "result.jsonl"));
    int64_t expected = 1;  // one row per iteration: none lost, none repeated
    for (std::string line; std::getline(rows, line);) CHECK(nlohmann::json::parse(line).at("training_iteration") == expected++);
    CHECK(expected == 61);
  }
}

TEST_CASE("rlx tune --resume refuses a structurally wrong experiment_state.json with exit 2, naming file and path",
          "[tune][state]") {
  test::TempDir tmp;
  const fs::path dir = tmp / "runs/asha-test";
  fs::create_directories(dir);
  test::write_text(dir / kTunedExperimentName, R"(asha-test:
  env: CartPole-v1
  algorithm: PPO
  stop: {training_iteration: 4}
  config: {num_workers: 0}
  tune:
    num_samples: 2
    scheduler: {type: asha, grace_period: 1, reduction_factor: 2}
)");
  Trial trial;
  trial.name = "trial_00000";
  nlohmann::json state = {{"format_version", 1}, {"experiment", "asha-test"}, {"finished", false},
                          {"scheduler_state", {{"1", {{"trial_00000", 20.5}}}}}, {"trials", {trial_to_json(trial)}}};
  state["trials"][0]["training_iteration"] = "3";
  test::write_text(dir / kExperimentStateName, state.dump(2));
  auto run = test::run_rlx("tune --resume " + dir.string() + " --quiet");
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, Catch::Contains((dir / kExperimentStateName).string() +
                                      ": trials[0].training_iteration: expected an integer, got \"3\""));
  CHECK_THAT(run.err, !Catch::Contains("json.exception"));
  state["trials"][0]["training_iteration"] = 3;
  state["scheduler_state"]["1"]["trial_00000"] = "high";
  test::write_text(dir / kExperimentStateName, state.dump(2));
  run = test::run_rlx("tune --resume " + dir.string() + " --quiet");
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, Catch::Contains(kExperimentStateName) &&
                          Catch::Contains("scheduler_state.1.trial_00000: expected a number, got \"high\""));
}

TEST_CASE("rlx tune refuses a bad tune: section with file, key and value", "[tune]") {
  test::TempDir tmp;
  std::string yaml = kPbtYaml;
  yaml.replace(yaml.find("perturbation_interval: 384"), 26, "perturbation_interval: -5");
  test::write_text(tmp / "bad.yaml", yaml);
  const auto run = test::run_rlx("tune " + (tmp / "bad.yaml").string() + " --output " + (tmp / "runs").string());
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, Catch::Contains("bad.yaml:20") && Catch::Contains("tune.scheduler.perturbation_interval") &&
                          Catch::Contains("-5") && Catch::Contains("a number > 0"));
}

TEST_CASE("rlx tune with a mistyped env id exits 2 at once with a did-you-mean, before any trial starts", "[tune]") {
  test::TempDir tmp;
  std::string yaml = kPbtYaml;
  yaml.replace(yaml.find("CartPole-v1"), 11, "CartPole-v2");
  test::write_text(tmp / "typo.yaml", yaml);
  const auto run = test::run_rlx("tune " + (tmp / "typo.yaml").string() + " --output " + (tmp / "runs").string());
  INFO(run.out << run.err);
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, Catch::Contains("unknown environment id 'CartPole-v2'") && Catch::Contains("did you mean 'CartPole-v1'"));
  CHECK_FALSE(fs::exists(tmp / "runs"));  // no experiment directory, no trial, no log
  CHECK(train_processes((tmp / "runs").string()).empty());
}

TEST_CASE("rlx tune refuses a missing env plugin with exit status 2 before any trial starts", "[tune]") {
  test::TempDir tmp;
  test::write_text(tmp / "pbt.yaml", kPbtYaml);
  const auto run = test::run_rlx("tune " + (tmp / "pbt.yaml").string() + " --output " + (tmp / "runs").string() +
                                 " --env-plugin " + (tmp / "libmissing.so").string());
  INFO(run.out << run.err);
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, Catch::Contains("env plugin '" + (tmp / "libmissing.so").string() + "': no such file"));
  CHECK_FALSE(fs::exists(tmp / "runs"));
}

TEST_CASE("rlx tune refuses a search-space value the config cannot run with, naming it, before any trial starts", "[tune]") {
  test::TempDir tmp;
  std::string yaml = kPbtYaml;
  // The train batch is 2 envs x 64 steps = 128 samples: a minibatch of 512 cannot run.
  yaml.replace(yaml.find("    seed: 3\n"), 12, "    seed: 3\n    param_space:\n      minibatch_size: {grid_search: [64, 512]}\n");
  test::write_text(tmp / "space.yaml", yaml);
  const auto run = test::run_rlx("tune " + (tmp / "space.yaml").string() + " --output " + (tmp / "runs").string());
  INFO(run.out << run.err);
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, Catch::Contains("minibatch_size 512") && Catch::Contains("tune.param_space.minibatch_size") &&
                          Catch::Contains("larger than the train batch of 128"));
  CHECK_FALSE(fs::exists(tmp / "runs"));
}

// 2 Pendulum SAC trials, PBT over SAC's own critic_lr and utd_ratio: every exploit's keys reach
// the trial, whose checkpoints are SAC's.
const char* kSacTuneYaml = R"(sac-tune:
  env: Pendulum-v1
  algorithm: SAC
  stop: {timesteps_total: 3000}
  config:
    num_workers: 0
    hidden_sizes: [16, 16]
    batch_size: 32
    learning_starts: 200
    checkpoint_freq: 0
  tune:
    num_samples: 2
    max_concurrent_trials: 2
    seed: 5
    scheduler:
      type: pbt
      time_attr: timesteps_total
      perturbation_interval: 1000
      quantile_fraction: 0.5
      synch: true
      hyperparam_mutations:
        critic_lr: {loguniform: [1.0e-4, 1.0e-2]}
        utd_ratio: [0.5, 1.0]
)";

TEST_CASE("rlx tune runs PBT on SAC, its own keys included", "[tune][sac]") {
  test::TempDir tmp;
  test::write_text(tmp / "sac.yaml", kSacTuneYaml);
  const auto run = test::run_rlx("tune " + (tmp / "sac.yaml").string() + " --output " + (tmp / "runs").string());
  INFO(run.out << run.err);
  REQUIRE(run.exit_code == 0);
  const fs::path dir = tmp / "runs/sac-tune";
  for (const char* trial : {"trial_00000", "trial_00001"}) {
    const nlohmann::json result = read_json(dir / trial / "result.json");
    CHECK(result.at("timesteps_total") == 3000);
    CHECK(result.at("learner").at("num_gradient_steps").get<int64_t>() > 0);
  }
  const auto exploits = read_pbt_log(dir / kPbtLogName);
  REQUIRE(!exploits.empty());
  for (const auto& entry : exploits) {
    INFO(entry.dump());
    const Checkpoint last = read_checkpoint_dir(*latest_checkpoint(dir / entry.at("trial").get<std::string>()));
    CHECK(last.manifest.at("experiment").at("algorithm") == "SAC");
    CHECK(last.files.count("sac_learner.bin") == 1);
    CHECK(entry.at("new_params").contains("critic_lr"));
  }
}

}  // namespace rlx
