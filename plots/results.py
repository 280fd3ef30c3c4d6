"""Reading a results file: the same checks as the C++ loader, and the rows the charts need.

A malformed file raises ResultsError with one line naming the file and the problem.
"""

import json
import math
import os
import pathlib
import stat
import statistics

SCHEMA_VERSION = 1
TIME_SCALE = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
MAX_INPUT_BYTES = 128 << 20  # as harness/results/files.h
MAX_NESTING_DEPTH = 64  # as harness/results/results.h
SCHEMA_PATH = pathlib.Path(__file__).resolve().parent.parent / "docs" / "results.schema.json"


class ResultsError(Exception):
    pass


def load(path):
    """The C++ loader's rules (harness/results/results.cpp), in the same order, with the same limits."""
    text = _read_regular_file(path)
    if not text.strip():
        raise ResultsError(f"{path}: empty file")
    doc = _parse_strict(path, text)
    if not isinstance(doc, dict):
        raise ResultsError(f"{path}: not a results file (top level is not a JSON object)")
    if not isinstance(doc.get("context"), dict) or not isinstance(doc.get("benchmarks"), list):
        raise ResultsError(f"{path}: missing 'context' object or 'benchmarks' array")
    ob = doc["context"].get("offloadbench")
    version = ob.get("schema_version") if isinstance(ob, dict) else None
    if (
        type(version) is not int or version != SCHEMA_VERSION
    ):  # True == 1 and 1.0 == 1 in Python; not here
        raise ResultsError(
            f"{path}: schema version {version!r} is not supported (this reads {SCHEMA_VERSION})"
        )
    for i, row in enumerate(doc["benchmarks"]):
        if not isinstance(row, dict) or not isinstance(row.get("name"), str):
            raise ResultsError(f"{path}: benchmark {i} has no 'name'")
        if not isinstance(row.get("run_type"), str):
            raise ResultsError(f"{path}: benchmark '{row['name']}' has no 'run_type'")
    problem = _schema_problem(doc, _schema()) or _rows_problem(doc["benchmarks"])
    if problem:
        raise ResultsError(
            f"{path}: {problem[1:] if problem.startswith('.') else 'the document' + problem}"
        )
    return doc


def _rows_problem(rows):
    """harness/results/results.cpp's rows_problem: the rows of one name are repetitions of one case, so
    they agree on time_unit and threads, and a time has its unit. "" when they do."""
    first = {}
    for i, row in enumerate(rows):
        timed = any(type(row.get(k)) in (int, float) for k in ("real_time", "cpu_time"))
        if timed and "time_unit" not in row:
            return f".benchmarks[{i}] ('{row['name']}') has a time but no 'time_unit'"
        if row["run_type"] != "iteration":
            continue
        j = first.setdefault(row["name"], i)
        for key in ("time_unit", "threads"):
            if j != i and not _equal(row.get(key), rows[j].get(key)):
                return (
                    f".benchmarks[{i}] ('{row['name']}').{key} is {json.dumps(row.get(key))}, but benchmarks[{j}] "
                    f"of the same name has {json.dumps(rows[j].get(key))} (the rows of one name are repetitions "
                    "of one case and must agree)"
                )
    return ""


def _read_regular_file(path, follow_links=True, limit=MAX_INPUT_BYTES, kind="JSON"):
    """The text of a regular file of at most `limit` bytes, UTF-8 checked. `follow_links=False`: a
    symbolic link is refused (a file of an untrusted tree must not reach outside it)."""
    flags = (
        os.O_RDONLY | os.O_NONBLOCK | (0 if follow_links else os.O_NOFOLLOW)
    )  # a FIFO must not block the open
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if not follow_links and os.path.islink(path):
            raise ResultsError(
                f"{path}: is a symbolic link (not read: it may point out of the tree)"
            ) from None
        raise ResultsError(f"{path}: cannot open: {e.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise ResultsError(f"{path}: is a directory, not a results file")
        if not stat.S_ISREG(st.st_mode):
            raise ResultsError(f"{path}: is not a regular file (a device, FIFO or socket)")
        if st.st_size > limit:
            raise ResultsError(
                f"{path}: is {st.st_size} bytes, more than the {limit} bytes offloadbench reads"
            )
        data = f.read(limit + 1)  # a file that grows while read is still bounded
        if len(data) > limit:
            raise ResultsError(f"{path}: is more than the {limit} bytes offloadbench reads")
    try:
        return data.decode(
            "utf-8-sig"
        )  # a UTF-8 byte order mark is allowed, as nlohmann::json allows it
    except UnicodeDecodeError as e:
        raise ResultsError(
            f"{path}: not valid {kind} (not UTF-8: {e.reason} at byte {e.start})"
        ) from None


def read_tree_text(path, limit=4096):
    """A small text file of an untrusted tree (a baseline's commit): regular, not a link, UTF-8."""
    return _read_regular_file(path, follow_links=False, limit=limit, kind="text")


def _parse_strict(path, text):
    """JSON within the loaders' depth limit, with strict numbers (no NaN or infinities), or a one-line error."""
    if _nesting_depth(text) > MAX_NESTING_DEPTH:
        raise ResultsError(f"{path}: JSON nested deeper than {MAX_NESTING_DEPTH} levels")
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except (ValueError, RecursionError) as e:
        raise ResultsError(f"{path}: not valid JSON ({e})") from None


def load_json(path, schema, follow_links=False):
    """Any JSON file of an untrusted tree (an A/B verdict): the results loader's limits (regular file,
    size, depth, UTF-8, strict numbers), then the types `schema` gives (the results schema's subset of
    JSON Schema), before any field is used."""
    text = _read_regular_file(path, follow_links=follow_links)
    doc = _parse_strict(path, text)
    problem = _schema_problem(doc, schema)
    if problem:
        raise ResultsError(
            f"{path}: {problem[1:] if problem.startswith('.') else 'the document' + problem}"
        )
    return doc


def _nesting_depth(text):
    depth = deepest = 0
    in_string = escaped = False
    for c in text:
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}" and depth > 0:
            depth -= 1
    return deepest


