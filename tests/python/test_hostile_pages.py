"""Issue 54's reproductions: the pages and charts built from results files and nightly trees, which come
from CI artifacts, other machines and other people's branches. Each test fails without its fix: the
item numbers are the issue's. The C++ halves are in tests/test_hostile_inputs.cpp; lab/tools/hostile-inputs
tries the same classes among several hundred others."""

import copy
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT))
from plots import files as py_files  # noqa: E402

GOOD = json.loads((ROOT / "tests" / "data" / "quick_cpu_reps10.json").read_text())
GPU_FIXTURE = json.loads(
    (ROOT / "tests" / "python" / "fixtures" / "gpu_synthetic.json").read_text()
)
PAYLOAD = "<script>alert(1)</script>`$x$`<img src=x onerror=alert(2)>"


def one_line(done, code=2):
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == code, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    return lines[0]


def write(path, doc):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def night(i, change=None):
    doc = copy.deepcopy(GOOD)
    doc["context"]["offloadbench"].update(
        start_time_utc=f"2026-10-{i + 1:02}T02:17:00Z", git_sha=f"{i + 1:012x}"
    )
    if change:
        change(doc)
    return doc


def tree(tmp_path, machine="m1", nights=3, change=None):
    """A nightly results tree (ci/nightly-gpu.yml's layout) of one machine."""
    root = tmp_path / "tree"
    for i in range(nights):
        write(
            root / "history" / machine / f"2026100{i + 1}T021700Z-{i + 1:012x}.json",
            night(i, change),
        )
    return root


def ab_file(root, machine="m1", counts=None, name="transfer/host_memcpy/x", text=None):
    counts = (
        counts if counts is not None else {"SLOWER": 1, "FASTER": 0, "SAME": 0, "INCONCLUSIVE": 0}
    )
    doc = {
        "ab_schema_version": 1,
        "context": {},
        "counts": counts,
        "benchmarks": [
            {
                "name": name,
                "verdict": "SLOWER",
                "change": 0.1,
                "interval_low": 0.05,
                "interval_high": 0.15,
                "reason": "slower",
            }
        ],
    }
    return write(
        root / "ab" / machine / "20261003T021700Z-abc.json", text if text is not None else doc
    )


def site_text(site):
    return "".join(p.read_text() for p in site.rglob("*.html"))


def dashboard(run_offloadbench, root, site, **kwargs):
    return run_offloadbench(
        "dashboard", root, "--out", site, timeout=kwargs.pop("timeout", 300), **kwargs
    )


# 1. The A/B file's counts reached index.html unescaped (a <script> ran); they are typed now.
def test_ab_counts_are_typed_and_ab_names_escaped(run_offloadbench, tmp_path):
    root = tree(tmp_path)
    ab_file(root, counts={"SLOWER": "<script>alert(1)</script>"})
    assert "counts.SLOWER" in one_line(dashboard(run_offloadbench, root, tmp_path / "site"))
    assert not (tmp_path / "site").exists()
    ab_file(root, name=PAYLOAD)
    done = dashboard(run_offloadbench, root, tmp_path / "site")
    assert done.returncode == 0, done.stderr
    pages = site_text(tmp_path / "site")
    assert "<script" not in pages and "<img src=x" not in pages
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in pages


# 2. A symlinked baselines/<machine>.sha published whatever it pointed at (/proc/self/environ, .git/config).
@pytest.mark.parametrize("target", ["outside", "/proc/self/environ"])
def test_a_baseline_linked_out_of_the_tree_is_not_read(run_offloadbench, tmp_path, target):
    root = tree(tmp_path)
    secret = write(tmp_path / "outside", "token=SECRET-54")
    (root / "baselines").mkdir()
    (root / "baselines" / "m1.sha").symlink_to(secret if target == "outside" else target)
    line = one_line(
        dashboard(
            run_offloadbench, root, tmp_path / "site", env={**os.environ, "TOKEN": "SECRET-54"}
        )
    )
    assert "m1.sha" in line and "link" in line
    assert not (tmp_path / "site").exists()


# 3. compare --markdown: a backtick in a name closed its code span, and a raw <img> reached the summary.
def test_compare_markdown_keeps_names_in_their_code_spans(run_offloadbench, tmp_path):
    doc = copy.deepcopy(GOOD)
    hostile = "x` <img src=x onerror=alert(1)> `y"
    for row in doc["benchmarks"]:
        if row["name"].startswith("transfer/host_memcpy/pretouched/threads:1/4KiB/"):
            row["name"] = row["run_name"] = hostile
    base = write(tmp_path / "base.json", doc)
    done = run_offloadbench("compare", base, base, "--markdown", tmp_path / "c.md")
    assert done.returncode in (0, 1), done.stderr
    md = (tmp_path / "c.md").read_text()
    assert (
        f"| ``{hostile}`` |" in md
    )  # the span's fence is longer than any backtick run in the name
    assert all("<img" not in line for line in md.splitlines() if hostile not in line)


