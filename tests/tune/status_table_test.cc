// The one rule for the best trial (the metric at each trial's last checkpoint) on hand-made
// trials: the status table's metric column, its "best:" line, trials.csv and best_trial_index
// agree, whatever a trial scored earlier or is scoring live.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>

#include "tune/status_table.h"

namespace rlx {
namespace {

Trial trial_at(const std::string& name, TrialStatus status, std::optional<double> at_checkpoint, std::optional<double> latest,
               std::optional<double> best_ever) {
  Trial t;
  t.name = name;
  t.status = status;
  t.iteration = 10;
  t.timesteps = 1000;
  t.metric = latest;
  t.best_metric = best_ever;
  if (at_checkpoint) {
    t.checkpoint = "/runs/x/" + name + "/checkpoints/checkpoint_000010";
    t.checkpoint_metric = at_checkpoint;
  }
  t.params = {{"lr", 0.001}};
  return t;
}

// The hand-made population: "early" once scored 90 but ends at 50; "steady" ends at 70;
// "running" has 60 at its last checkpoint and is live at 95; "new" has no value yet.
std::vector<Trial> population() {
  return {trial_at("early", TrialStatus::kTerminated, 50, 50, 90), trial_at("steady", TrialStatus::kTerminated, 70, 70, 70),
          trial_at("running", TrialStatus::kRunning, 60, 60, 60), trial_at("new", TrialStatus::kPending, {}, {}, {})};
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

struct PrintedTable {
  std::string head;                                   // the "== rlx tune: ..." line
  std::map<std::string, std::string> metric, latest;  // trial -> cell
};

PrintedTable print_table(const StatusTable& table, const std::vector<Trial>& trials, const TuneSpec& spec) {
  std::ostringstream out;
  table.print(out, trials, spec, "");
  std::istringstream lines(out.str());
  PrintedTable printed;
  std::getline(lines, printed.head);
  std::string line;
  std::getline(lines, line);
  const std::vector<std::string> header = words(line);
  const auto column = [&](const std::string& name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  const size_t metric = column(spec.metric), latest = column("latest");
  REQUIRE(metric < header.size());
  REQUIRE(latest < header.size());
  while (std::getline(lines, line)) {
    const std::vector<std::string> cells = words(line);
    REQUIRE(cells.size() == header.size());
    printed.metric[cells[0]] = cells[metric];
    printed.latest[cells[0]] = cells[latest];
  }
  return printed;
}

}  // namespace

TEST_CASE("the best trial is the one with the best metric at its last checkpoint, as the table's metric column shows",
          "[tune]") {
  const std::vector<Trial> trials = population();
  TuneSpec spec;
  StatusTable table;
  table.set_live("running", {{"training_iteration", 12}, {"timesteps_total", 1200}}, 95.0);

  // Not "early" (best ever 90), not "running" (live 95): "steady", 70 at its last checkpoint.
  REQUIRE(best_trial_index(trials, "max") == std::optional<size_t>(1));
  const PrintedTable printed = print_table(table, trials, spec);
  CHECK(printed.metric.at("early") == "50.0");
  CHECK(printed.metric.at("steady") == "70.0");
  CHECK(printed.metric.at("running") == "60.0");
  CHECK(printed.metric.at("new") == "-");
  CHECK(printed.latest.at("running") == "95.0");  // the live value has its own column
  CHECK_THAT(printed.head, Catch::Contains("best: steady (episode_return_mean 70.0 at its last checkpoint)"));

  // The largest value of the metric column is the chosen best trial's.
  std::string top;
  for (const auto& [name, cell] : printed.metric) {
    if (cell != "-" && (top.empty() || std::stod(cell) > std::stod(printed.metric.at(top)))) top = name;
  }
  CHECK(top == "steady");

  // trials.csv's metric column is the same value.
  const std::string csv = trials_csv(trials, spec.metric);
  CHECK_THAT(csv, Catch::StartsWith("trial,status,training_iteration,timesteps_total,time_total_s,episode_return_mean,"
                                    "latest_episode_return_mean,best_episode_return_mean,"));
  CHECK_THAT(csv, Catch::Contains("\nearly,TERMINATED,10,1000,0.0,50.0,50.0,90.0,"));
}

TEST_CASE("with mode min the best trial has the lowest metric at its last checkpoint, and the table says so", "[tune]") {
  const std::vector<Trial> trials = population();
  TuneSpec spec;
  spec.mode = "min";
  spec.metric = "loss";
  REQUIRE(best_trial_index(trials, "min") == std::optional<size_t>(0));
  CHECK_THAT(print_table(StatusTable(), trials, spec).head, Catch::Contains("best: early (loss 50.0 at its last checkpoint)"));
}

TEST_CASE("no trial is best while none has a checkpoint with a value", "[tune]") {
  std::vector<Trial> trials = {trial_at("a", TrialStatus::kRunning, {}, 40, 40), trial_at("b", TrialStatus::kPending, {}, {}, {})};
  CHECK_FALSE(best_trial_index(trials, "max"));
  CHECK_THAT(print_table(StatusTable(), trials, TuneSpec()).head, !Catch::Contains("best:"));
}

TEST_CASE("the table rounds metrics and float params to 4 significant digits, trials.csv keeps every digit", "[tune]") {
  std::vector<Trial> trials = {trial_at("a", TrialStatus::kTerminated, 0.8378000034019353, 12345.6, 12345.6)};
  trials[0].params = {{"lr", 0.000314159265}};
  const std::string printed = [&] {
    std::ostringstream out;
    StatusTable().print(out, trials, TuneSpec(), "");
    return out.str();
  }();
  CHECK_THAT(printed, Catch::Contains(" 0.8378 ") && Catch::Contains(" 12346.0") && Catch::Contains(" 0.0003142 "));
  CHECK_THAT(printed, !Catch::Contains("0.83780000") && !Catch::Contains("e+04"));
  CHECK_THAT(trials_csv(trials, "episode_return_mean"), Catch::Contains(",0.8378000034019353,12345.6,12345.6,"));
}

}  // namespace rlx
