"""report.html and every dashboard page as a user sees them, in headless Chromium driven by Selenium: every
image loads, the console has no error, every link stays inside the folder and reaches a file (and the
anchor it names), and the page has its sections; in the report's screenshot every chart is drawn, readable
and clear of the others, and the page fits the window. A full-page screenshot of each page is kept in
build/test/browser-artifacts/ (or $OFFLOADBENCH_BROWSER_ARTIFACTS). Chromium, chromium-driver and selenium
are test-only dependencies that scripts/setup installs; where they are missing these tests skip and say so."""

import json
import os
import pathlib
import shutil
import urllib.parse

import pytest

from conftest import ROOT

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
H100_RUN = ROOT / "results" / "reference" / "nvidia-h100-80gb-hbm3-2026-11-26-quick.json"
CPU_RUN = ROOT / "tests" / "python" / "fixtures" / "cpu_only.json"
ARTIFACTS = pathlib.Path(
    os.environ.get("OFFLOADBENCH_BROWSER_ARTIFACTS", ROOT / "build" / "test" / "browser-artifacts")
)

# What the page state looks like once every image has finished loading (or failing).
PAGE_STATE = """
const done = document.readyState === 'complete' && Array.from(document.images).every(i => i.complete);
return done && {
  images: Array.from(document.images).map(i => [i.getAttribute('src'), i.naturalWidth]),
  links: Array.from(document.links).map(a => a.href),
  ids: Array.from(document.querySelectorAll('[id]')).map(x => x.id),
  headings: Array.from(document.querySelectorAll('h1, h2')).map(h => h.textContent.trim()),
  height: document.documentElement.scrollHeight + window.outerHeight - window.innerHeight,
};"""


@pytest.fixture(
    scope="session"
)  # session: set up before, and so skipped without, the session's nightly site
def browser():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip(
            "selenium is not installed for this Python (scripts/setup installs it for the tests)"
        )
    if not CHROMIUM or not CHROMEDRIVER:
        pytest.skip(
            "headless Chromium is not installed (Debian: apt-get install chromium chromium-driver; "
            "scripts/setup tries to)"
        )
    options = webdriver.ChromeOptions()
    options.binary_location = (
        CHROMIUM  # with the driver's path given too, Selenium downloads nothing
    )
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--allow-file-access-from-files",
        "--window-size=1280,900",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(60)
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    ARTIFACTS.mkdir(parents=True)
    yield driver
    driver.quit()


def visit(driver, page, screenshot):
    """Loads `page` and returns its state and the problems a user would see, after a full-page screenshot."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get_log("browser")  # drop what earlier pages logged
    driver.set_window_size(1280, 900)  # the screenshot of the page before made it taller
    driver.get(page.as_uri())
    state = WebDriverWait(driver, 60).until(lambda d: d.execute_script(PAGE_STATE))
    problems = [f"image {src} did not load" for src, width in state["images"] if not width > 0]
    problems += [
        f"console: {entry['message']}"
        for entry in driver.get_log("browser")
        if entry["level"] == "SEVERE"
    ]
    driver.set_window_size(1280, min(max(state["height"], 600), 6000))
    driver.save_screenshot(str(ARTIFACTS / screenshot))
    return state, problems


# Where each image is drawn on the page, in CSS pixels from the page's top left.
IMAGE_BOXES = """return Array.from(document.images).map(i => { const r = i.getBoundingClientRect();
  return [i.getAttribute('src'), r.left + window.scrollX, r.top + window.scrollY, r.width, r.height]; });"""


def screenshot_problems(driver, screenshot):
    """What the full-page screenshot shows wrong: a page wider than the window, a chart drawn too small to
    read, blank where it is drawn, or over another chart."""
    from PIL import Image

    problems = []
    shot = Image.open(ARTIFACTS / screenshot).convert("RGB")
    scale = shot.width / driver.execute_script("return window.innerWidth")
    if driver.execute_script("return document.documentElement.scrollWidth > window.innerWidth"):
        problems.append("the page is wider than the window (a horizontal scroll bar)")
    boxes = driver.execute_script(IMAGE_BOXES)
    for src, x, y, width, height in boxes:
        if width < 320 or height < 200:
            problems.append(f"chart {src} is drawn {width:.0f}x{height:.0f} px, too small to read")
        box = tuple(round(v * scale) for v in (x, y, x + width, y + height))
        if box[3] <= shot.height and all(low == high for low, high in shot.crop(box).getextrema()):
            problems.append(f"chart {src} is one flat colour in the screenshot")
    for i, (a, ax, ay, aw, ah) in enumerate(boxes):
        for b, bx, by, bw, bh in boxes[i + 1 :]:
            if min(ax + aw, bx + bw) - max(ax, bx) > 1 and min(ay + ah, by + bh) - max(ay, by) > 1:
                problems.append(f"charts {a} and {b} overlap")
    return problems


def link_problems(state, site, ids_of):
    """Links that leave `site`, reach no file, or name an anchor their page lacks."""
    problems = []
    for link in state["links"]:
        url = urllib.parse.urlsplit(link)
        target = pathlib.Path(urllib.parse.unquote(url.path))
        if url.scheme != "file" or not target.resolve().is_relative_to(site.resolve()):
            problems.append(f"link {link} leaves {site}")
        elif not target.is_file():
            problems.append(f"link {link} reaches no file")
        elif url.fragment and target.suffix == ".html" and url.fragment not in ids_of(target):
            problems.append(f"link {link}: no element with id {url.fragment!r} there")
    return problems


def screenshot_name(site, page, prefix):
    return prefix + "-" + "-".join(page.relative_to(site).with_suffix(".png").parts)


def h100_transfers(folder):
    """The H100 reference run's transfer and streams rows with its context: real GPU rows whose report
    (bandwidth, pinning, overlap) is drawn in seconds, where the whole run's takes a minute."""
    doc = json.loads(H100_RUN.read_text())
    doc.pop("analysis")  # plot computes it for the rows kept
    doc["benchmarks"] = [
        r for r in doc["benchmarks"] if r["name"].split("/")[0] in ("transfer", "streams")
    ]
    path = folder / "h100-transfer-streams.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.fixture(scope="module")
