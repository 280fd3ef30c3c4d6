"""Reading a results file: the same checks as the C++ loader, and the rows the charts need.

A malformed file raises ResultsError with one line naming the file and the problem.
"""
import json
import math
import statistics

SCHEMA_VERSION = 1
TIME_SCALE = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


class ResultsError(Exception):
    pass


def load(path):
    try:
        with open(path) as f:
            doc = json.load(f, parse_constant=_refuse_constant)
    except OSError as e:
        raise ResultsError(f"{path}: cannot open: {e.strerror}") from None
    except ValueError as e:
        raise ResultsError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(doc, dict):
        raise ResultsError(f"{path}: not a results file (top level is not a JSON object)")
    if not isinstance(doc.get("context"), dict) or not isinstance(doc.get("benchmarks"), list):
        raise ResultsError(f"{path}: missing 'context' object or 'benchmarks' array")
    version = doc["context"].get("offloadbench", {}).get("schema_version")
    if version != SCHEMA_VERSION:
        raise ResultsError(f"{path}: schema version {version!r} is not supported (this reads {SCHEMA_VERSION})")
    for i, row in enumerate(doc["benchmarks"]):
        if not isinstance(row, dict) or not isinstance(row.get("name"), str):
            raise ResultsError(f"{path}: benchmark {i} has no 'name'")
    return doc


def _refuse_constant(name):
    raise ValueError(f"{name} is not strict JSON")


def seconds(row):
    """Seconds per iteration: real_time in its time_unit (None when absent)."""
    t = row.get("real_time")
    if not isinstance(t, (int, float)):
        return None
    return t * TIME_SCALE.get(row.get("time_unit", "ns"), 1e-9)


def usable(row):
    """A per-repetition row that ran and passed its checks."""
    return (row.get("run_type") == "iteration" and not row.get("skipped") and not row.get("error_occurred")
            and row.get("validated") is not False and (seconds(row) or 0) > 0)


def cases(doc, predicate=lambda row: True):
    """{name: {"row": first row, "rows": [...], "seconds": median}} over usable rows."""
    out = {}
    for row in doc["benchmarks"]:
        if usable(row) and predicate(row):
            out.setdefault(row["name"], {"row": row, "rows": []})["rows"].append(row)
    for case in out.values():
        case["seconds"] = statistics.median(seconds(r) for r in case["rows"])
        case["spread"] = (min(seconds(r) for r in case["rows"]), max(seconds(r) for r in case["rows"]))
    return out


def median_field(case, key):
    values = [r[key] for r in case["rows"] if isinstance(r.get(key), (int, float)) and math.isfinite(r[key])]
    return statistics.median(values) if values else None


def skipped_reasons(doc, predicate=lambda row: True):
    """The distinct skip reasons of the rows `predicate` selects."""
    return sorted({row.get("skip_reason", "") for row in doc["benchmarks"]
                   if row.get("run_type") == "iteration" and row.get("skipped") and predicate(row)})


def analysis(doc):
    return doc.get("analysis") if isinstance(doc.get("analysis"), dict) else None