def _refuse_constant(name):
    raise ValueError(f"{name} is not strict JSON")


def _finite_float(text):
    value = float(text)
    if not math.isfinite(value):  # 1e999: C++ refuses a number a double cannot hold; so do we
        raise ValueError(f"number {text} is out of range")
    return value


_SCHEMA = []


def _schema():
    if not _SCHEMA:
        _SCHEMA.append(json.loads(SCHEMA_PATH.read_text()))
    return _SCHEMA[0]


_TYPES = {
    "integer": lambda v: type(v) is int,
    "number": lambda v: type(v) in (int, float),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
}


def _equal(a, b):
    return a == b and type(a) is type(b)


def _schema_problem(value, schema):
    """harness/results/results_schema.cpp's check: the types of the fields present, "" when all fit."""
    if "$ref" in schema:  # "#/$defs/…", within the results schema only
        schema = _schema()["$defs"][schema["$ref"].rsplit("/", 1)[1]]
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_TYPES.get(t, lambda v: True)(value) for t in types):
            return f" is {json.dumps(value)[:80]}, expected {json.dumps(schema['type'])}"
    if "const" in schema and not _equal(value, schema["const"]):
        return f" is {json.dumps(value)[:80]}, expected {json.dumps(schema['const'])}"
    if "enum" in schema and not any(_equal(value, e) for e in schema["enum"]):
        return f" is {json.dumps(value)[:80]}, expected one of {json.dumps(schema['enum'])}"
    if "minimum" in schema and type(value) in (int, float) and value < schema["minimum"]:
        return f" is {value}, below the minimum {schema['minimum']}"
    if "minLength" in schema and isinstance(value, str) and len(value) < schema["minLength"]:
        return f" is shorter than {schema['minLength']} character(s)"
    if "oneOf" in schema and sum(not _schema_problem(value, o) for o in schema["oneOf"]) != 1:
        return f" is {json.dumps(value)[:80]}, which the schema does not allow"
    if isinstance(value, dict):
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                p = _schema_problem(value[key], sub)
                if p:
                    return f".{key}{p}"
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            p = _schema_problem(item, schema["items"])
            if p:
                named = (
                    f" ('{item['name']}')"
                    if isinstance(item, dict) and isinstance(item.get("name"), str)
                    else ""
                )
                return f"[{i}]{named}{p}"
    return ""


def seconds(row):
    """Seconds per iteration: real_time in its time_unit (None when absent)."""
    t = row.get("real_time")
    if not isinstance(t, (int, float)):
        return None
    return t * TIME_SCALE.get(row.get("time_unit", "ns"), 1e-9)


def usable(row):
    """A per-repetition row that ran and passed its checks."""
    return (
        row.get("run_type") == "iteration"
        and not row.get("skipped")
        and not row.get("error_occurred")
        and row.get("validated") is not False
        and (seconds(row) or 0) > 0
    )


def broken_rows(doc):
    """{(name, repetition_index or None)}: the rows the analysis's self-checks left out of every finding
    (analysis.invariants.violations; None: every repetition of the case)."""
    block = analysis(doc) or {}
    checks = block.get("invariants") if isinstance(block.get("invariants"), dict) else {}
    violations = checks.get("violations") if isinstance(checks.get("violations"), list) else []
    return {
        (
            v["name"],
            v.get("repetition_index") if isinstance(v.get("repetition_index"), int) else None,
        )
        for v in violations
        if isinstance(v, dict) and isinstance(v.get("name"), str)
    }


def left_out(row, broken):
    """Whether a self-check left `row` out of the findings (`broken`: broken_rows(doc))."""
    name = row.get("name")
    return bool(broken) and (
        (name, None) in broken or (name, row.get("repetition_index")) in broken
    )


def cases(doc, predicate=lambda row: True):
    """{name: {"row": first row, "rows": [...], "seconds": median}} over usable rows that broke no
    self-check: a chart shows what the findings rest on."""
    out = {}
    broken = broken_rows(doc)
    for row in doc["benchmarks"]:
        if usable(row) and not left_out(row, broken) and predicate(row):
            out.setdefault(row["name"], {"row": row, "rows": []})["rows"].append(row)
    for case in out.values():
        case["seconds"] = statistics.median(seconds(r) for r in case["rows"])
        case["spread"] = (
            min(seconds(r) for r in case["rows"]),
            max(seconds(r) for r in case["rows"]),
        )
    return out


def median_field(case, key):
    values = [
        r[key]
        for r in case["rows"]
        if isinstance(r.get(key), (int, float)) and math.isfinite(r[key])
    ]
    return statistics.median(values) if values else None


def skipped_reasons(doc, predicate=lambda row: True):
    """The distinct skip reasons of the rows `predicate` selects."""
    return sorted(
        {
            row.get("skip_reason", "")
            for row in doc["benchmarks"]
            if row.get("run_type") == "iteration" and row.get("skipped") and predicate(row)
        }
    )


def load_analysis(path):
    """An analysis block kept in a file of its own (what `offloadbench plot` hands over for a results file
    that has none, so that the results file is only read), checked as the block inside a file would be."""
    block = load_json(path, {"type": "object"}, follow_links=True)
    problem = _schema_problem(block, _schema()["properties"]["analysis"])
    if problem:
        raise ResultsError(f"{path}: analysis{problem}")
    return block


def analysis(doc):
    return doc.get("analysis") if isinstance(doc.get("analysis"), dict) else None
