#!/usr/bin/env python3
"""Checks that every figure the docs state traces to something that holds it: a test that ran and passed, the
committed benchmark run, the committed CI run or the committed fuzz run (Docs/Reliability.md, "Claims and their
checks", lists them), and that every repository path README.md and Docs/ name exists (`missing_paths`).

    python3 .ci/claims.py [--events EVENTS.jsonl]    check every listed claim (CI: after the plain test run)
    python3 .ci/claims.py --unlisted [DOC ...]       print figures in the docs that no listed claim covers
    python3 .ci/claims.py --update                   rewrite the docs' tables of the committed run

A doc may also show figures of the committed run as a generated table: `<!-- run-figures: key key ... -->`, the
table, `<!-- end run-figures -->`. The check fails when such a table differs from Benchmarks/results/latest.json.

Each row of the claims table is `| doc | "quoted text" | check |`. The quoted text must occur in the doc (line
breaks and emphasis marks aside), so a doc cannot drift from its row. The check is one or more of, separated by
`;`:
  test: Suite/name           a test in Tests/ (with --events: it ran in one of those runs and recorded no issue)
  run: key[.min|.runs]       Benchmarks/results/latest.json (the committed full run): the key's median (or min,
                             or run count) appears in the quoted text at the precision the text gives it;
                             several keys separated by commas
  ci: run.field              .ci/results/latest.json (the committed CI run), e.g. `ci: plain.tests`
  fuzz: field | target.field Fuzz/results/latest.json (the committed fuzz run), e.g. `fuzz: executions`
  code: path = text          the source file contains the text (a constant the doc quotes)
  record: DATE               a past measurement kept as history (what a change was measured against, a bug's
                             symptom): not a claim about the current code; the doc must date it (DATE within
                             the quote's paragraph)
  example: WHAT              an illustration, not a measurement (a sample log line, a worked example, a
                             configuration's value): the doc must say so near the quote ("example", "e.g.",
                             "for instance", "sample" or "such as" within the quote's paragraph)
Exit status 1 when any check fails, with one line per failure saying what to fix.
"""
import argparse
import json
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
CLAIMS_DOC = "Docs/Reliability.md"
CLAIMS_HEADING = "## Claims and their checks"
BENCHMARK = "Benchmarks/results/latest.json"
CI_RESULTS = ".ci/results/latest.json"
FUZZ_RESULTS = "Fuzz/results/latest.json"
NUMBER = re.compile(r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)(?:\s?(k|M)\b)?")


def normalise(text):
    """Collapses white space and drops Markdown emphasis and code marks, so a quote survives rewrapping."""
    return re.sub(r"\s+", " ", re.sub(r"[*_`]", "", text)).strip()


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as handle:
        return handle.read()


def load_json(path):
    try:
        return json.loads(read(path))
    except (OSError, ValueError):
        return None


def claims():
    """The rows of the claims table: (line number, doc, quote, check)."""
    text = read(CLAIMS_DOC)
    start = text.find(CLAIMS_HEADING)
    if start < 0:
        sys.exit(f"claims: {CLAIMS_DOC} has no '{CLAIMS_HEADING}' section")
    line_number = text[:start].count("\n") + 1
    rows = []
    for offset, line in enumerate(text[start:].splitlines()):
        if offset > 0 and line.startswith("## "):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if not cells or cells[0] in ("doc", "") or set(cells[0]) <= {"-", " "}:
            continue
        if len(cells) != 3:
            sys.exit(f"claims: {CLAIMS_DOC}:{line_number + offset}: a row needs three cells (doc, claim, check); "
                     f"a quote cannot hold '|'")
        quote = cells[1]
        if len(quote) >= 2 and quote[0] == '"' and quote[-1] == '"':
            quote = quote[1:-1]
        rows.append((line_number + offset, cells[0].strip("`"), quote, cells[2]))
    return rows


