#!/usr/bin/env python3
"""After a new committed run: rewrite each `run:` claim's number (in the doc and in its claims row) from the old
run's value to the new one, at the precision the text gives. Usage: python3 .ci/reword-claims.py OLD.json [--apply]
(OLD.json: the previous committed run, e.g. `git show HEAD:Benchmarks/results/latest.json`; the new run is
Benchmarks/results/latest.json). Without --apply it only prints. Then: the goals' words by hand, `claims.py --update`, `claims.py`. Prints what it changes and what it cannot."""
import json, re, sys
import importlib.util
import os
OLD_PATH = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else sys.exit(__doc__)
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
spec = importlib.util.spec_from_file_location("claims", ".ci/claims.py"); C = importlib.util.module_from_spec(spec); spec.loader.exec_module(C)
old = json.load(open(OLD_PATH)); new = json.load(open(C.BENCHMARK)); apply = "--apply" in sys.argv

def fmt_like(value, digits, factor, dec):
    if "," in digits and dec == 0:
        return f"{round(value / factor):,}"
    return f"{value / factor:.{dec}f}"

def pattern_for(quote):
    return re.compile("".join(r"[\s*_`]+" if ch == " " else re.escape(ch) + r"[*_`]*" for ch in C.normalise(quote)))

def replace_nth(text, n, new_digits):
    ms = list(C.NUMBER.finditer(text))
    m = ms[n]
    digits = m.group(1).rstrip(",")
    return text[:m.start(1)] + new_digits + text[m.start(1) + len(digits):]

problems = []
for line, doc, quote, checks in C.claims():
    claimed = set()
    for item in (c.strip() for c in checks.split(";") if c.strip()):
        kind, _, argument = item.partition(":")
        if kind.strip() != "run":
            continue
        for key in (a.strip().strip("`") for a in argument.split(",")):
            nv, ov = C.benchmark_value(new, key), C.benchmark_value(old, key)
            if nv is None:
                problems.append(f"{doc}: {key} not in the new run ({quote[:60]})"); continue
            index = None
            for i, m in enumerate(C.NUMBER.finditer(quote)):
                digits, factor, dec, val = C.number_parts(m)
                if i not in claimed and ov is not None and abs(val - ov) <= factor * 10 ** -dec / 2 + 1e-9:
                    index = i; break
            if index is None:
                if not C.quoted(nv, quote):
                    problems.append(f"{doc}:{line}: {key}: old value {ov} not found in \"{quote}\" (new {nv})")
                continue
            claimed.add(index)
            digits, factor, dec, _ = C.number_parts(list(C.NUMBER.finditer(quote))[index])
            new_digits = fmt_like(nv, digits, factor, dec)
            if new_digits == digits:
                continue
            text = open(doc).read()
            m = pattern_for(quote).search(text)
            if not m:
                problems.append(f"{doc}:{line}: quote not found in doc: {quote[:60]}"); continue
            span = text[m.start():m.end()]
            if len(list(C.NUMBER.finditer(span))) != len(list(C.NUMBER.finditer(quote))):
                problems.append(f"{doc}:{line}: numbers differ between quote and doc: {quote[:60]}"); continue
            newquote = replace_nth(quote, index, new_digits)
            print(f"{doc}: {key}: {digits} -> {new_digits}   [{quote[:80]}]")
            if apply:
                open(doc, "w").write(text[:m.start()] + replace_nth(span, index, new_digits) + text[m.end():])
                rel = open(C.CLAIMS_DOC).read()
                assert f'"{quote}"' in rel, quote
                open(C.CLAIMS_DOC, "w").write(rel.replace(f'"{quote}"', f'"{newquote}"', 1))
            quote = newquote
for p in problems: print("CANNOT:", p)
