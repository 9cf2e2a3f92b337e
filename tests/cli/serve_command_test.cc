// `rlx serve TRIAL` as a user runs it: curl and Python's urllib get the actions `rlx evaluate`
// takes, the trial's next checkpoint is swapped in under load without a failed request, the
// ZeroMQ endpoint answers, and SIGTERM drains and exits 0.
#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "policy_trace.h"
#include "run_rlx.h"

namespace fs = std::filesystem;
using rlx::test::read_text_file;
using rlx::test::run_rlx;
using rlx::test::start_rlx;
using rlx::test::wait_for;

namespace {

// Runs shell text and returns its standard output; the command must succeed.
std::string shell_output(const std::string& command) {
  const std::string out_file = command.substr(0, 0) + std::string(RLX_BINARY_DIR) + "/tests/serve_shell_" + std::to_string(::getpid());
  const int status = std::system((command + " > " + out_file).c_str());
  const std::string out = read_text_file(out_file);
  fs::remove(out_file);
  INFO(command << "\n" << out);
  REQUIRE(status == 0);
  return out;
}

std::string python_client(const std::string& args) {
  return shell_output(std::string(RLX_SYSTEM_PYTHON) + " " + RLX_SOURCE_DIR + "/tests/cli/serve_client.py " + args);
}

}  // namespace