def number_parts(match):
    """A NUMBER match as (its digits as written, its k/M factor, its decimals, its value): '1,234' -> ('1,234', 1,
    0, 1234.0), '878.2 k' -> ('878.2', 1000, 1, 878200.0)."""
    digits = match.group(1).rstrip(",")
    factor = {"k": 1e3, "M": 1e6}.get(match.group(2), 1)
    plain = digits.replace(",", "")
    decimals = len(plain.split(".")[1]) if "." in plain else 0
    return digits, factor, decimals, float(plain) * factor


def numbers(text):
    """(value, scale of its last digit) of each number in text: '0.94' -> (0.94, 0.01), '878.2 k' -> (878200, 100)."""
    found = []
    for match in NUMBER.finditer(text.replace("\u2009", " ")):
        _, factor, decimals, value = number_parts(match)
        found.append((value, factor * 10 ** -decimals))
    return found


def quoted(value, text):
    """Whether text states value at the precision it gives (half a unit of its last digit either way)."""
    return any(abs(value - number) <= step / 2 + 1e-9 for number, step in numbers(text))


def benchmark_value(run, key):
    name, _, part = key.partition(".")
    stats = run.get("stats", {}).get(name)
    if part in ("min", "runs"):
        return stats.get(part) if stats else None
    if stats is not None:
        return stats.get("median")
    value = run.get(name)
    return value if isinstance(value, (int, float)) else None


def dotted(data, path):
    for part in path.split("."):
        if isinstance(data, dict) and part in data:
            data = data[part]
        elif isinstance(data, list):
            data = next((item for item in data if isinstance(item, dict) and part in item.values()), None)
        else:
            return None
    return data


def test_results(events):
    """short test id ('Suite/name') -> 'passed' | 'failed' | 'skipped', from a Swift Testing event stream."""
    results = {}
    functions = set()
    for line in open(events, encoding="utf-8", errors="replace"):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        payload = record.get("payload", {})
        if record.get("kind") == "test" and payload.get("kind") == "function":
            functions.add(payload.get("id"))
            continue
        test_id = payload.get("testID") or ""
        if test_id not in functions:
            continue
        parts = test_id.split("/")
        name = parts[0].split(".", 1)[-1] + "/" + parts[1].split("(")[0] if len(parts) > 1 else test_id
        kind = payload.get("kind")
        if kind == "testStarted":
            results.setdefault(name, "passed")
        elif kind in ("testSkipped", "testCancelled"):
            results[name] = "skipped"
        elif kind == "issueRecorded" and not payload.get("issue", {}).get("isKnown"):
            results[name] = "failed"
    return results


def test_exists(name):
    suite, _, function = name.partition("/")
    pattern = re.compile(r"\bfunc\s+" + re.escape(function) + r"\s*\(")
    for folder, _, files in os.walk(os.path.join(ROOT, "Tests")):
        for file in files:
            if file.endswith(".swift"):
                text = open(os.path.join(folder, file), encoding="utf-8").read()
                if pattern.search(text) and re.search(r"\b" + re.escape(suite) + r"\b", text):
                    return True
    return False


# --- generated tables of the committed run -----------------------------------------------------------------

BLOCK = re.compile(r"(<!-- run-figures: ([^>]*?) -->\n)(.*?)(<!-- end run-figures -->)", re.S)


def figure_table(run, keys):
    """The committed run's figures for `keys` as a Markdown table (the benchmark's own labels and units)."""
    lines = ["| measurement | key | min | median | unit | runs |", "| --- | --- | --- | --- | --- | --- |"]
    for key in keys:
        stats = run.get("stats", {}).get(key)
        if stats is None:
            lines.append(f"| (not in {BENCHMARK}) | `{key}` | – | – | | |")
            continue
        lines.append(f"| {stats['label']} | `{key}` | {fmt(stats.get('min'))} | {fmt(stats.get('median'))} | "
                     f"{stats.get('unit', '')} | {stats.get('runs', '')} |")
    date, commit = run.get("date", "?"), (run.get("environment", {}).get("commit") or "")[:12]
    lines.append("")
    lines.append(f"_From {BENCHMARK} (the committed full run of {date}{', commit ' + commit if commit else ''}); "
                 f"regenerated by `python3 .ci/claims.py --update`._")
    return "\n".join(lines) + "\n"


