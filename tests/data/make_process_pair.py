"""Writes quick_cpu_p10_base.json and quick_cpu_p10_new.json: a SYNTHETIC pair of ten-process CPU files
for compare's output tests. BASE is quick_cpu_reps10.json with each repetition labelled as its own
process (as `run --repetitions 10 --processes 10` writes it); NEW is BASE with seeded noise of a few
percent, three benchmarks made 1.5x slower and one 1.5x faster. Aggregate rows are left out: compare
reads only iteration rows. Run: python3 tests/data/make_process_pair.py"""

import copy
import json
import pathlib
import random

HERE = pathlib.Path(__file__).resolve().parent
SLOWER = (
    "transfer/host_memcpy/pretouched/threads:1/4KiB/real_time",
    "transfer/host_memcpy/pretouched/threads:1/1MiB/real_time",
    "transfer/host_memcpy/pretouched/threads:2/16MiB/real_time",
)
FASTER = ("transfer/pin_cost/first_touch/1MiB/real_time",)


def labelled(doc, label):
    out = copy.deepcopy(doc)
    out["benchmarks"] = [r for r in out["benchmarks"] if r["run_type"] == "iteration"]
    for row in out["benchmarks"]:
        row["process"] = row["repetition_index"]
    ob = out["context"]["offloadbench"]
    ob["processes"] = 10
    ob["command_line"] = [f"synthetic fixture ({label}): tests/data/make_process_pair.py"]
    return out


def scaled(row, factor):
    row["real_time"] *= factor
    row["cpu_time"] *= factor
    for key in [k for k in row if k.endswith("_per_second")]:
        row[key] /= factor


source = json.load(open(HERE / "quick_cpu_reps10.json"))
names = {r["name"] for r in source["benchmarks"]}
assert set(SLOWER + FASTER) <= names, sorted(names)
base = labelled(source, "BASE")
new = labelled(source, "NEW")
rng = random.Random(65)
for row in new["benchmarks"]:
    factor = 1 + rng.gauss(0, 0.01)
    factor *= 1.5 if row["name"] in SLOWER else 1 / 1.5 if row["name"] in FASTER else 1
    scaled(row, factor)
for name, doc in (("quick_cpu_p10_base.json", base), ("quick_cpu_p10_new.json", new)):
    (HERE / name).write_text(json.dumps(doc, indent=1) + "\n")
