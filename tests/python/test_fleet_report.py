"""`offloadbench plot A.json B.json C.json`: one report.html with the machines side by side. Three
machines: the real H100 quick run in results/reference, the synthetic GPU fixture (no analysis block:
`plot` computes one), and a CPU-only machine made from the H100 file, its GPU rows skipped as a
machine without a GPU skips them. Every section renders; the CPU-only machine says "no GPU"."""

import copy
import html
import json
import re

import pytest

from conftest import ROOT

H100 = ROOT / "results" / "reference" / "nvidia-h100-80gb-hbm3-2026-11-26-quick.json"
SYNTHETIC = ROOT / "tests" / "python" / "fixtures" / "gpu_synthetic.json"
NO_GPU = "no usable GPU: cudaGetDeviceCount failed with cudaErrorNoDevice (100): no CUDA-capable device is detected"


def cpu_only_from(doc):
    """The same run on a machine without a GPU: every GPU row skipped with the reason, no GPU in the
    context or the fingerprint, another host; the analysis block dropped (plot computes it again)."""
    cpu = copy.deepcopy(doc)
    cpu.pop("analysis", None)
    ctx = cpu["context"]
    ctx["host"]["hostname"] = ctx["host_name"] = "cpu-box"
    ctx["cuda"].update(
        gpus=[], driver_release="", cuda_driver_version="none", unavailable_reason=NO_GPU
    )
    ctx["machine_fingerprint"].update(gpu_models=[], driver="none", id="cpu-box")
    rows = []
    for row in cpu["benchmarks"]:
        if row.get("run_type") != "iteration" or row.get("family") not in (
            "transfer",
            "compute",
            "mlp",
            "streams",
        ):
            continue
        gpu_row = isinstance(row.get("device"), int) or str(row.get("view", "")).startswith("gpu")
        if gpu_row or row.get("family") == "streams":
            keep = {
                k: row[k]
                for k in (
                    "name",
                    "run_name",
                    "run_type",
                    "repetitions",
                    "repetition_index",
                    "family",
                    "op",
                    "view",
                    "headline",
                    "compare_group",
                    "series",
                    "sweep",
                    "device",
                    "direction",
                    "host_memory",
                    "bytes",
                    "n",
                    "batch",
                    "elements",
                )
                if k in row
            }
            row = {
                **keep,
                "threads": 1,
                "iterations": 0,
                "real_time": 0.0,
                "cpu_time": 0.0,
                "time_unit": "ns",
                "skipped": True,
                "skip_reason": NO_GPU,
                "error_occurred": True,
                "error_message": f"skipped: {NO_GPU}",
                "validated": None,
            }
        rows.append(row)
    cpu["benchmarks"] = rows
    return cpu


