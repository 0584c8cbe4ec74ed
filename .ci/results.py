#!/usr/bin/env python3
"""Writes the record of one `.ci/run` (JSON on standard output): the commit and whether the tree was dirty,
each step's time, each test run's counts (from .ci/skipped-tests.py --summary) and the fuzz run's summary.

    python3 .ci/results.py SUMMARY.jsonl --commit SHA --dirty true|false --total SECONDS [--fuzz FILE]

Docs/Reliability.md quotes these counts (checked by .ci/claims.py against the committed .ci/results/latest.json).
"""
import argparse
import datetime
import json
import os


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("summary")
    parser.add_argument("--commit", required=True)
    parser.add_argument("--dirty", choices=["true", "false"], required=True)
    parser.add_argument("--total", type=int, required=True, help="seconds the whole run took")
    parser.add_argument("--fuzz", help="Fuzz/run.sh's summary of this run")
    args = parser.parse_args()

    steps, runs = [], {}
    for line in open(args.summary, encoding="utf-8"):
        record = json.loads(line)
        if "step" in record:
            steps.append({"step": record["step"], "seconds": record["seconds"]})
        else:
            runs[record.pop("label")] = record
    result = {
        "schema": 1,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": args.commit,
        "dirty": args.dirty == "true",
        "cores": os.cpu_count(),
        "total_seconds": args.total,
        "steps": steps,
        "test_runs": runs,
    }
    if args.fuzz and os.path.exists(args.fuzz):
        result["fuzz"] = json.load(open(args.fuzz, encoding="utf-8"))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
