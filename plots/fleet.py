"""python -m plots.fleet FILE... [--out DIR]: several machines' results side by side in one report.html.

One column per machine in a headline table (the PCIe link, the rows each run marks as its headline:
copy rates, triad, SGEMM, MLP steps), where the GPU starts to win on each machine (the analysis
block's crossovers), and charts with one series per machine, labelled from the machine fingerprint
(host, GPU, driver, link). A machine without a GPU says "no GPU" where the others have GPU numbers.
Exit codes as `python -m plots`: 0 written, 2 nothing could be done (a bad file, no folder), 1 a
write failed part way.
"""

import argparse
import html
import pathlib
import sys

from . import files, report, results

GPU_VIEW_ORDER = [
    "gpu_pinned",
    "gpu_pageable",
    "gpu_pinned_overlap",
    "gpu_kernel",
]  # as the headlines prefer
VIEW_PHRASE = {
    "gpu_pinned": "incl. pinned transfers",
    "gpu_pageable": "incl. pageable transfers",
    "gpu_pinned_overlap": "pinned transfers overlapped",
    "gpu_kernel": "kernel only",
}
FAMILY_ORDER = ["device_copy", "host_memcpy", "triad", "sgemm", "mlp_step"]


# ---- one machine ----


def _link(gpu):
    """'PCIe Gen5 x16': what the slot and GPU can reach (an idle GPU lowers its current link)."""
    link = gpu.get("pcie_link") or {}
    for generation, width in (
        ("ceiling_generation", "ceiling_width"),
        ("max_generation", "max_width"),
        ("current_generation", "current_width"),
    ):
        if link.get(generation) and link.get(width):
            return f"PCIe Gen{link[generation]} x{link[width]}"
    return "link unknown"


def _link_rate(gpu):
    link = gpu.get("pcie_link") or {}
    return link.get("ceiling_bytes_per_second") or link.get("theoretical_bytes_per_second") or 0


def has_gpu(doc):
    return bool(doc["context"].get("cuda", {}).get("gpus"))


def machine_label(doc):
    """'GPU on host · driver · link' from the fingerprint and the context; 'CPU on host · no GPU' without
    one. The GPU leads: host names such as "vm" or "localhost" tell machines apart poorly."""
    ctx = doc["context"]
    fingerprint = ctx.get("machine_fingerprint", {})
    host = ctx.get("host", {}).get("hostname") or ctx.get("host_name") or "?"
    gpus = ctx.get("cuda", {}).get("gpus") or []
    if not gpus:
        return f"{fingerprint.get('cpu_model') or ctx.get('host', {}).get('cpu_model', '?')} on {host} · no GPU"
    models = fingerprint.get("gpu_models") or [g.get("name", "?") for g in gpus]
    return f"{', '.join(models)} on {host} · driver {fingerprint.get('driver', '?')} · {_link(gpus[0])}"


def _size(row):
    sweep = row.get("sweep")
    value = row.get(sweep) if sweep else None
    return (sweep, value) if isinstance(value, (int, float)) else ("bytes", row.get("bytes") or 0)


def _size_text(sweep, value):
    from .common import sweep_size  # matplotlib: imported once main() has checked it loads

    return sweep_size(sweep, value) if sweep == "bytes" else f"{sweep} = {sweep_size(sweep, value)}"


