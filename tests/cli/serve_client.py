"""A user's client of `rlx serve`, with Python's standard library alone (tests/cli/serve_command_test.cc).

    serve_client.py check-trace URL TRACE.jsonl   every traced observation POSTed with urllib: the
                                                  answer's action must be the traced one
    serve_client.py load URL SECONDS THREADS [V]  keep-alive requests (http.client) from THREADS
                                                  threads for SECONDS, or with V until 0.5 s after
                                                  version V first answers (SECONDS at most);
                                                  counts statuses and versions

Each prints one JSON line.
"""
import http.client
import json
import sys
import threading
import time
import urllib.parse
import urllib.request


def check_trace(url, trace_path):
    steps = [json.loads(line) for line in open(trace_path)]
    mismatches = []
    for step in steps:
        body = json.dumps({"observation": step["obs"]}).encode()
        request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as reply:
            answer = json.loads(reply.read())
        if answer["action"] != step["action"]:
            mismatches.append({"episode": step["episode"], "step": step["step"], "served": answer["action"],
                               "evaluated": step["action"]})
    print(json.dumps({"steps": len(steps), "mismatches": mismatches[:5], "mismatched": len(mismatches)}))


def load(url, seconds, threads, until_version=None):
    parts = urllib.parse.urlsplit(url)
    body = json.dumps({"observation": [0.01, -0.02, 0.03, 0.04]})
    lock = threading.Lock()
    statuses, versions, failures = {}, {}, []
    end = [time.monotonic() + seconds]

    def run():
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
        while time.monotonic() < end[0]:
            try:
                connection.request("POST", parts.path, body, {"Content-Type": "application/json"})
                reply = connection.getresponse()
                answer = reply.read()
                status = reply.status
                version = json.loads(answer).get("version") if status == 200 else None
            except (OSError, http.client.HTTPException, ValueError) as error:
                with lock:
                    failures.append(repr(error))
                connection.close()
                connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
                continue
            with lock:
                statuses[status] = statuses.get(status, 0) + 1
                if version is not None:
                    versions[version] = versions.get(version, 0) + 1
                    if until_version is not None and version == until_version and versions[version] == 1:
                        end[0] = min(end[0], time.monotonic() + 0.5)
        connection.close()

    workers = [threading.Thread(target=run) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    print(json.dumps({"requests": sum(statuses.values()), "statuses": {str(k): v for k, v in statuses.items()},
                      "versions": {str(k): v for k, v in versions.items()}, "failures": failures[:5],
                      "failed": len(failures)}))


if __name__ == "__main__":
    if sys.argv[1] == "check-trace":
        check_trace(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "load":
        load(sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]) if len(sys.argv) > 5 else None)
    else:
        sys.exit("usage: serve_client.py check-trace URL TRACE | load URL SECONDS THREADS")
