#!/usr/bin/env python3
"""The soak run (started by bench/soak.sh, inside its network namespace, as root): `rlx tune`
of bench/soak-appo.yaml for DURATION seconds while faults come on a schedule, then a report.

Faults (a seeded schedule; each is logged in OUT/faults.jsonl with its time):
  - every --worker-kill-every s: SIGKILL a random rollout worker (its trial restarts it);
  - every --rank-kill-every s: SIGKILL a random learner rank (its trial fails; the tuner
    restarts it from its last checkpoint);
  - once, at 30 %: the output filesystem filled for --disk-full-s s, then freed;
  - once, at 50 %: SIGKILL the tuner (its trials die with it), then `rlx tune --resume`;
  - once, at 70 %: the link cut: the namespace's loopback, which carries the learner ranks'
    collectives and store, down for --cut-s s.
At the end the tuner gets SIGTERM (its trials checkpoint and stop), and the report checks that
nothing was lost: every result row parses and the iterations run 1..N unbroken, every row's
fragments add up (received = consumed + queued + dropped + refused) and its steps are the consumed
fragments', every checkpoint verifies (manifest digest, file digests) and the last of each trial
evaluates, no dead run's temp directory survives the next start, and the memory of the process
tree stayed flat. One JSON line per check, then the verdict line.
"""
import argparse
import glob
import hashlib
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import time


def log_line(path, record):
    with open(path, "a") as out:
        out.write(json.dumps(record) + "\n")


def descendants(root):
    """{pid: cmdline} of root and everything below it."""
    children = {}
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.split("/")[2]))
        except (OSError, IndexError, ValueError):
            continue
    tree, todo = {}, [root]
    while todo:
        pid = todo.pop()
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                tree[pid] = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        todo.extend(children.get(pid, []))
    return tree


def kind_of(cmdline):
    words = cmdline.split()
    if len(words) < 2:
        return "other"
    return {"worker": "worker", "learner": "rank", "train": "trial", "tune": "tuner"}.get(words[1], "other")


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Soak:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.faults = os.path.join(args.work, "faults.jsonl")
        self.memory = os.path.join(args.work, "memory.jsonl")
        self.start = time.time()
        self.tuner = None
        self.tuner_runs = 0

    def now(self):
        return time.time() - self.start

    def fault(self, what, **fields):
        log_line(self.faults, {"t": round(self.now(), 1), "fault": what, **fields})

    def start_tuner(self, resume):
        self.tuner_runs += 1
        command = [self.args.rlx, "tune"]
        command += ["--resume", os.path.join(self.args.out, "soak-appo")] if resume else [self.args.experiment, "--output", self.args.out]
        command.append("-q")
        out = open(os.path.join(self.args.work, f"tune-{self.tuner_runs}.log"), "w")
        self.tuner = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)

    def kill_random(self, kind):
        pids = [pid for pid, cmd in descendants(self.tuner.pid).items() if kind_of(cmd) == kind]
        if not pids:
            return
        pid = self.rng.choice(pids)
        try:
            os.kill(pid, signal.SIGKILL)
            self.fault(f"kill_{kind}", pid=pid)
        except ProcessLookupError:
            pass

    def fill_disk(self):
        filler = os.path.join(self.args.out, "soak-filler")
        written = 0
        try:
            with open(filler, "wb") as f:
                block = b"\0" * (1 << 20)
                while True:
                    f.write(block)
                    f.flush()
                    written += len(block)
        except OSError:
            pass
        self.fault("disk_full", filled_bytes=written, for_s=self.args.disk_full_s)
        time.sleep(self.args.disk_full_s)
        os.remove(filler)
        self.fault("disk_freed")

    def cut_link(self):
        subprocess.run(["ip", "link", "set", "lo", "down"], check=True)
        self.fault("link_cut", for_s=self.args.cut_s)
        time.sleep(self.args.cut_s)
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
        self.fault("link_restored")

    def kill_tuner(self):
        self.tuner.kill()
        self.tuner.wait()
        self.fault("kill_tuner", pid=self.tuner.pid)
        time.sleep(2)  # its trials die with it (PDEATHSIG)
        self.start_tuner(resume=True)
        self.fault("tuner_resumed", pid=self.tuner.pid)

    def sample_memory(self):
        totals = {}
        for pid, cmd in descendants(self.tuner.pid).items():
            kind = kind_of(cmd)
            totals.setdefault(kind, []).append(rss_kib(pid))
        record = {"t": round(self.now(), 1), "total_mib": round(sum(sum(v) for v in totals.values()) / 1024, 1)}
        for kind, values in totals.items():
            record[kind] = {"n": len(values), "mib": round(sum(values) / 1024, 1)}
        log_line(self.memory, record)

    def run(self):
        a = self.args
        once = {"disk": 0.3 * a.duration, "tuner": 0.5 * a.duration, "cut": 0.7 * a.duration}
        next_worker, next_rank, next_sample = a.worker_kill_every, a.rank_kill_every, 0.0
        self.start_tuner(resume=False)
        while self.now() < a.duration:
            time.sleep(1)
            t = self.now()
            if self.tuner.poll() is not None:
                self.fault("tuner_exited", status=self.tuner.returncode)
                return
            if t >= next_sample:
                self.sample_memory()
                next_sample += a.sample_every
            if t >= next_worker:
                self.kill_random("worker")
                next_worker += a.worker_kill_every
            if t >= next_rank:
                self.kill_random("rank")
                next_rank += a.rank_kill_every
            for what, at in list(once.items()):
                if t >= at:
                    del once[what]
                    {"disk": self.fill_disk, "tuner": self.kill_tuner, "cut": self.cut_link}[what]()
        self.tuner.send_signal(signal.SIGTERM)
        try:
            status = self.tuner.wait(timeout=600)
        except subprocess.TimeoutExpired:
            self.tuner.kill()
            status = "killed after 600 s"
        self.fault("tuner_stopped", status=status)