def _rate_text(value, unit):
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def _time_text(seconds):
    for scale, unit in ((1, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def _is_gpu_row(row):
    return isinstance(row.get("device"), int) or str(row.get("view", "")).startswith("gpu")


def headline_sizes(doc):
    """{headline label: {size}}: the sizes of each headline label's usable rows."""
    sizes = {}
    broken = results.broken_rows(doc)
    for row in doc["benchmarks"]:
        label = row.get("headline")
        if (
            row.get("run_type") == "iteration"
            and isinstance(label, str)
            and not results.left_out(row, broken)
            and results.usable(row)
        ):
            sizes.setdefault(label, set()).add(_size(row))
    return sizes


def common_sizes(docs):
    """{headline label: {size}}: the sizes every machine with that label measured, so that one row of
    the table compares like with like."""
    per_doc = [headline_sizes(d) for d in docs]
    common = {}
    for sizes in per_doc:
        for label, found in sizes.items():
            common[label] = common[label] & found if label in common else set(found)
    return common


def headline_cells(doc, allowed=None):
    """{headline label: (cell text, is a GPU row)}: per label the largest size measured (of `allowed`
    {label: {size}} when given: the sizes every machine has), as `summary` reads it: the median rate
    of its valid repetitions (FLOP/s, else bytes/s), and the time per step for an MLP step. A label
    whose rows were all skipped says so; one with no size in common with the other machines too."""
    largest, skipped, unshared = {}, {}, set()
    broken = results.broken_rows(doc)
    for row in doc["benchmarks"]:
        label = row.get("headline")
        if (
            row.get("run_type") != "iteration"
            or not isinstance(label, str)
            or results.left_out(row, broken)
        ):
            continue
        if not results.usable(row):
            skipped.setdefault(label, row)
            continue
        if allowed is not None and _size(row) not in allowed.get(label, set()):
            unshared.add(label)
            continue
        if label not in largest or _size(row)[1] > _size(largest[label])[1]:
            largest[label] = row
    cases = results.cases(
        doc,
        lambda row: (
            row.get("headline") in largest and row["name"] == largest[row["headline"]]["name"]
        ),
    )
    cells = {}
    for label, row in largest.items():
        case = cases[row["name"]]
        at = _size_text(*_size(row))
        if row.get("op") == "mlp_step":
            text = f"{_time_text(case['seconds'])} per step at {at}"
        elif results.median_field(case, "flop_per_second"):
            text = f"{_rate_text(results.median_field(case, 'flop_per_second'), 'FLOP/s')} at {at}"
        elif results.median_field(case, "bytes_per_second"):
            rate = results.median_field(case, "bytes_per_second")
            text = f"{_rate_text(rate, 'B/s')} at {at}"
            ceiling = row.get("ceiling_bytes_per_second")
            if row.get("op") == "device_copy" and isinstance(ceiling, (int, float)) and ceiling > 0:
                text += f" ({100 * rate / ceiling:.0f}% of the link)"
        else:
            text = f"{_time_text(case['seconds'])} at {at}"
        cells[label] = (text, _is_gpu_row(row))
    for label in unshared - set(cells):
        cells[label] = ("measured, but at no size the other machines measured", False)
    for label, row in skipped.items():
        if label not in cells:
            cells[label] = (
                "no GPU"
                if _is_gpu_row(row) and not has_gpu(doc)
                else f"skipped: {row.get('skip_reason') or row.get('invalid_reason') or 'not valid'}",
                _is_gpu_row(row),
            )
    return cells


def _family_rank(doc_rows, label):
    op = next((r.get("op") for r in doc_rows if r.get("headline") == label), None)
    return FAMILY_ORDER.index(op) if op in FAMILY_ORDER else len(FAMILY_ORDER)


def crossover_cells(doc):
    """{(compare group, series): text}: where the GPU starts to win against all CPU threads, the
    view the headlines prefer (pinned transfers first), from the analysis block."""
    best = {}
    for c in (results.analysis(doc) or {}).get("crossovers", []):
        if c.get("cpu_view") != "cpu_all" or c.get("view") not in GPU_VIEW_ORDER:
            continue
        key = (c.get("compare_group", ""), c.get("series", ""))
        if key not in best or GPU_VIEW_ORDER.index(c["view"]) < GPU_VIEW_ORDER.index(
            best[key]["view"]
        ):
            best[key] = c
    from .common import crossover_where, sweep_size

    cells = {}
    for key, c in best.items():
        sweep = c.get("sweep", "")
        size = lambda k: sweep_size(sweep, c[k]) if isinstance(c.get(k), (int, float)) else "?"  # noqa: E731
        view = VIEW_PHRASE[c["view"]]
        if c.get("kind") == "crossover":
            text = (
                f"wins from {sweep} {crossover_where(c, lambda v: sweep_size(sweep, v))} ({view})"
            )
        elif c.get("kind") == "gpu_wins_all":
            text = f"wins at every size, {size('smallest_size')}–{size('largest_size')} ({view})"
        else:
            text = f"never wins up to {size('largest_size')}: {c.get('speedup_at_largest', 0):.2f}× ({view})"
        cells[key] = text
    return cells


def largest_speedups(doc):
    """{(compare group, series): text}: the GPU's speedup over all CPU threads at the largest size
    both measured, for the same preferred view."""
    best = {}
    for s in (results.analysis(doc) or {}).get("speedups", []):
        if s.get("cpu_view") != "cpu_all" or s.get("view") not in GPU_VIEW_ORDER:
            continue
        key = (s.get("compare_group", ""), s.get("series", ""))
        rank = (GPU_VIEW_ORDER.index(s["view"]), -s.get("size", 0))
        if key not in best or rank < best[key][0]:
            best[key] = (rank, s)
    return {key: s for key, (_, s) in best.items()}


# ---- the page ----


def _unique_labels(docs):
    labels, seen = [], {}
    for doc in docs:
        label = machine_label(doc)
        seen[label] = seen.get(label, 0) + 1
        labels.append(label if seen[label] == 1 else f"{label} ({seen[label]})")
    return labels


def headline_table(docs, labels):
    """Rows: the link, then every headline label any machine has; one column per machine."""
    e = html.escape
    gpu0 = [d["context"]["cuda"]["gpus"][0] if has_gpu(d) else None for d in docs]
    rows = [
        (
            "PCIe link (theoretical, per direction)",
            [f"{_link(g)}: {_link_rate(g) / 1e9:.1f} GB/s" if g else "no GPU" for g in gpu0],
        )
    ]
    common = common_sizes(docs)
    cells = [headline_cells(d, common) for d in docs]
    all_rows = [r for d in docs for r in d["benchmarks"]]
    labels_in_order = sorted(
        {label for c in cells for label in c}, key=lambda l: (_family_rank(all_rows, l), l)
    )
    for label in labels_in_order:
        gpu_label = any(c.get(label, ("", False))[1] for c in cells)
        rows.append(
            (
                label,
                [
                    c[label][0]
                    if label in c
                    else "no GPU"
                    if gpu_label and not has_gpu(d)
                    else "not in this file"
                    for c, d in zip(cells, docs)
                ],
            )
        )
    return _table(["measure"] + labels, rows, e)


def crossover_table(docs, labels):
    e = html.escape
    cells = [crossover_cells(d) for d in docs]
    speedups = [largest_speedups(d) for d in docs]
    keys = sorted({k for c in cells for k in c})
    rows = []
    for key in keys:
        row = []
        for c, s, d in zip(cells, speedups, docs):
            if not has_gpu(d):
                row.append("no GPU")
            elif key in c:
                top = s.get(key)
                row.append(
                    c[key]
                    + (
                        f"; {top['speedup']:.2f}× at the largest size"
                        if top and c[key].startswith("w")
                        else ""
                    )
                )
            else:
                row.append("not in this file")
        rows.append((f"{key[0]} {key[1]}".strip(), row))
    if not rows:
        return "<p>No machine has GPU-vs-CPU pairs with a crossover to show.</p>"
    return _table(["GPU vs all CPU threads"] + labels, rows, e)


def _table(header, rows, e):
    parts = ["<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr>"]
    for name, cells in rows:
        parts.append(
            f"<tr><th>{e(name)}</th>" + "".join(f"<td>{e(c)}</td>" for c in cells) + "</tr>"
        )
    return "".join(parts) + "</table>"


def write_report(docs, sources, labels, outdir, charts, missing):
    e = html.escape
    parts = [
        "<!DOCTYPE html>",
        "<html><head><meta charset='utf-8'><title>offloadbench: machines side by side</title>",
        "<style>body{font-family:sans-serif;max-width:1400px;margin:auto;padding:1em}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;"
        "vertical-align:top}img{max-width:100%;border:1px solid #eee}.caption{color:#555;font-size:90%}"
        "</style></head><body>",
        f"<h1>offloadbench: {len(docs)} machines side by side</h1>",
        "<h2>Machines</h2><ul>",
    ]
    for doc, source, label in zip(docs, sources, labels):
        ob = doc["context"].get("offloadbench", {})
        why = doc["context"].get("cuda", {}).get("unavailable_reason")
        parts.append(
            f"<li><b>{e(label)}</b>: <code>{e(str(source))}</code>, {e(', '.join(ob.get('suites', [])))} · "
            f"{e(str(ob.get('mode', '?')))} · {e(str(ob.get('repetitions', '?')))} repetitions · "
            f"git {e(str(ob.get('git_sha', '?')))} · {e(str(ob.get('start_time_utc', '?')))}"
            + (f" · no GPU: {e(why)}" if why and not has_gpu(doc) else "")
            + "</li>"
        )
    parts += [
        "</ul>",
        "<h2>Headlines</h2>",
        "<p class='caption'>Per machine, the rows each run marks as a headline, at the largest size every machine "
        'measured (median of the valid repetitions); "not in this file": that run has no such headline '
        "row.</p>",
        headline_table(docs, labels),
        "<h2>Where the GPU starts to win</h2>",
        "<p class='caption'>Per compare group, against all CPU threads, the crossover the analysis found "
        "(with pinned transfers where measured) and the speedup at the largest size.</p>",
        crossover_table(docs, labels),
        "<h2>Charts</h2>",
    ]
    parts += report.chart_sections(charts, missing, "these files", "every chart could be drawn")
    parts.append("</body></html>")
    return files.write_text_atomically(outdir / "report.html", "\n".join(parts) + "\n")


def main(argv=None):
    files.honour_ctrl_c()
    parser = argparse.ArgumentParser(
        prog="python -m plots.fleet", description=(__doc__ or "").split("\n")[0]
    )
    parser.add_argument("files", nargs="+", help="offloadbench results files, one per machine")
    parser.add_argument(
        "--out",
        default="fleet-plots",
        help="folder for report.html and the charts (default: fleet-plots)",
    )
    parser.add_argument(
        "--analysis",
        action="append",
        default=[],
        metavar="N=PATH",
        help="the analysis block for the N-th file (from 0), for a file that has none",
    )
    args = parser.parse_args(argv)
    try:
        from . import fleet_charts  # matplotlib: a Python without it gets one line
    except ImportError as e:
        print(
            f"plots: {e.name or e} is not installed for {sys.executable} (run scripts/setup)",
            file=sys.stderr,
        )
        return 2
    try:
        docs = [results.load(f) for f in args.files]
        for item in args.analysis:
            index, _, path = item.partition("=")
            if not index.isdigit() or int(index) >= len(docs) or not path:
                raise results.ResultsError(
                    f"--analysis {item!r} is not N=PATH for one of the {len(docs)} files"
                )
            if results.analysis(docs[int(index)]) is None:
                docs[int(index)]["analysis"] = results.load_analysis(path)
    except results.ResultsError as e:
        print(f"plots: {e}", file=sys.stderr)
        return 2
    outdir = pathlib.Path(args.out)
    files.protect(*args.files, *(item.partition("=")[2] for item in args.analysis))
    try:
        files.check_not_input(outdir / "report.html")
        files.output_folder(outdir)
    except files.OutputError as e:
        print(f"plots: {e}", file=sys.stderr)
        return 2
    labels = _unique_labels(docs)
    try:
        charts, missing = fleet_charts.charts(docs, labels, outdir)
        path = write_report(docs, args.files, labels, outdir, charts, missing)
    except files.OutputError as e:
        print(f"plots: {e} (report.html not written)", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        files.remove_written()
        print("plots: interrupted; the charts written so far were removed", file=sys.stderr)
        return 130
    print(
        f"plots: {len(docs)} machines, {len(charts)} chart(s), {len(missing)} missing; report: {path}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
