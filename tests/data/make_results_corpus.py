"""Writes tests/data/results_corpus/: results files the loader must either accept or reject with a
ResultsError (never crash). Deterministic: run it again and the same files come out.

    python3 tests/data/make_results_corpus.py
"""

import copy
import json
import pathlib
import random

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE / "results_corpus"

VALID = {
    "context": {
        "offloadbench": {
            "schema_version": 1,
            "git_sha": "abc123",
            "start_time_utc": "2026-11-22T16:00:00Z",
            "incomplete": False,
            "suites": ["transfer"],
            "mode": "quick",
            "repetitions": 5,
            "devices": "0",
            "command_line": ["offloadbench", "run"],
        },
        "machine_fingerprint": {
            "gpu_models": [],
            "driver": "none",
            "cuda_runtime": "13.0",
            "cpu_model": "CPU",
        },
    },
    "benchmarks": [
        {
            "name": "transfer/host_memcpy/4KiB/real_time",
            "run_type": "iteration",
            "repetition_index": i,
            "real_time": 1000.0 + i,
            "cpu_time": 990.0,
            "time_unit": "ns",
            "bytes_per_second": 8.2e9,
            "skipped": False,
            "validated": True,
            "bytes": 4096,
            "family": "transfer",
            "op": "host_memcpy",
        }
        for i in range(5)
    ]
    + [
        {
            "name": "transfer/h2d/pinned/4KiB/manual_time",
            "run_type": "iteration",
            "repetition_index": 0,
            "real_time": 0,
            "time_unit": "ns",
            "skipped": True,
            "skip_reason": "no GPU",
            "iterations": 0,
        },
        {
            "name": "transfer/host_memcpy/4KiB/real_time_mean",
            "run_type": "aggregate",
            "aggregate_name": "mean",
            "real_time": 1002.0,
            "time_unit": "ns",
        },
    ],
}


def mutations(rng):
    """(name, document or raw text) pairs: structured damage first, then random byte edits."""
    yield "valid", VALID
    yield "empty_benchmarks", {**VALID, "benchmarks": []}
    for path, value in [
        (("context",), []),
        (("benchmarks",), {}),
        (("context", "offloadbench"), "x"),
        (("context", "offloadbench", "schema_version"), "1"),
        (("context", "offloadbench", "schema_version"), 2),
        (("context", "offloadbench", "schema_version"), 1.5),
        (("context", "machine_fingerprint"), "fp"),
        (("context", "machine_fingerprint"), None),
        (("context", "offloadbench", "start_time_utc"), 5),
        (("context", "offloadbench", "command_line"), "run"),
        (("context", "offloadbench", "suites"), 3),
        (("benchmarks", 0, "name"), 7),
        (("benchmarks", 0, "run_type"), None),
        (("benchmarks", 0, "real_time"), None),
        (("benchmarks", 0, "real_time"), "fast"),
        (("benchmarks", 0, "real_time"), -1.0),
        (("benchmarks", 0, "real_time"), [1.0]),
        (("benchmarks", 0, "time_unit"), "fortnights"),
        (("benchmarks", 0, "time_unit"), 9),
        (("benchmarks", 0, "skipped"), "no"),
        (("benchmarks", 0, "error_occurred"), "yes"),
        (("benchmarks", 0, "bytes"), {"a": 1}),
        (("benchmarks", 0), "row"),
        (("benchmarks", 0), None),
        (("benchmarks", 5, "skip_reason"), 3),
        (("benchmarks", 0, "bytes_per_second"), "many"),
    ]:
        doc = copy.deepcopy(VALID)
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        yield "set_" + "_".join(map(str, path)) + "_" + type(value).__name__, doc
    for path in [
        ("context", "machine_fingerprint"),
        ("context", "offloadbench"),
        ("benchmarks", 0, "real_time"),
        ("benchmarks", 0, "name"),
        ("benchmarks", 0, "time_unit"),
        ("context", "offloadbench", "git_sha"),
    ]:
        doc = copy.deepcopy(VALID)
        target = doc
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
        yield "drop_" + "_".join(map(str, path)), doc
    text = json.dumps(VALID, indent=1)
    yield "nan_bare", text.replace("1001.0", "NaN")
    yield "infinity_bare", text.replace("1001.0", "Infinity")
    yield "huge_number", text.replace("1001.0", "1e400")
    yield "bom", "\ufeff" + text
    yield "top_level_array", "[" + text + "]"
    yield "deep_nesting", "[" * 5000 + "]" * 5000
    yield "not_json", "offloadbench results\n"
    yield "empty", ""
    for cut in sorted(rng.sample(range(1, len(text)), 24)):
        yield f"truncated_at_{cut}", text[:cut]
    alphabet = '{}[]",:0123456789.eE-+ntfalsruNI\\ \n\x00\xff'
    for i in range(40):
        chars = list(text)
        for _ in range(rng.randint(1, 6)):
            pos = rng.randrange(len(chars))
            op = rng.choice("rid")
            if op == "r":
                chars[pos] = rng.choice(alphabet)
            elif op == "i":
                chars.insert(pos, rng.choice(alphabet))
            else:
                del chars[pos]
        yield f"mutated_{i:02}", "".join(chars)


def main():
    OUT.mkdir(exist_ok=True)
    for old in OUT.glob("*.json"):
        old.unlink()
    for name, item in mutations(random.Random(7)):
        data = item if isinstance(item, str) else json.dumps(item, indent=1)
        (OUT / f"{name}.json").write_bytes(data.encode("utf-8", "surrogateescape"))


if __name__ == "__main__":
    main()
