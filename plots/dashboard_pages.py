"""The pages and charts of the nightly dashboard (plots/dashboard.py reads the tree; this writes the site).

    index.html                  the machines, and the open regressions across them
    <machine>/index.html        GPU, driver, link, the newest A/B verdict, the change points found
    <machine>/<family>.html     each benchmark's trend, its change points and their commits
    <machine>/charts/*.svg      one trend chart per benchmark
Every link is relative, so the folder can be opened from disk or served as it is (gh-pages)."""

import hashlib
import html
import re
import urllib.parse

from . import files, trend

STYLE = (
    "<style>body{font-family:sans-serif;max-width:1200px;margin:auto;padding:1em}"
    "table{border-collapse:collapse;margin-bottom:1em}td,th{border:1px solid #ccc;padding:3px 8px;"
    "text-align:left;vertical-align:top}img{max-width:100%}.SLOWER{color:#b00}.FASTER{color:#070}"
    "nav{margin-bottom:1em}.note{color:#555}</style>"
)
e = html.escape


def slug(text):
    """A file or anchor name for `text`: letters, digits, '.', '_' and '-' only."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "_"


def family_of(name):
    return name.split("/", 1)[0]


def href(*parts):
    return e("/".join(urllib.parse.quote(p) for p in parts))


def page(title, nav, body):
    return "\n".join(
        [
            "<!DOCTYPE html>",
            "<html><head><meta charset='utf-8'>",
            f"<title>{e(title)}</title>",
            STYLE,
            "</head><body>",
            f"<nav>{nav}</nav>" if nav else "",
            f"<h1>{e(title)}</h1>",
            *body,
            "</body></html>",
            "",
        ]
    )


def table(header, rows):
    head = "<tr>" + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr>" if header else ""
    return (
        "<table>"
        + head
        + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
        + "</table>"
    )


def value(x, metric):
    factor, unit = trend._scale(metric, [x])
    return f"{x * factor:.4g} {unit}".strip()


def percent(x):
    return f"{x * 100:+.1f}%" if isinstance(x, (int, float)) and not isinstance(x, bool) else "?"


def verdict(step):
    """A change point's or an A/B row's verdict and change, coloured."""
    name = str(step.get("verdict"))
    return f"<span class='{e(name)}'>{e(name)} {percent(step.get('change'))}</span>"


def ab_summary(ab):
    if ab is None:
        return "no A/B verdict in the tree"
    counts = ab["counts"]
    text = e(
        ", ".join(f"{counts.get(k, 0)} {k}" for k in ("SLOWER", "FASTER", "SAME", "INCONCLUSIVE"))
    )
    return (
        f"<span class='SLOWER'>SLOWER</span> ({text})"
        if counts.get("SLOWER")
        else f"no slowdown ({text})"
    )


def trend_link(machine, bench, up=""):
    name = bench["name"]
    page_name = machine["family_files"][family_of(name)] + ".html"
    return f"<a href='{up}{href(machine['slug'], page_name)}#{href(machine['anchors'][name])}'>{e(name)}</a>"


def index_page(machines):
    rows, regressions, ab_rows = [], [], []
    for m in machines:
        d, runs = m["description"], m["history"]["runs"]
        steps = sum(len(b["change_points"]) for b in m["history"]["benchmarks"])
        rows.append(
            [
                f"<a href='{href(m['slug'], 'index.html')}'>{e(m['name'])}</a>",
                e(d["gpu"]),
                e(d["driver"]),
                e(d["link"]),
                f"{len(runs)} ({e(runs[0]['start_time_utc'][:10])} to "
                f"{e(runs[-1]['start_time_utc'][:10])})",
                ab_summary(m["ab"]),
                str(steps),
                str(len(m["open"])),
            ]
        )
        for bench, cp in m["open"]:
            regressions.append(
                [
                    e(m["name"]),
                    trend_link(m, bench),
                    verdict(cp),
                    f"<code>{e(cp['git_sha'])}</code>",
                    f"<code>{e(cp['previous_git_sha'])}</code>",
                    e(cp["start_time_utc"]),
                    f"{value(cp['before'], m['history']['metric'])} → "
                    f"{value(bench['points'][-1]['median'], m['history']['metric'])}",
                ]
            )
        for row in (m["ab"] or {"benchmarks": []})["benchmarks"]:
            if isinstance(row, dict) and row.get("verdict") == "SLOWER":
                ab_rows.append(
                    [e(m["name"]), e(str(row.get("name"))), verdict(row), e(m["ab"]["file"])]
                )
    body = [
        "<section id='machines'><h2>Machines</h2>",
        table(
            [
                "machine",
                "GPU",
                "driver",
                "link",
                "nights",
                "newest A/B",
                "change points",
                "open regressions",
            ],
            rows,
        ),
        "</section>",
        "<section id='regressions'><h2>Open regressions</h2>",
        "<p class='note'>Benchmarks whose latest change point is a slowdown: they are still at the slower "
        "level. The commit is the first run at that level; the step appeared after the previous commit.</p>",
        table(
            ["machine", "benchmark", "step", "commit", "after", "since", "median then → now"],
            regressions,
        )
        if regressions
        else "<p>None: no benchmark on any machine is at a slower level than before its "
        "latest change point.</p>",
        "<h3>SLOWER in the newest A/B of each machine</h3>",
        table(["machine", "benchmark", "verdict", "A/B file"], ab_rows)
        if ab_rows
        else "<p>None.</p>",
        "</section>",
    ]
    return page("offloadbench nightly dashboard", "", body)


def machine_page(m):
    d, h = m["description"], m["history"]
    gpu = f"{d['gpu']}: {d['gpu_note']}" if d["gpu_note"] else d["gpu"]
    facts = [
        ("fingerprint", d["fingerprint"]),
        ("host", d["host"]),
        ("GPU", gpu),
        ("driver", d["driver"]),
        ("CUDA runtime", d["cuda_runtime"]),
        ("link", d["link"]),
        ("CPU", d["cpu"]),
        (
            "nights",
            f"{len(h['runs'])}, {h['runs'][0]['start_time_utc']} to {h['runs'][-1]['start_time_utc']}",
        ),
        ("newest commit", h["runs"][-1]["git_sha"]),
        ("base (last good commit)", m["baseline"] or "not recorded"),
        ("metric", h["metric"]),
    ]
    body = [
        "<section id='machine'><h2>Machine</h2>",
        table(None, [[e(k), e(str(v))] for k, v in facts]),
        "</section>",
        "<section id='ab'><h2>Newest A/B verdict</h2>",
        f"<p>{ab_summary(m['ab'])}</p>",
    ]
    if m["ab"]:
        changed = [
            r
            for r in m["ab"]["benchmarks"]
            if isinstance(r, dict) and r.get("verdict") in ("SLOWER", "FASTER")
        ]
        body.append(f"<p class='note'>From ab/{e(m['name'])}/{e(m['ab']['file'])}.</p>")
        if changed:
            body.append(
                table(
                    ["benchmark", "verdict", "interval", "why"],
                    [
                        [
                            e(str(r.get("name"))),
                            verdict(r),
                            f"{percent(r.get('interval_low'))} to "
                            f"{percent(r.get('interval_high'))}",
                            e(str(r.get("reason", ""))),
                        ]
                        for r in changed
                    ],
                )
            )
    steps = [(b, cp) for b in h["benchmarks"] for cp in b["change_points"]]
    steps.sort(key=lambda s: s[1]["start_time_utc"], reverse=True)
    body += [
        "</section>",
        "<section id='change-points'><h2>Change points</h2>",
        table(
            ["benchmark", "step", "commit", "after", "night"],
            [
                [
                    trend_link(m, b, "../"),
                    verdict(cp),
                    f"<code>{e(cp['git_sha'])}</code>",
                    f"<code>{e(cp['previous_git_sha'])}</code>",
                    e(cp["start_time_utc"]),
                ]
                for b, cp in steps
            ],
        )
        if steps
        else "<p>None found.</p>",
        "</section>",
        "<section id='families'><h2>Benchmark families</h2><ul>",
    ]
    for family, benches in m["families"].items():
        found = sum(len(b["change_points"]) for b in benches)
        link = href(m["family_files"][family] + ".html")
        body.append(
            f"<li><a href='{link}'>{e(family)}</a>: {len(benches)} benchmarks, "
            f"{found} change point(s)</li>"
        )
    body.append("</ul></section>")
    if h["ignored"]:
        body += [
            "<section id='ignored'><h2>Files left out</h2><ul>",
            *(f"<li>{e(why)}</li>" for why in h["ignored"]),
            "</ul></section>",
        ]
    return page(f"machine {m['name']}", "<a href='../index.html'>all machines</a>", body)


def family_page(m, family, benches, charts_out):
    """The page, and the charts it shows as [(path, bench, runs, metric)] for draw_charts."""
    h, charts = m["history"], []
    body = [
        "<section id='trends'>",
        "<p class='note'>Median of each night's repetitions (line), their interquartile range (dark band) and "
        "full range (light band); dashed lines mark change points, labelled with the commit of the first "
        "night at the new level.</p>",
    ]
    for bench in benches:
        anchor = m["anchors"][bench["name"]]
        chart = f"{anchor}.svg"
        charts.append((charts_out / chart, bench, h["runs"], h["metric"]))
        last = bench["points"][-1]
        steps = (
            "; ".join(
                f"{verdict(cp)} at <code>{e(cp['git_sha'])}</code> (after "
                f"<code>{e(cp['previous_git_sha'])}</code>, {e(cp['start_time_utc'])})"
                for cp in bench["change_points"]
            )
            or "no change point"
        )
        body += [
            f"<section class='benchmark' id='{e(anchor)}'><h3>{e(bench['name'])}</h3>",
            f"<img src='{href('charts', chart)}' alt='trend of {e(bench['name'])}'>",
            f"<p>{len(bench['points'])} nights; newest median {value(last['median'], h['metric'])}; {steps}</p>",
            "</section>",
        ]
    body.append("</section>")
    nav = f"<a href='../index.html'>all machines</a> · <a href='index.html'>machine {e(m['name'])}</a>"
    return page(f"{family} on {m['name']}", nav, body), charts


def unique_names(names, reserved=()):
    """{name: slug} with the slugs made distinct (a suffix where two names slug alike), none of them one
    of the `reserved` file names of the folder, and short enough for any file system (a hash of the name
    where it is cut)."""
    taken, out = {r.lower() for r in reserved}, {}
    for name in names:
        base = candidate = slug(name)
        if len(base) > files.MAX_STEM:
            digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()
            base = candidate = f"{base[: files.MAX_STEM - 9]}-{digest[:8]}"
        n = 1
        while (
            candidate.lower() in taken or f"{candidate.lower()}.html" in taken
        ):  # case-insensitive too
            n += 1
            candidate = f"{base}-{n}"
        taken.add(candidate.lower())
        out[name] = candidate
    return out


def write_site(site, machines):
    """Writes every page under `site`; returns the charts to draw as [(path, bench, runs, metric)]."""
    machine_dirs = unique_names(
        (m["name"] for m in machines), reserved=("index.html",)
    )  # the site's own page
    charts = []
    for m in machines:
        m["slug"] = machine_dirs[m["name"]]
        family_files = unique_names(["index", *m["families"]])  # index.html is the machine page
        m["family_files"] = {family: family_files[family] for family in m["families"]}
        m["anchors"] = unique_names(
            b["name"] for b in m["history"]["benchmarks"]
        )  # and chart file names
    files.write_text_atomically(site / "index.html", index_page(machines))
    for m in machines:
        folder = site / m["slug"]
        (folder / "charts").mkdir(parents=True)
        files.write_text_atomically(folder / "index.html", machine_page(m))
        for family, benches in m["families"].items():
            text, drawn = family_page(m, family, benches, folder / "charts")
            files.write_text_atomically(folder / f"{m['family_files'][family]}.html", text)
            charts += drawn
    return charts


def draw_trend(ax, bench, runs, metric):
    points = bench["points"]
    x = [p["run"] for p in points]
    factor, unit = trend._scale(metric, [p["max"] for p in points])
    scaled = {k: [p[k] * factor for p in points] for k in ("median", "q1", "q3", "min", "max")}
    ax.fill_between(x, scaled["min"], scaled["max"], alpha=0.15, color="tab:blue", linewidth=0)
    ax.fill_between(x, scaled["q1"], scaled["q3"], alpha=0.35, color="tab:blue", linewidth=0)
    ax.plot(x, scaled["median"], marker="o", markersize=2.5, color="tab:blue")
    for cp in bench["change_points"]:
        at = points[cp["point"]]["run"] - 0.5
        color = "tab:red" if cp["verdict"] == "SLOWER" else "tab:green"
        ax.axvline(at, color=color, linestyle="--")
        ax.annotate(
            f"{cp['change'] * 100:+.1f}% at {cp['git_sha'][:12]}",
            (at, 1),
            xycoords=("data", "axes fraction"),
            color=color,
            fontsize=8,
            ha="left",
            va="top",
        )
    ax.set_ylabel(f"{metric} [{unit}]" if unit else metric, fontsize=8)
    ax.set_xlim(-0.5, max(len(runs) - 0.5, 0.5))
    step = max(1, len(runs) // 12)
    ax.set_xticks(range(0, len(runs), step))
    ax.set_xticklabels([r["start_time_utc"][5:10] for r in runs[::step]], fontsize=7)
    ax.tick_params(axis="y", labelsize=7)
    ax.grid(alpha=0.3)


def draw_charts(tasks):
    """Draws [(path, bench, runs, metric)] on one reused figure (a new figure per chart costs more than the chart)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from . import common  # matplotlib: imported once the caller checked that it loads

    plt.rcParams["svg.fonttype"] = "none"  # text as text: smaller files, selectable labels
    plt.rcParams["svg.hashsalt"] = "offloadbench"  # the same input draws the same file
    fig, ax = plt.subplots(figsize=(8, 2.3))
    fig.subplots_adjust(left=0.09, right=0.99, top=0.9, bottom=0.14)
    try:
        for path, bench, runs, metric in tasks:
            ax.clear()
            draw_trend(ax, bench, runs, metric)
            common.literal_texts(fig)
            files.write_atomically(path, lambda f: fig.savefig(f, format="svg"))
    finally:
        plt.close(fig)