# 4. plot report.html --out . replaced the results file by HTML; an input named like a chart became a chart.
def test_plot_never_replaces_its_input(run_offloadbench, tmp_path):
    results = write(tmp_path / "report.html", GOOD)
    before = results.read_bytes()
    assert "one of the inputs" in one_line(run_offloadbench("plot", results, "--out", tmp_path))
    assert results.read_bytes() == before
    chart_named = write(tmp_path / "bandwidth_host_memcpy.png", GOOD)
    done = run_offloadbench("plot", chart_named, "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    assert chart_named.read_bytes() == before
    report = (tmp_path / "report.html").read_text()
    assert "bandwidth_host_memcpy-" in report and "src='bandwidth_host_memcpy.png'" not in report


# 5. plot wrote through a symlinked output folder (--out and the default <stem>-plots).
@pytest.mark.parametrize("which", ["--out", "default"])
def test_plot_does_not_write_through_a_linked_folder(run_offloadbench, tmp_path, which):
    results = write(tmp_path / "r.json", GOOD)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / ("link" if which == "--out" else "r-plots")
    link.symlink_to(elsewhere)
    args = ["--out", link] if which == "--out" else []
    assert "symbolic link" in one_line(run_offloadbench("plot", results, *args))
    assert not os.listdir(elsewhere)


# 6 and 11. Chart names made from data: two groups that slug alike, and names too long for a file system.
def test_chart_names_from_data_are_distinct_and_bounded(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from plots import common

    names = ["compute/triad/fp32", "compute.triad.fp32", "g" * 300, "g" * 300 + "h"]
    saved = []
    for name in names:
        fig, ax = plt.subplots()
        ax.set_title(name)
        saved.append(common.save(fig, tmp_path, f"time_{common.slug(name)}", name))
    pngs = [chart["png"] for chart in saved]
    assert len(set(pngs)) == len(names), pngs
    assert all(
        len(png) <= py_files.MAX_STEM + 4 and (tmp_path / png).stat().st_size > 1000 for png in pngs
    )
    assert pngs[0] == "time_compute_triad_fp32.png"  # a name that fits and is free stays as it was


# 7. A FIFO among the A/B files hung the dashboard; a link to /dev/zero was read without limit.
@pytest.mark.parametrize("kind", ["fifo", "dev_zero"])
def test_an_ab_entry_that_is_not_a_regular_file_is_refused_at_once(
    run_offloadbench, tmp_path, kind
):
    root = tree(tmp_path)
    entry = root / "ab" / "m1" / "20261003T021700Z-abc.json"
    entry.parent.mkdir(parents=True)
    os.mkfifo(entry) if kind == "fifo" else entry.symlink_to("/dev/zero")
    line = one_line(dashboard(run_offloadbench, root, tmp_path / "site", timeout=120))
    assert entry.name in line


# 8. Untyped fields gave tracebacks (plot, fleet report, dashboard) and raw nlohmann errors (summary).
def set_path(doc, path, value):
    *parents, last = path
    for key in parents:
        doc = doc[key]
    doc[last] = value


UNTYPED = [
    (("context", "host", "memory_total_bytes"), "lots", "memory_total_bytes"),
    (("context", "cuda", "gpus", 0, "pcie_link"), [16], "pcie_link"),
    (
        ("context", "cuda", "gpus", 0, "pcie_link", "theoretical_bytes_per_second"),
        "fast",
        "theoretical_bytes",
    ),
    (("context", "offloadbench", "git_sha"), 12, "git_sha"),
    (("analysis", "headlines"), [1, 2], "headlines"),
    (("analysis", "crossovers"), {"a": 1}, "crossovers"),
    (("analysis", "speedups", 0, "speedup"), None, "speedup"),
]


@pytest.fixture(scope="module")
def analysed_gpu_doc(tmp_path_factory, offloadbench_bin):
    folder = tmp_path_factory.mktemp("gpu")
    write(folder / "gpu.json", GPU_FIXTURE)
    subprocess.run(
        [offloadbench_bin, "analyze", folder / "gpu.json"], check=True, capture_output=True
    )
    return json.loads((folder / "gpu.json").read_text())


@pytest.mark.parametrize("path,value,field", UNTYPED, ids=[u[2] for u in UNTYPED])
def test_fields_of_the_wrong_type_are_one_line_in_every_reader(
    run_offloadbench, tmp_path, analysed_gpu_doc, path, value, field
):
    doc = copy.deepcopy(analysed_gpu_doc)
    set_path(doc, path, value)
    bad = write(tmp_path / "bad.json", doc)
    other = write(tmp_path / "other.json", analysed_gpu_doc)
    for args in (["summary", bad], ["plot", bad], ["plot", other, bad]):
        line = one_line(run_offloadbench(*args))
        assert "bad.json" in line and field in line, (args, line)
    assert not (tmp_path / "bad-plots").exists() and not (tmp_path / "fleet-plots").exists()
    if path[0] == "context":  # the dashboard reads each machine's context
        root = tree(
            tmp_path,
            change=lambda d: (
                set_path(d, path, value)
                if path[2] != "gpus"
                else d["context"].update(cuda=doc["context"]["cuda"])
            ),
        )
        assert field in one_line(dashboard(run_offloadbench, root, tmp_path / "site"))


# 9. Deep A/B JSON (RecursionError), a baseline that is not UTF-8, '$' in text matplotlib draws.
def test_deep_ab_and_binary_baseline_are_one_line(run_offloadbench, tmp_path):
    root = tree(tmp_path)
    ab_file(root, text='{"counts": ' + "[" * 5000 + "]" * 5000 + "}")
    assert "nested deeper" in one_line(dashboard(run_offloadbench, root, tmp_path / "site"))
    (root / "ab").rename(tmp_path / "ab-aside")
    write(root / "baselines" / "m1.sha", "")
    (root / "baselines" / "m1.sha").write_bytes(b"\xff\xfe abc")
    assert "not UTF-8" in one_line(dashboard(run_offloadbench, root, tmp_path / "site"))


def test_dollar_signs_in_data_draw_literally(run_offloadbench, tmp_path, analysed_gpu_doc):
    # The fleet report labels each series with the machine's host name: "$x^{$" was mathtext that does
    # not parse, and the whole report was lost to a traceback.
    machines = []
    for host, fingerprint in (("$x^{$", "one"), ("b$", "two")):
        doc = copy.deepcopy(analysed_gpu_doc)
        doc["context"]["host"]["hostname"] = host
        doc["context"]["machine_fingerprint"]["id"] = fingerprint
        machines.append(write(tmp_path / f"{fingerprint}.json", doc))
    done = run_offloadbench("plot", *machines, "--out", tmp_path / "fleet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = (tmp_path / "fleet" / "report.html").read_text()
    assert "could not be drawn" not in report and "$x^{$" in report
    assert len(list((tmp_path / "fleet").glob("*.png"))) >= 5


def test_ctrl_c_is_one_line_exit_130_and_leaves_no_partial_charts(
    offloadbench_bin, tmp_path, analysed_gpu_doc
):
    # The GPU file draws some twenty charts: Ctrl-C lands mid-way, not after the report is written.
    results = write(tmp_path / "r.json", analysed_gpu_doc)
    proc = subprocess.Popen(
        [offloadbench_bin, "plot", results],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    outdir = tmp_path / "r-plots"
    deadline = time.time() + 300
    while (
        not (outdir.is_dir() and any(p.suffix == ".png" for p in outdir.iterdir()))
        and time.time() < deadline
    ):
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C does: the whole foreground group
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 1, err
    assert not outdir.exists()


def test_python_optimize_2_draws_the_same(run_offloadbench, tmp_path):
    results = write(tmp_path / "r.json", GOOD)
    done = run_offloadbench("plot", results, env={**os.environ, "PYTHONOPTIMIZE": "2"})
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "r-plots" / "report.html").is_file()


# 10. Rows of one name with other units or thread counts were pooled; a missing time_unit was read as ns;
# negative times passed some readers.
def change_rows(change, name="transfer/host_memcpy/pretouched/threads:1/4KiB/real_time"):
    doc = copy.deepcopy(GOOD)
    rows = [r for r in doc["benchmarks"] if r["name"] == name and r["run_type"] == "iteration"]
    change(rows)
    return doc


MIXED = [
    (
        "time_unit",
        lambda rows: rows[5].update(time_unit="ns", real_time=rows[5]["real_time"] * 1000),
    ),
    ("threads", lambda rows: rows[5].update(threads=2)),
    ("no_time_unit", lambda rows: rows[0].pop("time_unit")),
    ("negative", lambda rows: rows[0].update(real_time=-7.5)),
]


@pytest.mark.parametrize("tag,change", MIXED, ids=[m[0] for m in MIXED])
def test_rows_that_cannot_be_pooled_are_refused_by_every_reader(
    run_offloadbench, tmp_path, tag, change
):
    bad = write(tmp_path / "bad.json", change_rows(change))
    good = write(tmp_path / "good.json", GOOD)
    field = {"no_time_unit": "time_unit", "negative": "real_time"}.get(tag, tag)
    for args in (
        ["summary", bad],
        ["analyze", bad],
        ["export", "--format", "bencher", bad],
        ["compare", good, bad],
        ["plot", bad],
    ):
        line = one_line(run_offloadbench(*args))
        assert "bad.json" in line and field in line, (args, line)


def test_a_huge_change_is_not_printed_as_inf(run_offloadbench, tmp_path):
    good = write(tmp_path / "good.json", GOOD)
    huge = write(
        tmp_path / "huge.json", change_rows(lambda rows: [r.update(real_time=1e308) for r in rows])
    )
    done = run_offloadbench(
        "compare", good, huge, "--markdown", tmp_path / "c.md", "--json", tmp_path / "c.json"
    )
    assert done.returncode in (0, 1), done.stderr
    assert "inf%" not in done.stdout + (tmp_path / "c.md").read_text()


# 11. A machine folder named index.html stopped the whole site; a 300-character name broke the files.
def test_machine_and_benchmark_names_never_break_the_site(run_offloadbench, tmp_path):
    long_name = "transfer/" + "n" * 300

    def rename(doc):
        for row in doc["benchmarks"]:
            if row["name"].startswith("transfer/host_memcpy/pretouched/threads:1/4KiB/"):
                row["name"] = row["run_name"] = long_name

    root = tree(tmp_path, machine="index.html", change=rename)
    done = dashboard(run_offloadbench, root, tmp_path / "site")
    assert done.returncode == 0, done.stderr
    site = tmp_path / "site"
    assert "<h1>offloadbench nightly dashboard</h1>" in (site / "index.html").read_text()
    machine_pages = [p for p in site.glob("*/index.html")]
    assert len(machine_pages) == 1 and "machine index.html" in machine_pages[0].read_text()
    assert all(len(p.name) <= py_files.MAX_STEM + 5 for p in site.rglob("*"))


# 12. An OFFLOADBENCH_PYTHON that prints what the plotter prints but draws nothing passed as exit 0.
def test_a_plotter_that_writes_nothing_is_not_a_success(run_offloadbench, tmp_path):
    fake = write(
        tmp_path / "fake-python",
        "#!/bin/sh\necho 'plots: ready'\necho 'plots: 9 chart(s), 0 missing; "
        "report: x/report.html'\nexit 0\n",
    )
    fake.chmod(0o755)
    results = write(tmp_path / "r.json", GOOD)
    line = one_line(
        run_offloadbench("plot", results, env={**os.environ, "OFFLOADBENCH_PYTHON": str(fake)}),
        code=1,
    )
    assert "report.html" in line


# What every output kind does with every string field: a payload in each, then no raw markup anywhere.
def test_a_payload_in_every_string_field_reaches_no_page_raw(
    run_offloadbench, tmp_path, analysed_gpu_doc
):
    doc = copy.deepcopy(analysed_gpu_doc)

    def poison(value):
        if isinstance(value, dict):
            return {
                k: (
                    PAYLOAD + v
                    if isinstance(v, str)
                    and k
                    not in (
                        "run_type",
                        "time_unit",
                        "mode",
                        "sweep",
                        "view",
                        "device",
                        "start_time_utc",
                        "end_time_utc",
                        "family",
                        "series",
                        "cpu_view",
                        "kind",
                        "compare_group",
                    )
                    else poison(v)
                )
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [poison(v) for v in value]
        return value

    doc["context"] = poison(doc["context"])
    doc["analysis"]["headlines"] = [PAYLOAD + h for h in doc["analysis"]["headlines"]]
    for row in doc["benchmarks"]:
        row["name"] = row["run_name"] = PAYLOAD + row["name"]
    poisoned = write(tmp_path / "p.json", doc)
    done = run_offloadbench("plot", poisoned)
    assert done.returncode == 0, done.stderr
    report = (tmp_path / "p-plots" / "report.html").read_text()
    assert "<script" not in report and "<img src=x" not in report
    assert "could not be drawn" not in report, re.findall(
        r"<li>[^<]*could not be drawn[^<]*</li>", report
    )