# ---- the report ----

def check(name, ok, **figures):
    print(json.dumps({"check": name, "ok": bool(ok), **figures}), flush=True)
    return bool(ok)


def results_untorn(trial):
    rows, problems = [], []
    for n, line in enumerate(open(os.path.join(trial, "result.jsonl")), 1):
        try:
            rows.append(json.loads(line))
        except ValueError:
            problems.append(f"line {n} does not parse")
    iterations = [r["training_iteration"] for r in rows]
    if iterations != list(range(1, len(rows) + 1)):
        problems.append("iterations are not 1..N unbroken")
    steps = [r["timesteps_total"] for r in rows]
    if any(b <= a for a, b in zip(steps, steps[1:])):
        problems.append("timesteps_total does not grow")
    return rows, problems


def fragments_accounted(rows, fragment_steps):
    bad = []
    for r in rows:
        s = r["sampler"]
        ended = (s["fragments_dropped_stale"] + s["fragments_dropped_other"] + s["fragments_dropped_at_stop"] +
                 s["fragments_refused"] + s["fragments_queued"])
        if s["fragments_received"] != s["fragments_consumed"] + ended:
            bad.append(r["training_iteration"])
        elif r["timesteps_total"] != s["fragments_consumed"] * fragment_steps:
            bad.append(r["training_iteration"])
    return bad


def checkpoint_problems(path):
    try:
        manifest_bytes = open(os.path.join(path, "checkpoint.json"), "rb").read()
        listed = open(os.path.join(path, "checkpoint.json.sha256")).read().split()[0]
        if hashlib.sha256(manifest_bytes).hexdigest() != listed:
            return "checkpoint.json does not match its .sha256"
        for name, entry in json.loads(manifest_bytes)["files"].items():
            data = open(os.path.join(path, name), "rb").read()
            if len(data) != entry["size"] or hashlib.sha256(data).hexdigest() != entry["sha256"]:
                return f"{name} does not match its listing"
    except (OSError, ValueError, KeyError, IndexError) as error:
        return str(error)
    return None


def dead_run_dirs(parent):
    """rlx-run-* directories in parent whose owner process is gone."""
    dead = []
    for d in glob.glob(os.path.join(parent, "rlx-run-*")):
        try:
            pid, started = open(os.path.join(d, "owner")).read().split()
            with open(f"/proc/{pid}/stat") as f:
                alive = f.read().rsplit(")", 1)[1].split()[19] == started
        except (OSError, ValueError, IndexError):
            alive = False
        if not alive and os.path.isfile(os.path.join(d, "owner")):
            dead.append(d)
    return dead


