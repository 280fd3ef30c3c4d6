"""End to end: compare and history on real CPU-only runs, their exit codes, and plots.trend."""

import json
import re
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, load_json

FAST = [
    "--suite",
    "transfer",
    "--quick",
    "--sizes",
    "4KiB,1MiB",
    "--repetitions",
    "10",
    "--device",
    "cpu",
]


def measured_rows(doc):
    return [r for r in doc["benchmarks"] if r["run_type"] == "iteration" and not r.get("skipped")]


def slow_down_steadiest(doc, beyond=1.2):
    """Slows the benchmark with the least spread by more than its spread (so that BASE and NEW no
    longer overlap) and returns its name: a slowdown compare must call SLOWER even on a noisy machine."""
    times = {}
    for row in measured_rows(doc):
        times.setdefault(row["name"], []).append(row["real_time"])
    victim = min(times, key=lambda name: max(times[name]) / min(times[name]))
    factor = beyond * max(times[victim]) / min(times[victim])
    for row in doc["benchmarks"]:
        if row["name"] == victim:
            row["real_time"] *= factor
    return victim


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory, offloadbench_bin):
    out = tmp_path_factory.mktemp("aa")
    files = []
    for side in ("a", "b"):
        path = out / f"{side}.json"
        done = subprocess.run(
            [offloadbench_bin, "run", *FAST, "--out", str(path)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        files.append(path)
    return files


def test_compare_of_two_cpu_runs_gives_a_verdict_per_benchmark(
    two_runs, run_offloadbench, tmp_path
):
    base, new = two_runs
    md, js = tmp_path / "compare.md", tmp_path / "compare.json"
    done = run_offloadbench("compare", base, new, "--markdown", md, "--json", js)
    assert done.returncode in (0, 1), done.stderr
    result = load_json(js)
    measured = {
        r["name"]
        for r in load_json(base)["benchmarks"]
        if r["run_type"] == "iteration" and not r.get("skipped")
    }
    assert {r["name"] for r in result["rows"]} == measured
    assert all(r["verdict"] in ("SLOWER", "FASTER", "SAME", "INCONCLUSIVE") for r in result["rows"])
    assert (done.returncode == 1) == (result["counts"]["SLOWER"] > 0)
    assert result["metric"] == "real_time" and result["higher_is_better"] is False
    assert "| verdict | benchmark |" in md.read_text()
    counts = result["counts"]
    assert done.stdout.splitlines()[0] == (
        f"compare: {counts['SLOWER']} SLOWER, {counts['FASTER']} FASTER, {counts['SAME']} SAME, "
        f"{counts['INCONCLUSIVE']} INCONCLUSIVE of {len(result['rows'])} rows; geometric-mean change "
        f"{100 * (result['geomean_slowdown'] - 1):+.1f}%"
    ), done.stdout
    # What the pair says about the noise between the two runs, which every verdict allowed for.
    noise = result["run_pair_noise"]
    assert noise["benchmarks"] in (0, len(measured)) and noise["between"] >= 0
    # INCONCLUSIVE rows point to the tool that can decide them, on a next: line (SLOWER ones first).
    advice = [
        line
        for line in done.stdout.splitlines()
        if line.startswith("next: ") and "offloadbench ab" in line
    ]
    assert len(advice) == (
        1 if counts["INCONCLUSIVE"] + counts["SLOWER"] + counts["FASTER"] else 0
    ), done.stdout


def test_every_same_or_inconclusive_row_says_what_it_could_have_seen(
    two_runs, run_offloadbench, tmp_path
):
    base, new = two_runs
    md, js = tmp_path / "compare.md", tmp_path / "compare.json"
    done = run_offloadbench("compare", base, new, "--markdown", md, "--json", js)
    assert done.returncode in (0, 1), done.stderr
    result = load_json(js)
    undecided = [r for r in result["rows"] if r["verdict"] in ("SAME", "INCONCLUSIVE")]
    for row in undecided:
        # these files are of one process each: the figure says what would help
        assert row["could_see_text"].startswith("could see "), row
        assert "one process a side, run with --processes 10" in row["could_see_text"], row
        assert row["could_see"] is None or row["could_see"] >= row["delta"], row
    # The default text gives each row's figure in its column and the one-process advice once, on a
    # next: line; --verbose gives each row's whole figure and the counts by figure.
    rows = {
        line.split()[-1]: line
        for line in done.stdout.splitlines()
        if line.split() and "/" in line.split()[-1]
    }
    for row in undecided:
        figure = row["could_see_text"].removeprefix("could see ").split(":")[0]
        figure = {"no change": "none", "only > 1000%": "> 1000%"}.get(figure, figure)
        assert figure in rows[row["name"]], (figure, rows[row["name"]])
    if undecided:
        assert (
            "next: each file ran in one process: remeasure with run --repetitions 10 --processes 10"
            in done.stdout
        )
        verbose = run_offloadbench("compare", base, new, "--verbose")
        assert "could see: of the SAME/INCONCLUSIVE rows" in verbose.stdout
        for row in undecided:
            assert row["could_see_text"] in verbose.stdout
        assert "| could see |" in md.read_text()


def test_a_file_compared_with_itself_is_never_slower_or_faster(
    two_runs, run_offloadbench, tmp_path
):
    # SAME where the repetitions' spread is inside ±δ, INCONCLUSIVE where it is not: never a verdict.
    js = tmp_path / "self.json"
    done = run_offloadbench("compare", two_runs[0], two_runs[0], "--json", js)
    assert done.returncode == 0, done.stdout + done.stderr
    result = load_json(js)
    assert result["counts"]["SLOWER"] == result["counts"]["FASTER"] == 0
    for row in result["rows"]:
        assert row["verdict"] in ("SAME", "INCONCLUSIVE") and row["change"] == 0, row


def test_an_injected_slowdown_exits_1_and_is_listed_first(two_runs, run_offloadbench, tmp_path):
    doc = load_json(two_runs[0])
    victim = slow_down_steadiest(doc)
    slow = tmp_path / "slow.json"
    slow.write_text(json.dumps(doc))
    md = tmp_path / "slow.md"
    done = run_offloadbench("compare", two_runs[0], slow, "--markdown", md)
    assert done.returncode == 1, done.stdout + done.stderr
    table = [line for line in md.read_text().splitlines() if line.startswith("| ") and "`" in line]
    assert table[0].startswith("| SLOWER") and victim in table[0]
    assert sum(line.startswith("| SLOWER") for line in table) == 1, table


def test_three_repetitions_are_enough_and_two_are_inconclusive(
    two_runs, run_offloadbench, tmp_path
):
    # Welch's test needs two values a side; the default minimum is three. Keep the first k repetitions.
    def first(doc, k):
        seen = {}
        kept = []
        for row in doc["benchmarks"]:
            if row["run_type"] == "iteration" and not row.get("skipped"):
                seen[row["name"]] = seen.get(row["name"], 0) + 1
                if seen[row["name"]] > k:
                    continue
            kept.append(row)
        doc["benchmarks"] = kept
        return doc

    doc = load_json(two_runs[0])
    victim = slow_down_steadiest(
        doc, beyond=3
    )  # far beyond: three repetitions have few degrees of freedom
    for k, expected in ((3, 1), (2, 0)):
        base, slow = tmp_path / f"base{k}.json", tmp_path / f"slow{k}.json"
        base.write_text(json.dumps(first(load_json(two_runs[0]), k)))
        slow.write_text(json.dumps(first(json.loads(json.dumps(doc)), k)))
        js = tmp_path / f"k{k}.json"
        done = run_offloadbench("compare", base, slow, "--json", js)
        assert done.returncode == expected, done.stdout + done.stderr
        row = next(r for r in load_json(js)["rows"] if r["name"] == victim)
        assert row["verdict"] == ("SLOWER" if k == 3 else "INCONCLUSIVE"), row


def test_a_nan_time_is_rejected_naming_file_and_benchmark(two_runs, run_offloadbench, tmp_path):
    doc = load_json(two_runs[1])
    row = measured_rows(doc)[0]
    row["real_time"] = None  # how a NaN is written
    bad = tmp_path / "nan.json"
    bad.write_text(json.dumps(doc))
    done = run_offloadbench("compare", two_runs[0], bad)
    assert done.returncode == 2
    assert f"{bad}: benchmark '{row['name']}': 'real_time' is null" in done.stderr
    assert done.stderr.count("\n") == 1


def test_different_machines_are_refused_naming_the_field(two_runs, run_offloadbench, tmp_path):
    doc = load_json(two_runs[1])
    doc["context"]["machine_fingerprint"]["cpu_model"] = "Another CPU"
    other = tmp_path / "other.json"
    other.write_text(json.dumps(doc))
    done = run_offloadbench("compare", two_runs[0], other)
    assert done.returncode == 2
    assert "cpu_model" in done.stderr and "--allow-different-machines" in done.stderr
    assert done.stderr.count("\n") == 1
    assert run_offloadbench(
        "compare", two_runs[0], other, "--allow-different-machines"
    ).returncode in (0, 1)


@pytest.mark.parametrize(
    "content, problem",
    [
        ("", "empty file"),
        ('{"context": {', "not valid JSON"),
        (
            '{"context": {"offloadbench": {"schema_version": 7}}, "benchmarks": []}',
            "schema version 7",
        ),
        (
            '{"context": {"offloadbench": {"schema_version": 1}, "machine_fingerprint": {}}, "benchmarks": []}',
            "no benchmarks",
        ),
        (
            '{"context": {"offloadbench": {"schema_version": 1}}, "benchmarks": [{"name": "a"}]}',
            "run_type",
        ),
        (
            '{"context": {"offloadbench": {"schema_version": 1}, "machine_fingerprint": {}}, "benchmarks": '
            '[{"name": "a", "run_type": "iteration", "real_time": NaN}]}',
            "not valid JSON",
        ),
    ],
)
def test_bad_input_is_one_line_naming_the_file_and_exit_2(
    two_runs, run_offloadbench, tmp_path, content, problem
):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    done = run_offloadbench("compare", two_runs[0], bad)
    assert done.returncode == 2, done.stdout + done.stderr
    assert str(bad) in done.stderr and problem in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "args, problem",
    [
        (["--delta-cpu", "five"], "--delta-cpu"),
        (["--delta-cpu", "150%"], "out of range"),
        (["--delta-gpu", "0"], "out of range"),
        (["--rerun"], "--rerun"),  # re-measuring belongs to `offloadbench ab`
        (["--alpha", "0"], "--alpha"),
    ],
)
def test_bad_options_exit_2(two_runs, run_offloadbench, args, problem):
    done = run_offloadbench("compare", two_runs[0], two_runs[1], *args)
    assert done.returncode == 2 and problem in done.stderr, done.stderr


def test_history_of_a_directory_and_its_trend_plot(
    two_runs, run_offloadbench, offloadbench_bin, tmp_path
):
    nightly = tmp_path / "nightly"
    nightly.mkdir()
    for i, source in enumerate(two_runs):
        shutil.copy(source, nightly / f"{i}.json")
    history_json = tmp_path / "history.json"
    done = run_offloadbench("history", nightly, "--json", history_json, "--all")
    assert done.returncode == 0, done.stderr
    history = load_json(history_json)
    assert len(history["runs"]) == 2 and history["benchmarks"]
    assert all(len(b["points"]) == 2 for b in history["benchmarks"])
    png = tmp_path / "trend.png"
    plotted = subprocess.run(
        [
            sys.executable,
            "-m",
            "plots.trend",
            str(nightly),
            "--offloadbench",
            offloadbench_bin,
            "--out",
            str(png),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert plotted.returncode == 0, plotted.stderr
    assert png.stat().st_size > 1000


def test_history_of_an_empty_directory_exits_2(run_offloadbench, tmp_path):
    done = run_offloadbench("history", tmp_path)
    assert (
        done.returncode == 2
        and str(tmp_path) in done.stderr
        and "no finished results files" in done.stderr
    )


PAIRS = [
    ("tests/data/quick_cpu_p10_base.json", "tests/data/quick_cpu_p10_new.json"),
    ("tests/python/fixtures/cpu_only.json", "tests/data/quick_cpu_reps10.json"),
    ("tests/data/quick_cpu_p10_base.json", "tests/data/quick_cpu_p10_base.json"),
]


@pytest.mark.parametrize("base,new", PAIRS)
def test_compare_text_opens_with_the_verdict_and_what_next_in_lines_under_100_columns(
    run_offloadbench, base, new
):
    done = run_offloadbench("compare", ROOT / base, ROOT / new)
    assert done.returncode in (0, 1), done.stderr
    lines = done.stdout.splitlines()
    assert (
        lines[0].startswith("compare: ")
        and " SLOWER, " in lines[0]
        and "geometric-mean change" in lines[0]
    )
    assert lines[1].startswith("next: "), lines[:3]
    long = [line for line in lines if len(line) >= 100]
    assert not long, long
    # The method is for --verbose: none of it on the default text.
    for method in ("Holm", "alpha", "δ", "log times", "allowed for", "scaled by"):
        assert method not in done.stdout, method
    verbose = run_offloadbench("compare", ROOT / base, ROOT / new, "--verbose")
    assert verbose.returncode == done.returncode
    vlines = verbose.stdout.splitlines()
    assert vlines[:2] == lines[:2]
    assert not [line for line in vlines if len(line) >= 100]
    method = next(line for line in vlines if line.startswith("method: "))
    assert "real_time, positive = slower" in method and "δ 2.0% CPU" in method
    assert any(line.startswith("noise: ") for line in vlines)
    joined = " ".join(line.strip() for line in vlines)  # prose is wrapped at spaces
    assert "Holm, family-wise alpha 0.05" in joined and re.search(
        r"\b\d+/\d+ repetitions\b", joined
    ), joined


def test_compare_of_ten_process_files_names_the_rows_that_moved(run_offloadbench, tmp_path):
    # tests/data/make_process_pair.py moved three rows 1.5x slower and one 1.5x faster.
    base, new = (ROOT / p for p in PAIRS[0])
    done = run_offloadbench("compare", base, new, "--json", tmp_path / "c.json")
    result = load_json(tmp_path / "c.json")
    assert (
        result["processes"] == {"base": 10, "new": 10}
        and result["run_pair_noise"]["test"] == "floor"
    )
    assert done.returncode == (1 if result["counts"]["SLOWER"] else 0)
    lines = done.stdout.splitlines()
    if result["counts"]["SLOWER"]:
        assert (
            lines[1]
            == "next: confirm the SLOWER rows side by side: offloadbench ab BASE_EXE NEW_EXE"
        )
    for row in result["rows"]:
        if row["verdict"] in ("SLOWER", "FASTER"):
            assert any(
                line.startswith(row["verdict"]) and line.endswith(row["name"]) for line in lines
            ), row
    assert "shared shift: 3 rows of family transfer moved slower together" in done.stdout
