#!/usr/bin/env python3
"""Counts the tests a `swift test` run did not really run, from its Swift Testing event stream, and how many it ran.

    swift test --event-stream-output-path events.jsonl --event-stream-version 0 ...
    python3 .ci/skipped-tests.py events.jsonl --min-tests N [--allow 'Suite/test()' ...] [--summary FILE]

Counted: tests skipped (`.enabled(if:)` false, or an empty `arguments:` list: "No test cases found"), tests
cancelled (`Test.cancel`, which `.requires(...)` uses outside OD_REQUIRE_ALL), cancelled cases of
parameterised tests (the console then says the test PASSED: only the event stream shows them), and known
issues (`withKnownIssue`, which turns a failure into a pass). Prints each with its reason and the totals;
exits 1 when any is not allowed by name (`--allow` takes a test's "Suite/name()" or a prefix such as
"Suite/"), 2 when the stream is missing or holds no finished run.

`--min-tests N` (every step of .ci/run states its own): the run must have run at least N test functions to their
end (started, and neither skipped nor cancelled); fewer exits 1. A filter that matches nothing, or matches less
than it did, then fails the step instead of passing with nothing run. `--summary FILE` appends one JSON line
with the counts (label, tests, cases, failed, skipped, minimum), which .ci/run collects into .ci/results/.
"""
import argparse
import json
import sys


def short_id(test_id):
    """'Module.Suite/name(_:)/File.swift:10:4' -> 'Suite/name(_:)'."""
    parts = test_id.split("/")
    if len(parts) >= 2 and ".swift:" in parts[-1]:
        parts = parts[:-1]
    parts[0] = parts[0].split(".", 1)[-1]
    return "/".join(parts)


def message(payload):
    """The reason: the comment given to Test.cancel (an underscored, unstable field), else the messages."""
    texts = list(payload.get("_comments") or []) + [m.get("text", "") for m in payload.get("messages", [])]
    return " | ".join(t for t in texts if t)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("events")
    parser.add_argument("--allow", action="append", default=[], help="a test's 'Suite/name()' (or a prefix) allowed to skip")
    parser.add_argument("--label", default="", help="names the run in the summary line")
    parser.add_argument("--min-tests", type=int, required=True,
                        help="fewest test functions the run must run to their end (a filter matching nothing fails)")
    parser.add_argument("--summary", help="append the counts as one JSON line to this file")
    args = parser.parse_args()

    parameterised = set()
    functions = set()  # ids of the test functions in the run's plan
    started = set()  # ids of the test functions that started
    failed = set()  # ids of the tests with an issue that is not a known one
    cases = 0  # cases of parameterised tests started (one per argument)
    found = {}  # short id -> (kind, reason); one entry per test
    ran = 0
    finished = False
    try:
        lines = open(args.events, encoding="utf-8", errors="replace").read().splitlines()
    except OSError as error:
        print(f"skipped-tests: cannot read {args.events}: {error}")
        return 2
    for line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut short by a crash
        payload = record.get("payload", {})
        if record.get("kind") == "test":
            if payload.get("kind") == "function":
                ran += 1
                functions.add(payload.get("id"))
                if payload.get("isParameterized"):
                    parameterised.add(payload.get("id"))
            continue
        if record.get("kind") != "event":
            continue
        kind = payload.get("kind")
        test_id = payload.get("testID") or ""
        name = short_id(test_id) if test_id else "?"
        if kind == "runEnded":
            finished = True
        elif kind == "testStarted":
            started.add(test_id)
        elif kind == "testCaseStarted" and test_id in functions:
            cases += 1
        elif kind == "testSkipped":
            found[name] = ("skipped", message(payload))
        elif kind == "testCancelled":
            found[name] = ("cancelled", message(payload))
        elif kind == "testCaseCancelled" and test_id in parameterised:
            previous = found.get(name)
            count = previous[2] + 1 if previous and len(previous) == 3 else 1
            found[name] = ("cases cancelled", message(payload), count)
        elif kind == "issueRecorded" and payload.get("issue", {}).get("isKnown"):
            found.setdefault(name, ("known issue", message(payload)))
        elif kind == "issueRecorded":
            failed.add(test_id)

    label = f" ({args.label})" if args.label else ""
    if not finished:
        print(f"skipped-tests{label}: the event stream {args.events} has no end of run (the test process died?)")
        return 2

    def allowed(name):
        return any(name == a or (a.endswith("/") and name.startswith(a)) or name.startswith(a + "(") for a in args.allow)

    refused = 0
    for name in sorted(found):
        entry = found[name]
        detail = f"{entry[2]} " if len(entry) == 3 else ""
        ok = allowed(name)
        refused += 0 if ok else 1
        print(f"  {'allowed' if ok else 'NOT ALLOWED'}: {name}: {detail}{entry[0]}: {entry[1]}")
    print(f"skipped-tests{label}: {len(found)} of {ran} tests skipped, cancelled or known issues; "
          f"{len(found) - refused} opted out by name in .ci/run, {refused} not")

    # Ran to its end: a test function that started and was neither skipped nor cancelled as a whole.
    not_run = {name for name, entry in found.items() if entry[0] in ("skipped", "cancelled")}
    completed_ids = [test_id for test_id in functions & started if short_id(test_id) not in not_run]
    completed = len(completed_ids)
    # Cases: one per argument of a parameterised test (their own events), one per other test function.
    cases += sum(1 for test_id in completed_ids if test_id not in parameterised)
    modules = {}
    for test_id in completed_ids:
        module = test_id.split(".", 1)[0]
        modules[module] = modules.get(module, 0) + 1
    too_few = completed < args.min_tests
    print(f"tests run{label}: {completed} test functions ({cases} cases), "
          f"{len({t for t in failed if t in functions})} with issues; this step must run at least {args.min_tests}"
          + (f": FAILED, {args.min_tests - completed} short (a filter matching less than it should?)" if too_few else ""))
    if args.summary:
        with open(args.summary, "a", encoding="utf-8") as summary:
            summary.write(json.dumps({
                "label": args.label, "tests": completed, "cases": cases, "minimum": args.min_tests, "modules": modules,
                "failed": len({t for t in failed if t in functions}), "skipped": len(found), "skipped_refused": refused,
            }) + "\n")
    return 1 if refused or too_few else 0


if __name__ == "__main__":
    sys.exit(main())
