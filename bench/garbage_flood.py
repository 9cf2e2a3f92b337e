#!/usr/bin/env python3
"""Floods a training run's worker port with random bytes and reports what it cost the learner.

Starts `RLX train EXPERIMENT --bind tcp://127.0.0.1:PORT` (a long budget), lets it train for
--warmup seconds, floods the port from --connections raw TCP connections for --seconds, then lets
it train --after seconds more. Prints key=value lines: the learner's resident memory before,
at its peak during the flood and after, and training iterations per second before, during and
after (from progress.csv). Run it against two builds to compare them side by side:

  python3 bench/garbage_flood.py --rlx build/rlx
"""
import argparse
import csv
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time


def rss_bytes(pid):
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def iterations(progress):
    try:
        with open(progress) as f:
            return sum(1 for _ in csv.DictReader(f))
    except FileNotFoundError:
        return 0


def zmtp_prelude():
    """A ZMTP 3.0 NULL greeting and READY as a DEALER, then a frame header announcing 200 MB."""
    greeting = b"\xff" + b"\x00" * 8 + b"\x7f" + bytes([3, 0]) + b"NULL".ljust(20, b"\x00") + b"\x00" + b"\x00" * 31
    name, value = b"Socket-Type", b"DEALER"
    body = bytes([5]) + b"READY" + bytes([len(name)]) + name + len(value).to_bytes(4, "big") + value
    ready = bytes([0x04, len(body)]) + body
    frame_header = bytes([0x02]) + (200 << 20).to_bytes(8, "big")
    return greeting + ready + frame_header


def flood(port, stop, sent, mode):
    rng = random.Random(1)
    while not stop.is_set():
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                if mode == "zmtp":
                    s.sendall(zmtp_prelude())
                for _ in range(64 if mode == "random" else 3200):
                    if stop.is_set():
                        break
                    s.sendall(rng.randbytes(64 * 1024))
                    sent[0] += 64 * 1024
        except OSError:
            pass


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rlx", default="build/rlx")
    parser.add_argument("--experiment", default="experiments/cartpole-ppo.yaml")
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--mode", choices=["zmtp", "random"], default="zmtp",
                        help="zmtp: a valid greeting, then random bytes as one 200 MB frame; random: bytes only")
    parser.add_argument("--warmup", type=float, default=5)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--after", type=float, default=10)
    args = parser.parse_args()

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tempfile.mkdtemp(prefix="rlx-flood-")
    run = subprocess.Popen([args.rlx, "train", args.experiment, "--bind", f"tcp://127.0.0.1:{port}", "--output", out,
                            "--trial-name", "t", "-q", "--set", "stop.timesteps_total=100000000",
                            "--set", "stop.episode_return_mean=1000000"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    progress = os.path.join(out, os.path.basename(args.experiment).rsplit(".", 1)[0], "t", "progress.csv")
    try:
        time.sleep(args.warmup)
        rss_before = rss_bytes(run.pid)
        i0 = iterations(progress)
        stop, sent = threading.Event(), [0]
        threads = [threading.Thread(target=flood, args=(port, stop, sent, args.mode)) for _ in range(args.connections)]
        for t in threads:
            t.start()
        start, peak = time.time(), rss_before
        while time.time() - start < args.seconds and run.poll() is None:
            peak = max(peak, rss_bytes(run.pid))
            time.sleep(0.2)
        stop.set()
        for t in threads:
            t.join()
        i1 = iterations(progress)
        time.sleep(args.after)
        i2 = iterations(progress)
        alive = run.poll() is None
        rss_after = rss_bytes(run.pid) if alive else 0
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait()
    print(f"rlx={args.rlx}")
    print(f"mode={args.mode}")
    print(f"garbage_mib={sent[0] >> 20}")
    print(f"rss_before_mib={rss_before >> 20}")
    print(f"rss_peak_during_mib={peak >> 20}")
    print(f"rss_after_mib={rss_after >> 20}")
    print(f"iterations_per_s_before={i0 / args.warmup:.2f}")
    print(f"iterations_per_s_during={(i1 - i0) / args.seconds:.2f}")
    print(f"iterations_per_s_after={(i2 - i1) / args.after:.2f}")
    print(f"survived={int(alive)}")


if __name__ == "__main__":
    sys.exit(main())