def reports(tmp_path_factory, offloadbench_bin):
    """report.html from `offloadbench plot` on the H100 reference run (GPU rows) and on a CPU-only file."""
    import subprocess

    made = {}
    for label, source in (("gpu", h100_transfers), ("cpu-only", lambda folder: CPU_RUN)):
        out = tmp_path_factory.mktemp(f"report-{label}")
        source = source(out)
        done = subprocess.run(
            [offloadbench_bin, "plot", str(source), "--out", str(out)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr
        made[label] = out / "report.html"
    return made


@pytest.mark.parametrize("label", ["gpu", "cpu-only"])
def test_report_in_the_browser(browser, reports, label):
    page = reports[label]
    state, problems = visit(browser, page, f"report-{label}.png")
    problems += link_problems(state, page.parent, lambda target: set(state["ids"]))
    problems += screenshot_problems(browser, f"report-{label}.png")
    assert not problems, "\n".join(problems)
    assert state["headings"] == [
        "offloadbench report",
        "Summary",
        "Machine",
        "Charts",
        "Missing" if label == "gpu" else "Not applicable on this machine",
    ]
    charts = [src for src, _ in state["images"]]
    text = browser.find_element("tag name", "body").text
    if label == "gpu":
        assert "GPU 0 NVIDIA H100 80GB HBM3" in text and "GPU unavailable" not in text
        assert any(src.startswith("bandwidth") for src in charts) and len(charts) >= 10, charts
    else:
        assert "GPU unavailable" in text and "NVIDIA" not in text
        assert charts and not any(src.startswith("bandwidth_d2h") for src in charts), charts


def test_every_dashboard_page_in_the_browser(browser, nightly_site):
    assert nightly_site.done.returncode == 0, nightly_site.done.stderr
    site = nightly_site.site
    pages = sorted(site.rglob("*.html"))
    ids, states, problems = {}, {}, []
    for page in pages:
        state, seen = visit(browser, page, screenshot_name(site, page, "dashboard"))
        states[page], ids[page.resolve()] = state, set(state["ids"])
        problems += [f"{page.relative_to(site)}: {p}" for p in seen]
    for page, state in states.items():
        problems += [
            f"{page.relative_to(site)}: {p}"
            for p in link_problems(state, site, lambda t: ids[t.resolve()])
        ]
    assert not problems, "\n".join(problems)
    machines = {m.name for m in nightly_site.machines}
    for page, state in states.items():
        where = page.relative_to(site).parts
        if where == ("index.html",):
            expected = {"machines", "regressions"}
            assert {
                pathlib.Path(urllib.parse.unquote(urllib.parse.urlsplit(link).path)).parent.name
                for link in state["links"]
            } >= machines  # every machine is reachable from the index
        elif where[1:] == ("index.html",):
            expected = {"machine", "ab", "change-points", "families"}
        else:
            expected = {"trends"}
            assert state["images"], page  # one trend chart per benchmark
        assert expected <= set(state["ids"]), (page, state["ids"])
    assert len(pages) == 1 + sum(
        1 + len({n.split("/")[0] for n in m.benchmarks()}) for m in nightly_site.machines
    )
