"""lab/tools/compare-error-rates --summarize on made-up runs: it counts a slowed row's verdicts and reports
the slowdown the injected runs really had, and it refuses to count when the injection did not take or
its substring names no case (as the harness matches it: a row's name less "/real_time")."""

import json
import random
import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "lab" / "tools" / "compare-error-rates"
DATA = ROOT / "tests" / "data" / "quick_cpu_reps10.json"
VICTIM = "transfer/host_memcpy/pretouched/threads:1/1MiB"


def write_runs(folder, injected_factor, substring=VICTIM):
    base = json.loads(DATA.read_text())
    rng = random.Random(7)
    (folder / "injected.txt").write_text(f"{substring}=50%\n")
    for name, factor in (
        ("P1", 1.0),
        ("P2", 1.0),
        ("I1", injected_factor),
        ("I2", injected_factor),
    ):
        doc = json.loads(json.dumps(base))
        for row in doc["benchmarks"]:
            if row.get("run_type") == "iteration" and not row.get("skipped"):
                row["real_time"] *= rng.uniform(0.995, 1.005)  # a steady machine
                if row["name"] == VICTIM + "/real_time":
                    row["real_time"] *= factor
        (folder / f"{name}.json").write_text(json.dumps(doc))


def summarize(folder, offloadbench_bin):
    return subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--out",
            str(folder),
            "--summarize",
            "--offloadbench",
            offloadbench_bin,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_slowdown_that_took_is_counted_with_what_it_measured(tmp_path, offloadbench_bin):
    write_runs(tmp_path, 1.5)
    done = summarize(tmp_path, offloadbench_bin)
    # A steady machine (±0.5%) and one row 50% slower: every target holds.
    assert done.returncode == 0, done.stdout + done.stderr
    line = next(l for l in done.stdout.splitlines() if l.startswith("| +50%"))
    assert "measured +50." in line, line
    assert "| 4 | 4/4 = 100.0%" in line and "SAME 0" in line, (
        line
    )  # 2 plain x 2 injected: SLOWER in each
    aa = next(l for l in done.stdout.splitlines() if l.startswith("| A/A"))
    assert "| 2 | 0/2 = 0.0%" in aa, aa  # no false alarm between the steady runs
    assert "other rows in the power pairs: 0 SLOWER/FASTER" in done.stdout, done.stdout
    # Each power pair's own figure for the slowed row is well under 50% on a steady machine, and it was caught.
    own = next(l for l in done.stdout.splitlines() if "figure in their pair was at most" in l)
    assert "| 4 | 4/4 = 100.0%" in own and own.endswith("| met |"), own


def test_a_slowdown_that_did_not_take_stops_the_count(tmp_path, offloadbench_bin):
    write_runs(tmp_path, 1.0)
    done = summarize(tmp_path, offloadbench_bin)
    assert done.returncode == 2
    assert "the injection did not take" in done.stderr


def test_a_substring_is_matched_as_the_harness_matches_it(tmp_path, offloadbench_bin):
    write_runs(tmp_path, 1.5, substring=VICTIM + "/real_time")  # never in a case name
    done = summarize(tmp_path, offloadbench_bin)
    assert done.returncode == 2
    assert "matches 0 cases" in done.stderr