TEST_CASE("rlx serve of a trial answers curl and urllib as rlx evaluate acts and swaps in its next checkpoint under load",
          "[cli][serve]") {
  const std::string out = rlx::test::temp_dir("serve_trial");
  const auto train = run_rlx("train " + std::string(RLX_SOURCE_DIR) +
                             "/experiments/cartpole-ppo.yaml --set num_workers=0 --set checkpoint_freq=10 "
                             "--set stop.timesteps_total=31000 --seed 0 --trial-name t --output " + out + " -q");
  INFO(train.out << train.err);
  REQUIRE((train.exit_code == 0 || train.exit_code == 3));
  const fs::path trial = fs::path(out) / "cartpole-ppo" / "t";
  const fs::path newest = rlx::test::last_checkpoint(out, "cartpole-ppo");
  REQUIRE(fs::exists(newest));
  // Held back: the run's last checkpoint arrives later, while the server is under load.
  const fs::path held = fs::path(out) / newest.filename();
  fs::rename(newest, held);

  const auto evaluated = run_rlx("evaluate " + trial.string() + " --deterministic --episodes 2 --seed 3 --trace " + out + "/trace.jsonl");
  INFO(evaluated.err);
  REQUIRE(evaluated.exit_code == 0);
  const std::vector<nlohmann::json> steps = rlx::test::trace_steps(out + "/trace.jsonl");
  REQUIRE(steps.size() > 20);

  const fs::path ready = fs::path(out) / "ready.json";
  auto server = start_rlx({"serve", trial.string(), "--port", "0", "--zmq-port", "0", "--ready-file", ready.string(),
                           "--watch-interval-ms", "100"},
                          fs::path(out) / "serve.log");
  INFO(read_text_file(out + "/serve.log"));
  REQUIRE(wait_for([&] { return fs::exists(ready) || server->poll().has_value(); }, std::chrono::seconds(60)));
  REQUIRE(fs::exists(ready));
  const nlohmann::json ports = nlohmann::json::parse(read_text_file(ready.string()));
  const std::string base = "http://127.0.0.1:" + std::to_string(ports.at("http_port").get<int>());
  const std::string act = base + "/v1/policies/t/act";

  // curl, as in docs/serve.md, on the first steps of the trace.
  for (size_t i = 0; i < 5; ++i) {
    const std::string body = nlohmann::json{{"observation", steps[i].at("obs")}}.dump();
    const nlohmann::json answer = nlohmann::json::parse(shell_output("curl -sS --fail-with-body -H 'Content-Type: application/json' -d '" + body + "' " + act));
    CHECK(answer.at("action") == steps[i].at("action"));
    CHECK(answer.at("version") == 1);
  }
  // Python's urllib on every step of both episodes.
  const nlohmann::json checked = nlohmann::json::parse(python_client("check-trace " + act + " " + out + "/trace.jsonl"));
  INFO(checked.dump());
  CHECK(checked.at("steps") == steps.size());
  CHECK(checked.at("mismatched") == 0);

  // The run's last checkpoint lands (an atomic rename, as rlx train writes checkpoints) while
  // 4 keep-alive clients send requests, until 0.5 s after version 2 answers (60 s at most: the
  // restore may be slow on a busy machine).
  const std::string load_out = out + "/load.json";
  const std::string load = std::string(RLX_SYSTEM_PYTHON) + " " + RLX_SOURCE_DIR + "/tests/cli/serve_client.py load " + act +
                           " 60 4 2 > " + load_out + " &";
  REQUIRE(std::system(load.c_str()) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  fs::rename(held, newest);
  REQUIRE(wait_for([&] { return !read_text_file(load_out).empty(); }, std::chrono::seconds(90)));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const nlohmann::json loaded = nlohmann::json::parse(read_text_file(load_out));
  INFO(loaded.dump());
  CHECK(loaded.at("failed") == 0);
  CHECK(loaded.at("statuses").size() == 1);
  CHECK(loaded.at("statuses").at("200") == loaded.at("requests"));
  CHECK(loaded.at("versions").contains("1"));
  CHECK(loaded.at("versions").contains("2"));
  const nlohmann::json policies = nlohmann::json::parse(shell_output("curl -sS " + base + "/v1/policies"));
  CHECK(policies.at("policies").at(0).at("checkpoint") == newest.filename().string());
  CHECK(policies.at("policies").at(0).at("version") == 2);
  CHECK_THAT(shell_output("curl -sS " + base + "/metrics"), Catch::Contains("rlx_serve_reloads_total{policy=\"t\",outcome=\"swapped\"} 1"));

  server->terminate();  // SIGTERM: drain, exit 0
  REQUIRE(wait_for([&] { return server->poll().has_value(); }, std::chrono::seconds(30)));
  CHECK(server->poll()->clean());
  CHECK_THAT(read_text_file(out + "/serve.log"), Catch::Contains("stopped by SIGTERM"));
}

TEST_CASE("rlx serve refuses a remote address without --allow-remote and a token, and names a bad MODEL", "[cli][serve][errors]") {
  const std::string out = rlx::test::temp_dir("serve_refusals");
  const auto missing = run_rlx("serve " + out + "/nothing.rlxp");
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.err, Catch::Contains("nothing.rlxp: no such file"));
  std::system(("echo 'not a policy' > " + out + "/bad.rlxp").c_str());
  const auto bad = run_rlx("serve " + out + "/bad.rlxp --port 0");
  CHECK(bad.exit_code != 0);
  CHECK_THAT(bad.err, Catch::Contains("bad.rlxp"));
  const auto remote = run_rlx("serve " + out + "/bad.rlxp --host 0.0.0.0");
  CHECK(remote.exit_code == 2);
  CHECK_THAT(remote.err, Catch::Contains("--allow-remote"));
  std::system(("printf 'short' > " + out + "/token && chmod 644 " + out + "/token").c_str());
  const auto open_token = run_rlx("serve " + out + "/bad.rlxp --host 0.0.0.0 --allow-remote --token-file " + out + "/token");
  CHECK(open_token.exit_code == 2);
  CHECK_THAT(open_token.err, Catch::Contains("chmod 600"));
}