def fmt(value):
    """The benchmark's own number format (Benchmarks/Sources/Report/BenchmarkReport.swift, formatNumber)."""
    if value is None:
        return "–"
    magnitude = abs(value)
    if magnitude >= 1000 or value == int(value):
        return str(int(round(value)))
    if magnitude >= 100:
        return f"{value:.0f}"
    if magnitude >= 10:
        return f"{value:.1f}"
    if magnitude >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def fuzz_table(fuzz):
    """The committed fuzz run, one row per target."""
    if not fuzz:
        return f"_No {FUZZ_RESULTS} committed._\n"
    lines = ["| target | fuzzer | executions | coverage (edges) | features | corpus units | findings |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for t in fuzz.get("targets", []):
        lines.append(f"| {t['target']} | {t['fuzzer']} | {t['executions']:,} | {t['coverage']} | {t['features']} | "
                     f"{t['corpus']} | {t['findings']}{' (' + t['kinds'] + ')' if t.get('kinds') else ''} |")
    lines.append(f"| **all {len(fuzz.get('targets', []))}** | | **{fuzz.get('executions', 0):,}** | | | | "
                 f"**{fuzz.get('findings', 0)}** |")
    lines.append("")
    lines.append(f"_From {FUZZ_RESULTS}: `Fuzz/run.sh` in {fuzz.get('mode')} mode, {fuzz.get('seconds_per_target')} s per "
                 f"target, {fuzz.get('date')}, commit {str(fuzz.get('commit'))[:12]}{' (dirty tree)' if fuzz.get('dirty') else ''}; "
                 f"regenerated by `python3 .ci/claims.py --update`._")
    return "\n".join(lines) + "\n"


def ci_table(ci):
    """The committed CI run: each step's time, each test run's counts."""
    if not ci:
        return f"_No {CI_RESULTS} committed._\n"
    lines = ["| step | time | test runs in it: test functions (cases), minimum stated in .ci/run |", "| --- | --- | --- |"]
    runs = ci.get("test_runs", {})
    prefixes = {"swift test": "plain", "streaming faults": "streaming-faults", "RSS check": "rss",
                "thread sanitizer": "tsan-", "address + undefined-behaviour sanitizers": "asan-"}
    for step in ci.get("steps", []):
        name, seconds = step["step"], step["seconds"]
        prefix = prefixes.get(name)
        parts = [f"{label}: {r['tests']} ({r['cases']}), ≥ {r['minimum']}" for label, r in runs.items()
                 if prefix and (label == prefix or (prefix.endswith("-") and label.startswith(prefix)))]
        lines.append(f"| {name} | {seconds // 60} min {seconds % 60:02d} s | {'; '.join(parts)} |")
    total = ci.get("total_seconds", 0)
    lines.append(f"| **total** | **{total // 60} min {total % 60:02d} s** | |")
    lines.append("")
    lines.append(f"_From {CI_RESULTS}: `.ci/run` on {ci.get('date')}, commit {str(ci.get('commit'))[:12]}"
                 f"{' (dirty tree)' if ci.get('dirty') else ''}, {ci.get('cores')} cores; regenerated by "
                 f"`python3 .ci/claims.py --update`._")
    return "\n".join(lines) + "\n"


SUMMARY_BLOCK = re.compile(r"(<!-- (fuzz|ci)-figures -->\n)(.*?)(<!-- end (?:fuzz|ci)-figures -->)", re.S)


def generated_blocks(update):
    """Checks (or with `update` rewrites) every generated block of the docs; returns the docs with stale ones."""
    run = load_json(BENCHMARK) or {}
    fuzz, ci = load_json(FUZZ_RESULTS), load_json(CI_RESULTS)
    stale = []
    for doc in ["README.md"] + sorted("Docs/" + f for f in os.listdir(os.path.join(ROOT, "Docs")) if f.endswith(".md")):
        text = read(doc)
        new = BLOCK.sub(lambda m: m.group(1) + figure_table(run, m.group(2).split()) + m.group(4), text)
        new = SUMMARY_BLOCK.sub(lambda m: m.group(1) + (fuzz_table(fuzz) if m.group(2) == "fuzz" else ci_table(ci))
                                + m.group(4), new)
        if new != text:
            stale.append(doc)
            if update:
                with open(os.path.join(ROOT, doc), "w", encoding="utf-8") as handle:
                    handle.write(new)
    return stale


EXAMPLE_WORDS = ("example", "e.g.", "for instance", "sample", "such as")


def paragraph(flat, quote):
    """The normalised doc text within 600 characters of the quote (its paragraph, roughly); None when the quote is
    not in the doc (that failure is reported on its own)."""
    at = flat.find(normalise(quote))
    return None if at < 0 else flat[max(0, at - 600):at + len(normalise(quote)) + 600]


def check(rows, events):
    run = load_json(BENCHMARK) or {}
    ci = load_json(CI_RESULTS)
    fuzz = load_json(FUZZ_RESULTS)
    tests = None
    for path in events:
        results = test_results(path)
        tests = tests or {}
        for name, result in results.items():
            # Passed in one run (a test skipped in the plain run runs in a step of its own) and failed in none.
            if tests.get(name) != "failed" and (result != "skipped" or name not in tests):
                tests[name] = result
    docs = {}
    failures = 0

    def fail(line, doc, message):
        nonlocal failures
        failures += 1
        print(f"claims: {CLAIMS_DOC}:{line}: {doc}: {message}")

    for line, doc, quote, checks in rows:
        if doc not in docs:
            try:
                docs[doc] = normalise(read(doc))
            except OSError:
                docs[doc] = None
        if docs[doc] is None:
            fail(line, doc, "no such document")
            continue
        if normalise(quote) not in docs[doc]:
            fail(line, doc, f'the doc no longer says "{quote}" (update the doc and this row together)')
        for item in (c.strip() for c in checks.split(";") if c.strip()):
            kind, _, argument = item.partition(":")
            kind, argument = kind.strip().strip("`"), argument.strip().strip("`")
            if kind == "test":
                for name in (a.strip().strip("`") for a in argument.split(",")):
                    if not test_exists(name):
                        fail(line, doc, f"no test {name} in Tests/")
                    elif tests is not None and tests.get(name) != "passed":
                        fail(line, doc, f"test {name} did not pass in this run ({tests.get(name, 'not run')})")
            elif kind == "run":
                for key in (a.strip().strip("`") for a in argument.split(",")):
                    value = benchmark_value(run, key)
                    if value is None:
                        fail(line, doc, f"{BENCHMARK} has no {key}")
                    elif not quoted(value, quote):
                        fail(line, doc, f"{key} is {value} in {BENCHMARK}, the doc says \"{quote}\"")
            elif kind in ("ci", "fuzz"):
                data, path = (ci, CI_RESULTS) if kind == "ci" else (fuzz, FUZZ_RESULTS)
                value = dotted(data, ("test_runs." + argument) if kind == "ci" and "." in argument
                               and argument.split(".")[0] not in ("steps", "total_seconds") else argument) if data else None
                if not isinstance(value, (int, float)):
                    fail(line, doc, f"{path} has no {argument}")
                elif not quoted(value, quote):
                    fail(line, doc, f"{argument} is {value} in {path}, the doc says \"{quote}\"")
            elif kind == "record":
                near = paragraph(docs[doc], quote)
                if near is not None and argument not in near:
                    fail(line, doc, f"a record must be dated in its paragraph: {argument} is not near the quote")
            elif kind == "example":
                near = paragraph(docs[doc], quote)
                if near is not None and not any(word in near.lower() for word in EXAMPLE_WORDS):
                    fail(line, doc, "an example must say so in its paragraph (example, e.g., for instance, sample, such as)")
            elif kind == "code":
                path, _, text = argument.partition("=")
                try:
                    if text.strip() not in read(path.strip()):
                        fail(line, doc, f"{path.strip()} no longer contains {text.strip()}")
                except OSError:
                    fail(line, doc, f"no file {path.strip()}")
            else:
                fail(line, doc, f"unknown check '{item}'")
    return failures


# --- paths the docs name ------------------------------------------------------------------------------------

REPO_PATH = re.compile(r"(?<![\w/.…-])((?:Sources|Tests|Benchmarks|Fuzz|Docs|\.ci)/[A-Za-z0-9_+./-]*"
                       r"(?:\.(?:swift|c|h|py|sh|md|json|txt)\b|/))")
# Paths a doc names that are not this repository's, each with why.
OUTSIDE_PATHS = {
    "Sources/MyApp/Thumbnailer.swift": "Docs/Usage.md: where an application puts the example program",
}


def missing_paths():
    """Every repository path (a file with its extension, or a folder ending in '/') that README.md or Docs/*.md
    names must exist, so that a moved or deleted file cannot leave a doc pointing at nothing."""
    docs = ["README.md"] + sorted("Docs/" + f for f in os.listdir(os.path.join(ROOT, "Docs")) if f.endswith(".md"))
    failures = []
    for doc in docs:
        for number, line in enumerate(read(doc).splitlines(), 1):
            for path in REPO_PATH.findall(line):
                if path not in OUTSIDE_PATHS and not os.path.exists(os.path.join(ROOT, path)):
                    failures.append(f"claims: {doc}:{number}: no file or folder {path} (fix the path, or the doc)")
    return failures


# --- the audit aid: figures no claim covers --------------------------------------------------------------

FIGURE = re.compile(r"\d[\d,.]*\s?(?:k\b|M\b)?\s?(?:%|×|x\b|ms\b|µs\b|s\b|min\b|MB\b|MiB\b|GB\b|GiB\b|KB\b|KiB\b|"
                    r"instructions|executions|tests|cases|requests|req/s|rounds|runs)")


def unlisted(rows, docs):
    """Prints each figure (a number with a unit) of docs outside every quoted claim of its doc, with context."""
    quotes = {}
    for _, doc, quote, _ in rows:
        quotes.setdefault(doc, []).append(normalise(quote))
    count = 0
    for doc in docs:
        text = read(doc)
        begin, end = text.find("<!-- benchmark-results:begin -->"), text.find("<!-- benchmark-results:end -->")
        if begin >= 0 and end > begin:
            text = text[:begin] + text[end:]  # the generated block is the committed run itself
        if doc == CLAIMS_DOC and CLAIMS_HEADING in text:
            text = text[:text.find(CLAIMS_HEADING)]
        text = SUMMARY_BLOCK.sub("", BLOCK.sub("", text))  # generated from the committed runs
        flat = normalise(text)
        spans = []
        for quote in quotes.get(doc, []):
            at = flat.find(quote)
            while at >= 0:
                spans.append((at, at + len(quote)))
                at = flat.find(quote, at + 1)
        for match in FIGURE.finditer(flat):
            if not any(a <= match.start() and match.end() <= b for a, b in spans):
                count += 1
                print(f"{doc}: {match.group(0)!r}: ...{flat[max(0, match.start() - 70):match.end() + 20]}...")
    print(f"claims: {count} figures no listed claim covers", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", action="append", default=[],
                        help="a CI test run's event stream (repeatable): claimed tests must have passed in one of them")
    parser.add_argument("--update", action="store_true", help="rewrite the docs' tables of the committed run")
    parser.add_argument("--unlisted", nargs="*", help="list figures of these docs (default: all) no claim covers")
    args = parser.parse_args()
    rows = claims()
    if args.unlisted is not None:
        docs = args.unlisted or ["README.md"] + sorted("Docs/" + f for f in os.listdir(os.path.join(ROOT, "Docs")) if f.endswith(".md"))
        unlisted(rows, docs)
        return 0
    if args.update:
        for doc in generated_blocks(update=True):
            print(f"claims: updated the committed run's tables in {doc}")
        return 0
    failures = check(rows, args.events)
    for message in missing_paths():
        failures += 1
        print(message)
    for doc in generated_blocks(update=False):
        failures += 1
        print(f"claims: {doc}: a table of the committed run is stale (run python3 .ci/claims.py --update)")
    print(f"claims: {len(rows)} claims, {failures} failed checks"
          + ("" if failures else " (every listed figure traces to a test or a committed run)"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
