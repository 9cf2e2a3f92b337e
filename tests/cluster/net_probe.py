"""net_probe.py: the measurements of network_shaping_test.sh, one JSON line each on stdout.

  net_probe.py udp-echo PORT SECONDS            answer every datagram with itself, for SECONDS
  net_probe.py udp-probe HOST PORT COUNT GAP_MS   COUNT numbered probes GAP_MS apart (after the
      echo first answers): {"sent", "received", "lost_pct", "rtt_ms": {min, median, mean, stdev,
      max}, "longest_silence_ms" (between two answers), "answered_after_silence"}
  net_probe.py tcp-sink PORT SECONDS             receive one connection: {"bytes", "sha256", "mb_per_s"}
  net_probe.py tcp-source HOST PORT MB SEED      send MB MiB of seeded random bytes: {"bytes", "sha256"}
  net_probe.py spin SECONDS                      count in a loop: {"loops_per_s", "cpu_share"}
"""
import hashlib
import json
import random
import select
import socket
import statistics
import sys
import time


def udp_echo(port, seconds):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("0.0.0.0", port))
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if select.select([sock], [], [], 0.5)[0]:
            data, peer = sock.recvfrom(2048)
            sock.sendto(data, peer)


def udp_probe(host, port, count, gap_ms):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.connect((host, port))
    for _ in range(100):   # until the echo answers (10 s at most)
        try:
            sock.send(b"hello")
        except ConnectionRefusedError:   # an ICMP answer: nothing listens yet
            pass
        if select.select([sock], [], [], 0.1)[0]:
            try:
                if sock.recv(2048) == b"hello":
                    break
            except ConnectionRefusedError:
                pass
    else:
        sys.exit(f"no answer from the UDP echo at {host}:{port}")
    while select.select([sock], [], [], 0.2)[0]:   # stray hellos
        sock.recv(2048)
    sent_at, rtts, answers = {}, [], []   # sent_at: of the probes not answered yet
    sent = 0
    start = time.monotonic()
    last = start + count * gap_ms / 1000 + 1.0   # the last answers may take a second
    while time.monotonic() < last:
        next_send = start + sent * gap_ms / 1000
        if sent < count and time.monotonic() >= next_send:
            sent_at[sent] = time.monotonic()
            try:
                sock.send(str(sent).encode())
            except ConnectionRefusedError:
                pass
            sent += 1
            continue
        timeout = max(0.0, (next_send if sent < count else last) - time.monotonic())
        if select.select([sock], [], [], timeout)[0]:
            try:
                data = sock.recv(2048)
            except ConnectionRefusedError:
                continue
            if data.isdigit() and int(data) in sent_at:
                received = time.monotonic()
                rtts.append((received - sent_at.pop(int(data))) * 1000)
                answers.append(received)
    silences = [(b - a) * 1000 for a, b in zip(answers, answers[1:])]
    longest = max(range(len(silences)), key=silences.__getitem__) if silences else None
    print(json.dumps({
        "sent": count,
        "received": len(rtts),
        "lost_pct": 100 * (count - len(rtts)) / count,
        "rtt_ms": {"min": min(rtts), "median": statistics.median(rtts), "mean": statistics.mean(rtts),
                   "stdev": statistics.pstdev(rtts), "max": max(rtts)} if rtts else None,
        "longest_silence_ms": silences[longest] if silences else None,
        "answered_after_silence": len(answers) - longest - 1 if silences else 0,
    }))


def tcp_sink(port, seconds):
    server = socket.create_server(("0.0.0.0", port))
    server.settimeout(seconds)
    conn, _ = server.accept()
    conn.settimeout(seconds)
    digest, size = hashlib.sha256(), 0
    start = None
    while True:
        data = conn.recv(1 << 20)
        if not data:
            break
        start = start or time.monotonic()
        digest.update(data)
        size += len(data)
    elapsed = time.monotonic() - start
    print(json.dumps({"bytes": size, "sha256": digest.hexdigest(), "mb_per_s": size / elapsed / 1e6}))


def tcp_source(host, port, mib, seed):
    data = random.Random(seed).randbytes(mib << 20)
    for _ in range(100):   # until the sink listens (10 s at most)
        try:
            conn = socket.create_connection((host, port), timeout=60)
            break
        except OSError:
            time.sleep(0.1)
    else:
        sys.exit(f"cannot connect to {host}:{port}")
    conn.sendall(data)
    conn.close()
    print(json.dumps({"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}))


def spin(seconds):
    start, cpu_start, loops = time.monotonic(), time.process_time(), 0
    while time.monotonic() - start < seconds:
        for _ in range(10000):
            loops += 1
    wall, cpu = time.monotonic() - start, time.process_time() - cpu_start
    print(json.dumps({"loops_per_s": loops / wall, "cpu_share": cpu / wall}))


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "udp-echo":
        udp_echo(int(args[0]), float(args[1]))
    elif mode == "udp-probe":
        udp_probe(args[0], int(args[1]), int(args[2]), float(args[3]))
    elif mode == "tcp-sink":
        tcp_sink(int(args[0]), float(args[1]))
    elif mode == "tcp-source":
        tcp_source(args[0], int(args[1]), int(args[2]), int(args[3]))
    elif mode == "spin":
        spin(float(args[0]))
    else:
        sys.exit(__doc__)