TEST_CASE("rlx serve of a policy file runs in rlx itself with no LibTorch loaded", "[cli][serve]") {
  const std::string out = rlx::test::temp_dir("serve_light");
  const std::string policy = rlx::test::train_export_trace(out, "cartpole-ppo.yaml", "--set num_workers=0", 1);
  const fs::path ready = fs::path(out) / "ready.json";
  auto server = start_rlx({"serve", "cart=" + policy, "--port", "0", "--ready-file", ready.string()}, fs::path(out) / "serve.log");
  INFO(read_text_file(out + "/serve.log"));
  REQUIRE(wait_for([&] { return fs::exists(ready) || server->poll().has_value(); }, std::chrono::seconds(30)));
  REQUIRE(fs::exists(ready));
  const std::string maps = read_text_file("/proc/" + std::to_string(server->pid()) + "/maps");
  CHECK(fs::read_symlink("/proc/" + std::to_string(server->pid()) + "/exe").filename() == "rlx");
  CHECK(maps.find("libtorch") == std::string::npos);
  const int port = nlohmann::json::parse(read_text_file(ready.string())).at("http_port").get<int>();
  const std::vector<nlohmann::json> steps = rlx::test::trace_steps(out + "/trace.jsonl");
  const nlohmann::json answer = nlohmann::json::parse(shell_output(
      "curl -sS -d '" + nlohmann::json{{"observation", steps.at(0).at("obs")}}.dump() + "' http://127.0.0.1:" + std::to_string(port) +
      "/v1/policies/cart/act"));
  CHECK(answer.at("action") == steps.at(0).at("action"));
  server->terminate();
  REQUIRE(wait_for([&] { return server->poll().has_value(); }, std::chrono::seconds(30)));
  CHECK(server->poll()->clean());
}

TEST_CASE("rlx serve serves the policies of a multi-agent trial by name and asks for one when none is named", "[cli][serve]") {
  const std::string out = rlx::test::temp_dir("serve_multi_agent");
  const auto train = run_rlx("train " + std::string(RLX_SOURCE_DIR) +
                             "/experiments/multi-agent-cartpole-4-policies-ppo.yaml --set stop.timesteps_total=2000 --seed 0 "
                             "--trial-name t --output " + out + " -q");
  INFO(train.out << train.err);
  REQUIRE((train.exit_code == 0 || train.exit_code == 3));
  const std::string trial = out + "/multi-agent-cartpole-4-policies-ppo/t";
  const auto unnamed = run_rlx("serve " + trial + " --port 0");
  CHECK(unnamed.exit_code == 2);
  CHECK_THAT(unnamed.err, Catch::Contains("multi-agent checkpoint of the policies p0, p1, p2, p3") && Catch::Contains("PATH#POLICY"));

  const auto exported = run_rlx("export " + trial + " --policy p2 -o " + out + "/p2.rlxp");
  REQUIRE(exported.exit_code == 0);
  const fs::path ready = fs::path(out) / "ready.json";
  auto server = start_rlx({"serve", "left=" + trial + "#p0", trial + "#p2", "--port", "0", "--ready-file", ready.string()},
                          fs::path(out) / "serve.log");
  INFO(read_text_file(out + "/serve.log"));
  REQUIRE(wait_for([&] { return fs::exists(ready) || server->poll().has_value(); }, std::chrono::seconds(60)));
  REQUIRE(fs::exists(ready));
  const int port = nlohmann::json::parse(read_text_file(ready.string())).at("http_port").get<int>();
  const nlohmann::json listed = nlohmann::json::parse(shell_output("curl -sS http://127.0.0.1:" + std::to_string(port) + "/v1/policies"));
  REQUIRE(listed.at("policies").size() == 2);
  CHECK(listed.at("policies").at(0).at("name") == "left");
  CHECK(listed.at("policies").at(1).at("name") == "p2");
  CHECK(listed.at("policies").at(1).at("source").at("policy") == "p2");
  // p2 served from the trial answers as its exported file does, on observations of every sign.
  const std::string answers = shell_output(std::string(RLX_SYSTEM_PYTHON) + " -c \"import sys, json, urllib.request; sys.path.insert(0, '" +
                                           RLX_SOURCE_DIR + "/python'); from rlx_policy import Policy; p = Policy('" + out +
                                           "/p2.rlxp'); bad = 0\nfor i in range(50):\n o = [((i * 7 + k * 3) % 11 - 5) / 10.0 for k in range(4)]\n"
                                           " r = urllib.request.urlopen(urllib.request.Request('http://127.0.0.1:" + std::to_string(port) +
                                           "/v1/policies/p2/act', json.dumps({'observation': o}).encode()))\n"
                                           " bad += json.loads(r.read())['action'] != p.act(o)\nprint(bad)\"");
  CHECK(std::stoi(answers) == 0);
  server->terminate();
  REQUIRE(wait_for([&] { return server->poll().has_value(); }, std::chrono::seconds(30)));
  CHECK(server->poll()->clean());
}
