"""Check an exported policy against an `rlx evaluate --trace` file, with NumPy alone:

    python3 rlx_policy.py policy.rlxp --check-trace steps.jsonl [--atol 1e-4]
    python3 rlx_trace_check.py policy.rlxp --check-trace steps.jsonl [--atol 1e-4]

Replays every traced step through rlx_policy.Policy (deterministic actions) and prints one JSON
line, {"steps", "episodes", "mismatches", "max_abs_diff"}; exits with status 0 when every action
agrees (Box actions within --atol), 1 on a mismatch, 2 on a file it cannot use. The trace's lines
are rlx's cli/evaluate_command.cc's: {"episode", "step", "obs", "action"}, with "obs_bytes" and
"action_mask" where the env has them; "step" is 0 where an episode starts, which is where a
recurrent policy's state starts from zeros.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    from rlx_policy import Policy, PolicyFileError, np  # noqa: E402
except ImportError as _error:  # no NumPy (or no rlx_policy.py beside this file): one line, not a traceback
    if __name__ == "__main__":
        print("error: %s" % _error, file=sys.stderr)
        sys.exit(2)
    raise


class TraceError(Exception):
    """A trace a policy cannot replay: a recurrent policy's episode that does not start at step 0."""


def check_trace(policy_path, trace_path, atol):
    """Compares the policy's deterministic actions with a trace; returns the mismatch count. Each
    traced observation is rebuilt as Gymnasium gives it (from "obs" and "obs_bytes") and acted on
    with its "action_mask". A recurrent policy replays whole episodes: its state starts from
    zeros where an episode does ("step": 0) and follows the steps in order."""
    policy = Policy(policy_path)
    steps = mismatches = episodes = 0
    worst = 0.0
    state, previous = None, None
    with open(trace_path) as f:
        for number, line in enumerate(f, 1):
            step = json.loads(line)
            observation = policy.observation_space.unstore(step["obs"], step.get("obs_bytes", []))
            at = (step["episode"], step["step"])
            if at[1] == 0:
                episodes += 1
                state = policy.initial_state()
            elif policy.recurrent and (previous is None or at != (previous[0], previous[1] + 1)):
                raise TraceError("%s line %d: episode %d step %d follows %s; a recurrent policy replays whole "
                                 "episodes, each from its step 0 on" % (trace_path, number, at[0], at[1], "no step"
                                                                        if previous is None else "episode %d step %d"
                                                                        % previous))
            previous = at
            if policy.recurrent:
                got, state = policy.act(observation, state, action_mask=step.get("action_mask"), deterministic=True)
            else:
                got = policy.act(observation, action_mask=step.get("action_mask"), deterministic=True)
            if policy.indexed_actions:
                ok = np.array_equal(np.asarray(got).reshape(-1), np.asarray(step["action"]).reshape(-1))
            else:
                diff = float(np.max(np.abs(got - np.asarray(step["action"], dtype=np.float32))))
                worst = max(worst, diff)
                ok = diff <= atol
            steps += 1
            if not ok:
                mismatches += 1
                if mismatches <= 5:
                    print("mismatch at episode %d step %d: got %s, trace %s"
                          % (step["episode"], step["step"], got, step["action"]))
    print(json.dumps({"steps": steps, "episodes": episodes, "mismatches": mismatches, "max_abs_diff": worst}))
    return mismatches


def main(argv):
    """The command line above; returns the exit status."""
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("policy")
    parser.add_argument("--check-trace", required=True, help="an `rlx evaluate --trace` file")
    parser.add_argument("--atol", type=float, default=1e-4, help="tolerance for Box actions")
    args = parser.parse_args(argv)
    try:
        return 1 if check_trace(args.policy, args.check_trace, args.atol) else 0
    except (PolicyFileError, TraceError) as error:
        print("error: %s" % error, file=sys.stderr)
        return 2
    except OSError as error:  # a policy or trace file that cannot be read: its name and why
        print("error: %s: %s" % (error.filename, error.strerror), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
