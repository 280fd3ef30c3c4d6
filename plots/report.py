"""report.html: the headline findings, the machine the numbers came from, every chart (PNG, linked
to its SVG) and a list of what could not be drawn and why."""

import html

from . import files, results


def _machine_rows(doc):
    ctx = doc["context"]
    host, cuda, ob = ctx.get("host", {}), ctx.get("cuda", {}), ctx.get("offloadbench", {})
    rows = [
        (
            "CPU",
            f"{host.get('cpu_model', '?')} ({host.get('logical_cpus', '?')} logical CPUs, "
            f"{host.get('omp_threads', '?')} OpenMP threads)",
        ),
        ("host memory", f"{(host.get('memory_total_bytes') or 0) / 2**30:.1f} GiB"),
        ("BLAS", f"{host.get('blas', {}).get('library', '?')}"),
        ("OS", host.get("os", "?")),
    ]
    for gpu in cuda.get("gpus", []):
        link = gpu.get("pcie_link", {})
        rows.append(
            (
                f"GPU {gpu.get('index')}",
                f"{gpu.get('name', '?')} (cc {gpu.get('compute_capability', '?')}, {gpu.get('sm_count', '?')} SMs, "
                f"{(gpu.get('memory_total_bytes') or 0) / 2**30:.0f} GiB, DRAM "
                f"{(gpu.get('dram_bytes_per_second') or 0) / 1e9:.0f} GB/s, {gpu.get('async_engine_count', '?')} "
                f"copy engines); PCIe Gen{link.get('current_generation', '?')} x{link.get('current_width', '?')} "
                f"= {(link.get('theoretical_bytes_per_second') or 0) / 1e9:.1f} GB/s per direction",
            )
        )
    rows.append(
        (
            "CUDA",
            f"runtime {cuda.get('cuda_runtime_version', '?')}, driver {cuda.get('cuda_driver_version', '?')} "
            f"({cuda.get('driver_release') or 'no NVML'})",
        )
    )
    if cuda.get("unavailable_reason"):
        rows.append(("GPU unavailable", cuda["unavailable_reason"]))
    rows.append(
        (
            "run",
            f"{', '.join(ob.get('suites', []))} · {ob.get('mode', '?')} · {ob.get('repetitions', '?')} "
            f"repetitions · {ob.get('start_time_utc', '?')} → {ob.get('end_time_utc', '?')}"
            + (" · INCOMPLETE" if ob.get("incomplete") else ""),
        )
    )
    rows.append(
        (
            "build",
            f"offloadbench {ob.get('version', '?')} ({ob.get('git_sha', '?')}, {ob.get('build_type', '?')})",
        )
    )
    return rows


def _counts(doc):
    rows = [r for r in doc["benchmarks"] if r.get("run_type") == "iteration"]
    skipped = sum(1 for r in rows if r.get("skipped"))
    invalid = sum(1 for r in rows if r.get("validated") is False)
    return f"{len(rows)} measurements, {skipped} skipped, {invalid} invalid"


def no_gpu_measured(doc):
    """Why this file holds no measured GPU row ("no GPU measured: <skip reason>"), or "" when it holds one:
    on such a machine the charts of GPU rows are not applicable, not missing."""
    reasons = set()
    for row in doc.get("benchmarks", []):
        device = row.get("device")
        if isinstance(device, int) and not isinstance(device, bool):
            if not row.get("skipped"):
                return ""
            if isinstance(row.get("skip_reason"), str):
                reasons.add(row["skip_reason"])
    return "no GPU measured" + (f": {sorted(reasons)[0]}" if reasons else "")


def chart_sections(charts, missing, source, nothing_missing, not_applicable=""):
    """The report's charts, each linked to its SVG with its caption, then what could not be drawn."""
    e = html.escape
    parts = [] if charts else [f"<p>No chart could be drawn from {source} (see below).</p>"]
    for chart in charts:
        parts += [
            f"<h3>{e(chart['title'])}</h3>",
            f"<a href='{e(chart['svg'])}'><img src='{e(chart['png'])}' alt='{e(chart['title'])}'></a>",
            f"<p class='caption'>{e(chart['caption'])} (<a href='{e(chart['svg'])}'>SVG</a>)</p>",
        ]
    if not_applicable and missing:  # a machine without a GPU: nothing is wrong with these
        parts.append("<h2>Not applicable on this machine</h2>")
        parts.append(
            f"<p>{e(not_applicable[0].upper() + not_applicable[1:])}: charts of GPU rows do not apply.</p>"
        )
    else:
        parts.append("<h2>Missing</h2>")
    parts.append(
        "<ul>" + "".join(f"<li>{e(m)}</li>" for m in missing) + "</ul>"
        if missing
        else f"<p>Nothing: {nothing_missing}.</p>"
    )
    return parts


def write(doc, source, outdir, charts, missing):
    e = html.escape
    analysis = results.analysis(doc)
    headlines = (analysis or {}).get("headlines", [])
    parts = [
        "<!DOCTYPE html>",
        "<html><head><meta charset='utf-8'><title>offloadbench report</title>",
        "<style>body{font-family:sans-serif;max-width:1200px;margin:auto;padding:1em}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}"
        "img{max-width:100%;border:1px solid #eee}.caption{color:#555;font-size:90%}</style></head><body>",
        "<h1>offloadbench report</h1>",
        f"<p>From <code>{e(str(source))}</code>: {e(_counts(doc))}.</p>",
        "<h2>Summary</h2><table><tr><th>finding</th></tr>",
    ]
    if not analysis:
        parts.append(
            "<tr><td>No analysis block in this file: run <code>offloadbench analyze FILE</code>.</td></tr>"
        )
    parts += [f"<tr><td>{e(line)}</td></tr>" for line in headlines]
    parts.append("</table><h2>Machine</h2><table>")
    parts += [f"<tr><th>{e(k)}</th><td>{e(str(v))}</td></tr>" for k, v in _machine_rows(doc)]
    parts.append("</table><h2>Charts</h2>")
    parts += chart_sections(
        charts, missing, "this file", "every chart family could be drawn", no_gpu_measured(doc)
    )
    parts.append("</body></html>")
    return files.write_text_atomically(outdir / "report.html", "\n".join(parts) + "\n")