def report(args):
    ok = True
    trials = sorted(glob.glob(os.path.join(args.out, "soak-appo", "trial_*")))
    faults = [json.loads(l) for l in open(os.path.join(args.work, "faults.jsonl"))] if os.path.exists(
        os.path.join(args.work, "faults.jsonl")) else []
    counts = {}
    for f in faults:
        counts[f["fault"]] = counts.get(f["fault"], 0) + 1
    ok &= check("faults_applied", all(counts.get(k) for k in ("kill_worker", "kill_rank", "disk_full", "kill_tuner", "link_cut")),
                counts=counts)
    stopped = [f for f in faults if f["fault"] == "tuner_stopped"]
    ok &= check("tuner_stopped_cleanly", stopped and stopped[-1]["status"] == 6, status=stopped[-1]["status"] if stopped else None)
    for trial in trials:
        name = os.path.basename(trial)
        rows, problems = results_untorn(trial)
        ok &= check("results_untorn", rows and not problems, trial=name, rows=len(rows), problems=problems)
        if not rows:
            continue
        bad = fragments_accounted(rows, args.fragment_steps)
        last = rows[-1]
        s = last["sampler"]
        ok &= check("fragments_accounted", not bad, trial=name, rows_not_adding_up=bad[:10],
                    fragments_received=s["fragments_received"], fragments_consumed=s["fragments_consumed"],
                    fragments_dropped_stale=s["fragments_dropped_stale"],
                    fragments_dropped_at_stop=s["fragments_dropped_at_stop"], worker_restarts=s["worker_restarts"],
                    workers_failed=s["workers_failed"], attempts=last.get("attempt"), iterations=last["training_iteration"],
                    timesteps_total=last["timesteps_total"], episode_return_mean=last["episode_return_mean"])
        checkpoints = sorted(glob.glob(os.path.join(trial, "checkpoints", "checkpoint_*")))
        broken = {os.path.basename(c): p for c in checkpoints if (p := checkpoint_problems(c))}
        evaluated = subprocess.run([args.rlx, "evaluate", checkpoints[-1], "--episodes", "2"], capture_output=True, text=True,
                                   timeout=300) if checkpoints else None
        ok &= check("checkpoints_valid", checkpoints and not broken and evaluated.returncode == 0, trial=name,
                    checkpoints=len(checkpoints), broken=broken,
                    last_evaluates=evaluated.stdout.strip().splitlines()[-1:] if evaluated else None)
    dead_before = dead_run_dirs("/tmp")
    subprocess.run([args.rlx, "train", args.experiment, "--workers", "0", "--set", "num_learners=1", "--set",
                    "stop.training_iteration=1", "--output", os.path.join(args.work, "sweep"), "-q"], capture_output=True, timeout=300)
    dead_after = dead_run_dirs("/tmp")
    ok &= check("nothing_left_behind", not dead_after, dead_run_dirs_before_next_start=len(dead_before),
                dead_run_dirs_after_it=len(dead_after))
    samples = [json.loads(l) for l in open(os.path.join(args.work, "memory.jsonl"))]
    steady = [s for s in samples if s["t"] >= 0.1 * args.duration]
    quarter = max(1, len(steady) // 4)
    first = statistics.median(s["total_mib"] for s in steady[:quarter]) if steady else 0
    final = statistics.median(s["total_mib"] for s in steady[-quarter:]) if steady else 0
    ok &= check("memory_flat", steady and final <= 1.25 * first, first_quarter_median_mib=first, last_quarter_median_mib=final,
                ratio=round(final / first, 3) if first else None, samples=len(samples),
                peak_mib=max((s["total_mib"] for s in samples), default=0))
    print(json.dumps({"bench": "soak", "duration_s": args.duration, "workers": args.workers, "trials": len(trials),
                      "nothing_lost": bool(ok), "wall_s": round(time.time() - args.started, 1)}), flush=True)
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rlx", required=True)
    p.add_argument("--experiment", required=True, help="the soak's experiment file (workers set)")
    p.add_argument("--out", required=True, help="the runs' output folder (on the filesystem the soak fills)")
    p.add_argument("--work", required=True, help="logs and samples of the soak itself")
    p.add_argument("--duration", type=float, default=7200)
    p.add_argument("--workers", type=int, default=64)
    p.add_argument("--worker-kill-every", type=float, default=60)
    p.add_argument("--rank-kill-every", type=float, default=1200)
    p.add_argument("--disk-full-s", type=float, default=60)
    p.add_argument("--cut-s", type=float, default=30)
    p.add_argument("--sample-every", type=float, default=30)
    p.add_argument("--fragment-steps", type=int, default=128, help="env steps per fragment (envs x fragment length)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    args.started = time.time()
    Soak(args).run()
    sys.exit(0 if report(args) else 1)


if __name__ == "__main__":
    main()