@pytest.fixture(scope="module")
def fleet_report(offloadbench_bin, tmp_path_factory):
    import subprocess

    folder = tmp_path_factory.mktemp("fleet")
    cpu_file = folder / "cpu-box.json"
    cpu_file.write_text(json.dumps(cpu_only_from(json.loads(H100.read_text()))))
    out = folder / "report"
    done = subprocess.run(
        [offloadbench_bin, "plot", H100, SYNTHETIC, cpu_file, "--out", out],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return out, (out / "report.html").read_text(), done


def cells(page, row_label):
    """The cells of the table row whose header is `row_label`."""
    match = re.search(r"<tr><th>" + re.escape(html.escape(row_label)) + r"</th>(.*?)</tr>", page)
    assert match, f"no row {row_label!r}"
    return [html.unescape(c) for c in re.findall(r"<td>(.*?)</td>", match.group(1))]


def test_every_section_renders_with_one_column_per_machine(fleet_report):
    out, page, done = fleet_report
    assert (
        "gpu_synthetic.json has no analysis block" in done.stdout
    )  # computed for the plots, not stored
    for section in ("Machines", "Headlines", "Where the GPU starts to win", "Charts", "Missing"):
        assert f"<h2>{section}</h2>" in page
    header = re.search(r"<tr><th>measure</th>(.*?)</tr>", page).group(1)
    machines = [html.unescape(h) for h in re.findall(r"<th>(.*?)</th>", header)]
    # The GPU first: a host name such as "vm" tells machines apart poorly.
    assert machines == [
        "NVIDIA H100 80GB HBM3 on vm · driver 580.159.04 · PCIe Gen5 x16",
        "NVIDIA H100 PCIe (synthetic) on synthetic-h100 · driver 580.00 · PCIe Gen5 x16",
        "Intel(R) Xeon(R) Processor on cpu-box · no GPU",
    ]


def test_headlines_per_machine_and_no_gpu_where_there_is_none(fleet_report):
    _, page, _ = fleet_report
    link = cells(page, "PCIe link (theoretical, per direction)")
    assert link[:2] == ["PCIe Gen5 x16: 63.0 GB/s"] * 2 and link[2] == "no GPU"
    h2d = cells(page, "h2d pinned")
    assert h2d[0].startswith("55.3 GB/s at 256 MiB (88% of the link)") and h2d[2] == "no GPU"
    assert h2d[1].endswith("% of the link)")  # the synthetic machine's own figure
    triad_cpu = cells(page, "triad fp32 cpu_all")
    assert triad_cpu[0] == triad_cpu[2] != "no GPU"  # the CPU-only machine keeps its CPU rows
    assert cells(page, "triad fp32 gpu_kernel")[2] == "no GPU"
    assert "GFLOP/s" in cells(page, "sgemm cpu_all")[2]
    mlp = cells(page, "mlp 784-128-10 train_sgd b64 cpu_all")
    assert "per step at batch = 64" in mlp[0] and mlp[0] == mlp[2]
    assert cells(page, "mlp 784-128-10 train_sgd b64 gpu fp32 graph resident")[2] == "no GPU"


def test_each_crossover_per_machine(fleet_report):
    _, page, _ = fleet_report
    sgemm = cells(page, "compute/sgemm/square cuBLAS fp32")
    # As the H100 file's own headline: measured at n 256 and 1024, nothing is known in between.
    assert sgemm[0].startswith("wins from n in 256–1024 (incl. pinned transfers)")
    assert sgemm[2] == "no GPU"
    triad = cells(page, "compute/triad/fp32")
    # The 64 Mi pinned triad spread by cv 0.29 over its repetitions: the self-checks leave it out.
    assert triad[0].startswith("never wins up to 16 Mi: 0.22×")
    assert triad[1] != "not in this file" and triad[2] == "no GPU"


def test_charts_have_one_series_per_machine_and_name_those_without(fleet_report):
    out, page, _ = fleet_report
    charts = re.findall(r"<img src='([^']+)'", page)
    expected = {
        "fleet_h2d_pinned.png",
        "fleet_sgemm_cpu.png",
        "fleet_speedup_sgemm.png",
        "fleet_mlp_cpu.png",
    }
    assert expected <= set(charts)
    for png in charts:
        assert (out / png).stat().st_size > 0 and (
            out / png.replace(".png", ".svg")
        ).stat().st_size > 0
    svg = (out / "fleet_sgemm_cpu.svg").read_text()
    for host in (
        "NVIDIA H100 80GB HBM3 on vm",
        "synthetic-h100",
        "cpu-box",
    ):  # legends: every machine with CPU SGEMM rows
        assert host in svg
    caption = re.search(r"fleet_h2d_pinned\.svg'>SVG</a>", page)
    # The machine without a GPU is named by its CPU and host ("… on cpu-box · no GPU").
    assert caption and re.search(
        r"Not drawn \(no GPU, or not run\): [^<]* on cpu-box · no GPU", page
    )


def test_a_bad_file_among_several_is_one_line_and_exit_2(run_offloadbench, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    result = run_offloadbench("plot", H100, bad, "--out", tmp_path / "out")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "bad.json" in result.stderr and not (tmp_path / "out").exists()
