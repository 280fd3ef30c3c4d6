"""The analysis and the charts end to end, on committed fixtures: a real CPU-only file from a
machine without a GPU, and a synthetic GPU-shaped file (make_gpu_fixture.py) whose crossovers are
known from the models that made it."""

import errno
import importlib.util
import json
import math
import os
import pathlib
import resource
import shutil
import signal
import subprocess
import sys

import pytest

from conftest import ROOT, load_json

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"
GPU_FIXTURE = FIXTURES / "gpu_synthetic.json"
CPU_FIXTURE = FIXTURES / "cpu_only.json"


def fixture_models():
    spec = importlib.util.spec_from_file_location(
        "make_gpu_fixture", FIXTURES / "make_gpu_fixture.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def crossing(f, lo, hi):
    """The x in [lo, hi] where f changes sign (bisection on log x)."""
    a, b = math.log(lo), math.log(hi)
    for _ in range(100):
        m = 0.5 * (a + b)
        if (f(math.exp(a)) < 0) == (f(math.exp(m)) < 0):
            a = m
        else:
            b = m
    return math.exp(0.5 * (a + b))


def interpolated(cpu, gpu, sizes):
    """What the analysis must find on the fixture's grid: log speedup linear in log size between the
    last losing size and the next (the medians are the models' values: the jitter is symmetric)."""
    speedups = [cpu(n) / gpu(n) for n in sizes]
    i = max(k for k, s in enumerate(speedups) if s < 1)
    ya, yb = math.log(speedups[i]), math.log(speedups[i + 1])
    xa, xb = math.log(sizes[i]), math.log(sizes[i + 1])
    return math.exp(xa + (-ya / (yb - ya)) * (xb - xa)), (sizes[i], sizes[i + 1])


def check_crossover(found, cpu, gpu, sizes):
    """The analysis's crossover equals the interpolation on the grid and brackets the models' own."""
    expected, (below, above) = interpolated(cpu, gpu, sizes)
    assert found["kind"] == "crossover"
    assert found["size"] == pytest.approx(expected, rel=1e-6)
    assert below <= crossing(lambda n: cpu(n) - gpu(n), sizes[0], sizes[-1]) <= above
    assert found["low"] <= found["size"] <= found["high"]


@pytest.fixture
def analysed_gpu(tmp_path, run_offloadbench):
    path = tmp_path / "gpu.json"
    shutil.copy(GPU_FIXTURE, path)
    result = run_offloadbench("analyze", path)
    assert result.returncode == 0, result.stderr
    return path


def find(entries, **fields):
    found = [e for e in entries if all(e.get(k) == v for k, v in fields.items())]
    assert len(found) == 1, (fields, len(found))
    return found[0]


def test_gpu_fixture_is_what_the_script_makes(tmp_path):
    out = tmp_path / "regenerated.json"
    subprocess.run(
        [sys.executable, FIXTURES / "make_gpu_fixture.py", out], check=True, capture_output=True
    )
    assert load_json(out) == load_json(GPU_FIXTURE)


def test_crossovers_match_the_models(analysed_gpu):
    models = fixture_models()
    analysis = load_json(analysed_gpu)["analysis"]
    crossovers = analysis["crossovers"]

    triad = find(
        crossovers, compare_group="compute/triad/fp32", view="gpu_pinned", cpu_view="cpu_all"
    )
    check_crossover(
        triad,
        lambda n: models.triad_seconds("cpu_all", n),
        lambda n: models.triad_seconds("gpu_pinned", n),
        [2**e for e in range(16, 29, 2)],
    )

    pageable = find(
        crossovers, compare_group="compute/triad/fp32", view="gpu_pageable", cpu_view="cpu_all"
    )
    assert pageable["kind"] == "cpu_wins_at_largest"
    assert pageable["size"] is None

    resident = find(
        crossovers, compare_group="compute/triad/fp32", view="gpu_kernel", cpu_view="cpu_all"
    )
    assert resident["kind"] == "gpu_wins_all"

    sgemm = find(
        crossovers, compare_group="compute/sgemm/fp32", view="gpu_pinned", cpu_view="cpu_all"
    )
    check_crossover(
        sgemm,
        lambda n: models.sgemm_seconds("cpu_all", n),
        lambda n: models.sgemm_seconds("gpu_pinned", n),
        [2**e for e in range(5, 13)],
    )

    mlp = find(
        crossovers,
        compare_group="mlp/784-128-10/train_sgd",
        view="gpu_kernel",
        series="fp32",
        cpu_view="cpu_all",
    )
    check_crossover(
        mlp,
        lambda b: models.mlp_seconds("cpu_all", "", b),
        lambda b: models.mlp_seconds("gpu_kernel", "fp32", b),
        [1, 4, 16, 64, 256, 1024, 4096],
    )


def test_transfer_fit_break_even_overlap_and_ceilings(analysed_gpu):
    models = fixture_models()
    analysis = load_json(analysed_gpu)["analysis"]
    pinned = find(analysis["transfer_model"], direction="h2d", host_memory="pinned")
    alpha, beta = models.COPY_MODEL["pinned"]
    assert pinned["alpha_seconds"] == pytest.approx(alpha, rel=0.05)
    assert pinned["beta_bytes_per_second"] == pytest.approx(beta, rel=0.05)
    assert pinned["r_squared"] > 0.99
    assert pinned["half_bandwidth_bytes"] == pytest.approx(alpha * beta, rel=0.1)

    for entry in analysis["pinning_break_even"]:
        n, pin = entry["break_even_copies"], entry["pin_seconds"]
        saved = entry["pageable_copy_seconds"] - entry["pinned_copy_seconds"]
        assert n * saved > pin >= (n - 1) * saved
    assert {e["pin_operation"] for e in analysis["pinning_break_even"]} == set(models.PIN_MODEL)

    pageable = find(analysis["overlap"], host_memory="pageable")
    assert pageable["speedup_vs_serial"] < 1.1
    best = max(analysis["overlap"], key=lambda e: e["speedup_vs_serial"])
    assert best["speedup_vs_serial"] <= best["bound_speedup"]

    assert analysis["ceilings"]["checked"] > 0
    assert analysis["ceilings"]["suspects"] == []


def test_summary_prints_the_headlines(analysed_gpu, run_offloadbench):
    result = run_offloadbench("summary", analysed_gpu, "--all")
    assert result.returncode == 0, result.stderr
    # The fixture measures 256 Ki and 1 Mi elements either side: the crossover is that bracket, not a point.
    assert (
        "compute/triad/fp32: GPU incl. pinned transfers wins from elements somewhere in 256 Ki–1 Mi"
        in result.stdout
    )
    assert "GPU 0 H2D pinned" in result.stdout
    assert "pinning 256 MiB once pays after" in result.stdout


GPU_CHARTS = [
    "bandwidth_gpu0_h2d",
    "bandwidth_gpu0_d2h",
    "bandwidth_gpu0_bidirectional",
    "bandwidth_host_memcpy",
    "time_compute_triad_fp32",
    "speedup_compute_triad_fp32",
    "time_compute_sgemm_fp32",
    "speedup_compute_sgemm_fp32",
    "mlp_mlp_784_128_10_train_sgd",
    "speedup_mlp_784_128_10_train_sgd",
    "overlap",
    "pinning_break_even",
    "small_tensors_gpu0",
    "device_local_gpu0",
    "sm_copy_gpu0_h2d",
    "sm_copy_gpu0_d2h",
    "managed_gpu0",
    "latency_gpu0",
    "torch_idioms_gpu0",
    "pinning_at_scale",
]


def assert_charts(outdir, stems):
    report = (outdir / "report.html").read_text()
    for stem in stems:
        for ext in ("png", "svg"):
            path = outdir / f"{stem}.{ext}"
            assert path.exists() and path.stat().st_size > 1000, path
            assert f"{stem}.{ext}" in report, stem
    return report


def test_every_chart_from_the_gpu_file(analysed_gpu, run_offloadbench):
    result = run_offloadbench("plot", analysed_gpu)
    assert result.returncode == 0, result.stderr
    outdir = analysed_gpu.with_name("gpu-plots")
    report = assert_charts(outdir, GPU_CHARTS)
    assert "NVIDIA H100 PCIe (synthetic)" in report  # machine context
    assert "Nothing: every chart family could be drawn." in report
    assert str(outdir / "report.html") in result.stdout


def test_cpu_only_file_draws_what_it_can_and_lists_the_rest(tmp_path, run_offloadbench):
    doc = load_json(CPU_FIXTURE)
    doc.pop("analysis", None)  # as a file from before the analysis existed
    path = tmp_path / "cpu.json"
    path.write_text(json.dumps(doc))
    result = run_offloadbench("plot", path, "--out", tmp_path / "charts")
    assert result.returncode == 0, result.stderr
    assert (
        load_json(path) == doc
    )  # plot only reads its input: the analysis it drew from is not stored
    assert "has no analysis block" in result.stdout
    report = assert_charts(tmp_path / "charts", ["bandwidth_host_memcpy"])
    assert "no device copies measured" in report
    assert "no GPU measurements" in report  # the summary says why


def test_unanalysed_and_partial_files_never_crash(tmp_path):
    doc = load_json(GPU_FIXTURE)
    doc["benchmarks"] = doc["benchmarks"][: len(doc["benchmarks"]) // 3]  # interrupted mid-run
    doc["context"]["offloadbench"]["incomplete"] = True
    path = tmp_path / "partial.json"
    path.write_text(json.dumps(doc))
    result = subprocess.run(
        [sys.executable, "-m", "plots", path], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    report = (tmp_path / "partial-plots" / "report.html").read_text()
    assert "needs the analysis block" in report
    assert "could not be drawn" not in report
    assert "INCOMPLETE" in report


@pytest.mark.parametrize("content", ["{not json", "[]", '{"context": {}, "benchmarks": []}', ""])
def test_malformed_file_is_one_line_and_exit_2(tmp_path, run_offloadbench, content):
    path = tmp_path / "bad.json"
    path.write_text(content)
    for command in ("analyze", "summary", "plot"):
        result = run_offloadbench(command, path)
        assert result.returncode == 2, (command, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    result = subprocess.run(
        [sys.executable, "-m", "plots", path], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_run_stores_the_analysis_and_prints_the_findings(tmp_path, run_offloadbench):
    out = tmp_path / "run.json"
    result = run_offloadbench(
        "run",
        "--suite",
        "transfer",
        "--quick",
        "--repetitions",
        "2",
        "--out",
        out,
        "--",
        "--benchmark_filter=host_memcpy/pretouched/threads:1/4KiB|h2d/pinned/4KiB",
        "--benchmark_min_time=0.001",
    )
    assert result.returncode == 0, result.stderr
    doc = load_json(out)
    assert set(doc["analysis"]) >= {
        "speedups",
        "crossovers",
        "transfer_model",
        "pinning_break_even",
        "overlap",
        "ceilings",
        "headlines",
    }
    assert (
        "every table and finding: offloadbench summary --all" in result.stdout
    )  # run prints the first screen
    full = run_offloadbench("summary", out, "--all")
    assert "findings:" in full.stdout
    for line in doc["analysis"]["headlines"]:
        assert line in full.stdout


def test_gpu_rows_skipped_leave_the_cpu_curves(tmp_path, run_offloadbench):
    """What a CPU-only machine gives for the compute and mlp families: CPU rows, GPU rows skipped."""
    doc = load_json(GPU_FIXTURE)
    for row in doc["benchmarks"]:
        if row.get("device") == 0:
            row.update(
                skipped=True, skip_reason="no usable GPU: test", iterations=0, validated=None
            )
    path = tmp_path / "cpu_side.json"
    path.write_text(json.dumps(doc))
    result = run_offloadbench("plot", path)
    assert result.returncode == 0, result.stderr
    outdir = tmp_path / "cpu_side-plots"
    report = assert_charts(
        outdir, ["time_compute_triad_fp32", "mlp_mlp_784_128_10_train_sgd", "bandwidth_host_memcpy"]
    )
    assert (
        "compute/triad/fp32: speedup vs size: no GPU row to pair with the CPU rows (GPU rows skipped: "
        "no usable GPU: test)" in report
    )
    assert not (outdir / "speedup_compute_triad_fp32.png").exists()


def test_anchor_series_are_drawn_apart_from_offloadbench_views():
    from plots import timing

    ours = timing.style("gpu_kernel", 0, "fp32 eager")
    theirs = timing.style("gpu_kernel", 1, "pytorch")
    assert theirs["color"] != ours["color"]
    assert timing.view_label("gpu_kernel", "pytorch") == "PyTorch: GPU, data resident"
    assert timing.view_label("gpu_kernel", "fp32 graph") == "GPU kernel only [fp32 graph]"
    assert timing.style("cpu_all", 1, "numpy")["linestyle"] == ":"
    assert timing.style("cpu_all", 1, "numpy")["color"] != timing.style("cpu_all", 0)["color"]


def test_many_series_of_one_view_never_share_a_look():
    """The mlp sweeps draw more series of one view than there are dash patterns: the markers take over."""
    from plots import timing

    for view, count in (("gpu_kernel", 12), ("gpu_pinned", 20), ("cpu_all", 6)):
        looks = [
            (s["color"], s["linestyle"], s["marker"])
            for s in (timing.style(view, i) for i in range(count))
        ]
        assert len(set(looks)) == count, (view, looks)


# Outputs whole or not at all: a full disk, a bad MPLBACKEND or a Python that is not the plots' one
# gives one line on stderr and the documented exit code, and never a traceback or a half-written file.


def stderr_line(result):
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert "Traceback" not in result.stderr, result.stderr
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_atomic_write_keeps_the_old_file_and_no_temporary_when_the_disk_fills(tmp_path):
    from plots import files

    target = tmp_path / "report.html"
    target.write_text("the previous report")

    def fills_the_disk(f):
        f.write(b"<!DOCTYPE html> half a rep")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(
        files.OutputError, match=r"cannot write .*report\.html: No space left on device"
    ):
        files.write_atomically(target, fills_the_disk)
    assert target.read_text() == "the previous report"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # the temporary file is gone

    files.write_text_atomically(tmp_path / "new.html", "whole")
    assert (tmp_path / "new.html").read_text() == "whole"
    assert (
        tmp_path / "new.html"
    ).stat().st_mode & 0o777 == 0o666 & ~current_umask()  # not mkstemp's 0600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.html", "report.html"]


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_ctrl_c_lost_inside_a_weakref_callback_still_stops_the_next_write(tmp_path, monkeypatch):
    # Python drops a KeyboardInterrupt raised inside a weakref callback ("Exception ignored in ..."):
    # matplotlib runs such callbacks while it draws, and a Ctrl-C landing there let `plot` exit 0.
    import weakref
    from plots import files

    class Node:
        pass

    def ctrl_c_inside_a_weakref_callback():
        node = Node()
        ref = weakref.ref(node, lambda _: signal.raise_signal(signal.SIGINT))
        del node  # the callback runs here, and its KeyboardInterrupt is printed and dropped
        return ref

    monkeypatch.setattr(files, "_interrupted", False)
    previous = signal.getsignal(signal.SIGINT)
    try:
        ctrl_c_inside_a_weakref_callback()  # Python's own handler: the interrupt is lost (the premise)
        files.write_text_atomically(tmp_path / "before.html", "written")
        assert (tmp_path / "before.html").is_file()

        files.honour_ctrl_c()
        ctrl_c_inside_a_weakref_callback()
        with pytest.raises(KeyboardInterrupt):
            files.write_text_atomically(tmp_path / "after.html", "not put in place")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["before.html"]  # no temporary file either


def plot_env(**extra):
    """The environment for `offloadbench plot`: this Python (it has matplotlib) unless one is chosen."""
    return {"OFFLOADBENCH_PYTHON": sys.executable, **os.environ, **extra}


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def limit_file_size(limit):
    """preexec_fn: writes past `limit` bytes fail with EFBIG, as on a full disk, for root too (a read-only
    folder stops no root process)."""

    def apply():
        signal.signal(
            signal.SIGXFSZ, signal.SIG_IGN
        )  # inherited: offloadbench gets EFBIG too, not a signal
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_full_disk_while_drawing_is_one_line_exit_1_and_no_partial_chart(
    tmp_path, run_offloadbench
):
    path = tmp_path / "cpu.json"
    shutil.copy(CPU_FIXTURE, path)  # it has its analysis block: offloadbench itself writes nothing
    outdir = tmp_path / "charts"
    result = run_offloadbench(
        "plot", path, "--out", outdir, preexec_fn=limit_file_size(20_000), env=plot_env()
    )
    line = stderr_line(result)
    assert result.returncode == 1, result.stderr
    assert (
        "cannot write" in line and "bandwidth_host_memcpy.png" in line and "File too large" in line
    ), line
    # Neither a truncated PNG nor a report calling the chart undrawable: the folder it made is gone too.
    assert not outdir.exists()


def test_full_disk_at_the_report_keeps_the_previous_report(tmp_path, monkeypatch, capsys):
    from plots import __main__ as plots_main, files

    outdir = tmp_path / "charts"
    outdir.mkdir()
    (outdir / "report.html").write_text("the previous report")
    real = files.write_atomically

    def full_at_the_report(path, write):
        if pathlib.Path(path).name != "report.html":
            return real(path, write)

        def half(f):
            f.write(b"<!DOCTYPE html>")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        return real(path, half)

    monkeypatch.setattr(files, "write_atomically", full_at_the_report)
    assert plots_main.main([str(CPU_FIXTURE), "--out", str(outdir)]) == 1
    err = capsys.readouterr().err.strip()
    assert (
        err.startswith("plots: cannot write") and "report.html: No space left on device" in err
    ), err
    assert len(err.splitlines()) == 1, err
    assert (outdir / "report.html").read_text() == "the previous report"
    assert not [p for p in outdir.iterdir() if p.name.startswith(".")]  # no temporary file left
    assert (
        outdir / "bandwidth_host_memcpy.png"
    ).stat().st_size > 1000  # the charts written are whole


def test_bad_mplbackend_is_one_line_exit_2_before_anything_is_written(tmp_path, run_offloadbench):
    path = tmp_path / "cpu.json"
    shutil.copy(CPU_FIXTURE, path)
    result = run_offloadbench("plot", path, env=plot_env(MPLBACKEND="junk"))
    line = stderr_line(result)
    assert result.returncode == 2, result.stderr
    assert "MPLBACKEND='junk'" in line, line
    assert not (tmp_path / "cpu-plots").exists()
    # The package on its own says the same.
    direct = subprocess.run(
        [sys.executable, "-m", "plots", path],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "MPLBACKEND": "junk"},
    )
    assert direct.returncode == 2 and "MPLBACKEND='junk'" in stderr_line(direct)


@pytest.mark.parametrize(
    "python, how",
    [
        ("/bin/false", "exited with status 1 and printed nothing"),
        ("/bin/true", "exited with status 0 and printed nothing"),
    ],
)
def test_a_python_that_cannot_draw_is_named_on_one_line(tmp_path, run_offloadbench, python, how):
    path = tmp_path / "cpu.json"
    shutil.copy(CPU_FIXTURE, path)
    result = run_offloadbench("plot", path, env=plot_env(OFFLOADBENCH_PYTHON=python))
    line = stderr_line(result)
    assert result.returncode == 2, result.stderr
    assert f"OFFLOADBENCH_PYTHON='{python}' {how}" in line, line
    assert "set OFFLOADBENCH_PYTHON" in line, line
    assert not (tmp_path / "cpu-plots").exists()


def test_charts_leave_out_the_rows_the_self_checks_broke():
    """A chart shows what the findings rest on: rows listed in analysis.invariants are not drawn."""
    from plots import results as plot_results

    doc = plot_results.load(ROOT / "results/reference/nvidia-h100-80gb-hbm3-2026-11-26-quick.json")
    drawn = plot_results.cases(doc)
    broken = plot_results.broken_rows(doc)
    assert (
        "transfer/h2d/registered/256MiB/manual_time" not in drawn
    )  # unsteady, and impossible in each
    assert "mlp/784-128-10/train_sgd/b64/gpu/fp32/graph/resident/manual_time" not in drawn
    both = (
        "transfer/bidirectional/pageable/256MiB/manual_time"  # repetitions 0 and 1 broke, 2 stays
    )
    assert (both, 0) in broken and (both, None) not in broken
    assert [r["repetition_index"] for r in drawn[both]["rows"]] == [2]
    assert "transfer/h2d/pinned/256MiB/manual_time" in drawn
    del doc["analysis"]["invariants"]
    assert "transfer/h2d/registered/256MiB/manual_time" in plot_results.cases(doc)


def test_every_overlap_bar_has_its_own_label_with_whole_counts():
    # The H100 file had two bars labelled "pipelined K=4 C=16 …" (76% and 60%: depth- and breadth-first issue).
    sys.path.insert(0, str(ROOT / "benchmarks" / "streams"))
    try:
        import streams_overlap_charts
    finally:
        sys.path.pop(0)
    reference = ROOT / "results" / "reference" / "nvidia-h100-80gb-hbm3-2026-11-26-quick.json"
    entries = load_json(reference)["analysis"]["overlap"]
    labels = [streams_overlap_charts.label(e) for e in entries]
    assert len(set(labels)) == len(labels), sorted(labels)
    assert any("depth-first" in text for text in labels) and any(
        "breadth-first" in text for text in labels
    )
    assert (
        streams_overlap_charts.label(
            {"op": "pipelined", "streams": 4.0, "chunks": 16.0, "bytes": 1 << 26}
        )
        == "pipelined K=4 C=16 64 MiB"
    )


def test_no_host_memory_kind_hides_another_on_the_bandwidth_charts(monkeypatch, tmp_path):
    # The H100's h2d chart drew write-combined over pinned in one style: the pinned line could not be seen.
    sys.path.insert(0, str(ROOT / "benchmarks" / "transfer"))
    try:
        import transfer_bandwidth_charts
    finally:
        sys.path.pop(0)
    from plots import common

    drawn = {}

    def keep(fig, outdir, name, *args, **kwargs):
        drawn[name] = [
            (
                line.get_label(),
                line.get_color(),
                line.get_linestyle(),
                line.get_marker(),
                line.get_zorder(),
            )
            for line in fig.axes[0].get_lines()
            if line.get_label().endswith("(measured)")
        ]
        return name

    monkeypatch.setattr(common, "save", keep)
    doc = load_json(ROOT / "results" / "reference" / "nvidia-h100-80gb-hbm3-2026-11-26-quick.json")
    transfer_bandwidth_charts.device_copy_charts(doc, tmp_path)
    h2d = next(lines for name, lines in drawn.items() if "h2d" in name)
    assert len(h2d) >= 3, h2d
    for i, a in enumerate(h2d):
        for b in h2d[i + 1 :]:
            assert a[1] != b[1] and a[2] != b[2] and a[3] != b[3], (
                a,
                b,
            )  # colour, dash and marker all differ
    assert max(h2d, key=lambda line: line[4])[0].startswith("pinned")  # pinned on top


def test_a_file_without_gpu_rows_calls_the_gpu_charts_not_applicable(tmp_path):
    # `plot` on a CPU-only file said "N missing"; nothing is missing on a machine without a GPU.
    done = subprocess.run(
        [sys.executable, "-m", "plots", str(CPU_FIXTURE), "--out", str(tmp_path / "out")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert (
        "not applicable on this machine (no GPU measured" in done.stdout
        and " missing" not in done.stdout
    ), done.stdout
    page = (tmp_path / "out" / "report.html").read_text()
    assert "<h2>Not applicable on this machine</h2>" in page and "<h2>Missing</h2>" not in page
    done = subprocess.run(
        [sys.executable, "-m", "plots", str(GPU_FIXTURE), "--out", str(tmp_path / "gpu")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "not applicable" not in done.stdout, done.stdout


def test_no_gpu_row_to_pair_names_gpu_skips_only():
    # A CPU matmul quick mode skipped was reported as the reason GPU rows were missing.
    from plots import timing

    doc = {
        "benchmarks": [
            {
                "name": "a",
                "run_type": "iteration",
                "compare_group": "g",
                "device": "cpu",
                "skipped": True,
                "skip_reason": "quick mode skips it",
            },
            {
                "name": "b",
                "run_type": "iteration",
                "compare_group": "g",
                "device": 0,
                "skipped": True,
                "skip_reason": "no usable GPU: x",
            },
        ]
    }
    assert timing._gpu_reason(doc, "g") == " (GPU rows skipped: no usable GPU: x)"
    doc["benchmarks"].pop()
    assert timing._gpu_reason(doc, "g") == ""
