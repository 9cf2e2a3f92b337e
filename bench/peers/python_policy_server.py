#!/usr/bin/python3
# The baseline of `rlx bench serve --python-baseline`: the policy server a user would write by hand
# around python/rlx_policy.py (NumPy) with the standard library's ThreadingHTTPServer (a thread per
# connection, HTTP/1.1 keep-alive). It speaks the JSON and binary protocols of docs/serve.md for
# POST /v1/policies/NAME/act, and answers GET /v1/policies, /healthz and /readyz; no reload, no
# sessions (recurrent policies are refused), no metrics.
#   /usr/bin/python3 bench/peers/python_policy_server.py --port 8001 cartpole=policy.rlxp ...
"""A minimal Python policy server over rlx_policy.Policy, for comparison with `rlx serve`.

Usage: python_policy_server.py [--host H] [--port P] NAME=FILE.rlxp [NAME=FILE.rlxp ...]
Prints "ready http://H:P" once it listens; SIGTERM stops it with exit status 0.
"""
import argparse
import json
import os
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from rlx_policy import Policy  # noqa: E402  (python/ of the same checkout)


class Served:
    """One policy and what its binary rows look like."""

    def __init__(self, name, path):
        self.name, self.path = name, path
        self.policy = Policy(path)
        if self.policy.recurrent:
            raise SystemExit("error: %s is recurrent; this baseline serves memoryless policies only" % path)
        space = self.policy.observation_space
        self.float_size, self.byte_size = space.float_slots, space.byte_slots
        self.mask_size = self.policy.mask_size
        self.lock = threading.Lock()  # Policy's random generator is not thread-safe

    def describe(self):
        p = self.policy
        return {"name": self.name, "observation_space": p.observation_space.space, "action_space": p.action_space,
                "float_size": self.float_size, "byte_size": self.byte_size, "mask_size": self.mask_size,
                "action_size": p.action_size, "recurrent": False, "version": 1, "checkpoint": "",
                "source": self.path}

    def act(self, observation, mask, deterministic):
        with self.lock:
            return self.policy.act(observation, action_mask=mask, deterministic=deterministic)

    def act_rows(self, body, with_masks, deterministic):
        """The binary protocol: rows of float32, then uint8 (then mask bytes) -> the actions' bytes."""
        mask_size = self.mask_size if with_masks else 0
        row = 4 * self.float_size + self.byte_size + mask_size
        if row == 0 or len(body) == 0 or len(body) % row != 0:
            raise ValueError("the body's %d bytes are no whole number of %d-byte rows" % (len(body), row))
        out = []
        for at in range(0, len(body), row):
            floats = np.frombuffer(body, dtype="<f4", count=self.float_size, offset=at)
            stored = np.frombuffer(body, dtype=np.uint8, count=self.byte_size, offset=at + 4 * self.float_size)
            mask = np.frombuffer(body, dtype=np.uint8, count=mask_size, offset=at + row - mask_size) if with_masks else None
            action = self.act(self.policy.observation_space.unstore(floats, stored), mask, deterministic)
            dtype = "<i8" if self.policy.indexed_actions else "<f4"
            out.append(np.asarray(action).astype(dtype).tobytes())
        return b"".join(out), len(out)


def to_json(action):
    return action if isinstance(action, int) else np.asarray(action).tolist()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive
    disable_nagle_algorithm = True  # else the body, written after the head, waits for a delayed ACK (40 ms)
    policies = {}

    def log_message(self, format, *args):  # no line per request
        pass

    def reply(self, status, body, content_type="application/json", headers=()):
        if not isinstance(body, bytes):
            body = (body if isinstance(body, str) else json.dumps(body, separators=(",", ":"))).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def error(self, status, message):
        self.reply(status, {"error": message})

    def do_GET(self):
        if self.path == "/healthz":
            self.reply(200, "ok", "text/plain")
        elif self.path == "/readyz":
            self.reply(200, "ready", "text/plain")
        elif self.path == "/v1/policies":
            self.reply(200, {"policies": [served.describe() for served in self.policies.values()]})
        else:
            self.error(404, "no such path: " + self.path)

    def do_POST(self):
        parts = self.path.split("/")  # "", "v1", "policies", NAME, "act"
        if len(parts) != 5 or parts[1:3] != ["v1", "policies"] or parts[4] != "act":
            self.read_body()
            return self.error(404, "no such path: " + self.path)
        served = self.policies.get(parts[3])
        body = self.read_body()
        if body is None:
            return None
        if served is None:
            return self.error(404, "no such policy: " + parts[3])
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        try:
            if content_type == "application/octet-stream":
                deterministic = self.headers.get("X-Rlx-Deterministic", "1") != "0"
                actions, rows = served.act_rows(body, self.headers.get("X-Rlx-Action-Mask") == "1", deterministic)
                return self.reply(200, actions, "application/octet-stream",
                                  (("X-Rlx-Version", "1"), ("X-Rlx-Rows", str(rows))))
            request = json.loads(body)  # any other type is read as JSON (curl -d sends a form's type)
            deterministic = bool(request.get("deterministic", True))
            if "observation" in request:
                action = served.act(request["observation"], request.get("action_mask"), deterministic)
                return self.reply(200, {"action": to_json(action), "version": 1})
            if "observations" in request:
                masks = request.get("action_masks") or [None] * len(request["observations"])
                actions = [to_json(served.act(obs, mask, deterministic))
                           for obs, mask in zip(request["observations"], masks)]
                return self.reply(200, {"actions": actions, "version": 1})
            return self.error(400, "the request has neither \"observation\" nor \"observations\"")
        except (ValueError, TypeError, AttributeError, KeyError) as error:
            return self.error(400, str(error))

    def read_body(self):
        length = self.headers.get("Content-Length")
        if length is None:
            self.error(411, "a request body needs Content-Length")
            self.close_connection = True
            return None
        return self.rfile.read(int(length))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("models", nargs="+", metavar="NAME=FILE.rlxp")
    args = parser.parse_args(argv)
    for model in args.models:
        name, _, path = model.rpartition("=")
        name = name or os.path.splitext(os.path.basename(path))[0]
        Handler.policies[name] = Served(name, path)
    ThreadingHTTPServer.request_queue_size = 1024  # the default 5 drops the SYNs of many connections at once
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    print("ready http://%s:%d" % (args.host, args.port), flush=True)
    server.serve_forever()
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
