#!/usr/bin/env python3
"""Compares the structure of two `demo all --format json` reports (`demo::report::Report`): the
same sections in the same order, and in each the same blocks: lines by position, tables by id,
with the same chart kind, columns (header), row count and first cells (the row labels), and the
same measurements (variant, kernel, series, passed). Times and the cells that hold them may
differ; nothing else may.

    python3 same_tables.py OLD.json NEW.json

Prints one line per difference and exits 1 if there is any, else prints a summary and exits 0.
"""

import json
import sys


def table_shape(t):
    return {
        "chart": t.get("chart"),
        "header": t.get("header"),
        "rows": len(t.get("rows", [])),
        "labels": [row[0] if row else None for row in t.get("rows", [])],
        "measurements": [
            (m.get("variant"), m.get("kernel"), m.get("series"), m.get("passed"))
            for m in t.get("measurements", [])
        ],
    }


def section_shape(s):
    tables, lines = [], 0
    for b in s.get("blocks", []):
        if "table" in b:
            tables.append((b["table"]["id"], table_shape(b["table"])))
        elif "line" in b:
            lines += 1
        else:
            raise SystemExit(f"unknown block {list(b)}")
    return {"tables": tables, "lines": lines, "error": s.get("error") is not None}


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    old, new = (json.load(open(p)) for p in sys.argv[1:])
    diffs = []
    o_names = [s["pattern"] for s in old["sections"]]
    n_names = [s["pattern"] for s in new["sections"]]
    if o_names != n_names:
        diffs.append(f"sections: {o_names} -> {n_names}")
    tables = measurements = 0
    for o, n in zip(old["sections"], new["sections"]):
        name = o["pattern"]
        os_, ns = section_shape(o), section_shape(n)
        if os_["error"] or ns["error"]:
            diffs.append(f"{name}: error in old {os_['error']}, in new {ns['error']}")
        if os_["lines"] != ns["lines"]:
            diffs.append(f"{name}: {os_['lines']} lines -> {ns['lines']}")
        o_ids = [t for t, _ in os_["tables"]]
        n_ids = [t for t, _ in ns["tables"]]
        if o_ids != n_ids:
            diffs.append(f"{name}: tables {o_ids} -> {n_ids}")
            continue
        for (tid, a), (_, b) in zip(os_["tables"], ns["tables"]):
            tables += 1
            measurements += len(a["measurements"])
            for key in a:
                if a[key] != b[key]:
                    diffs.append(f"{name}/{tid}: {key}: {a[key]} -> {b[key]}")
    for d in diffs:
        print(d)
    if diffs:
        print(f"{len(diffs)} difference(s)")
        sys.exit(1)
    print(f"same structure: {len(o_names)} sections, {tables} tables, {measurements} measurements")


if __name__ == "__main__":
    main()
