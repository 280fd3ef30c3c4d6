"""The user docs stay short enough to read: pages of bounded length, paragraphs of at most six lines, no
dated records (those live in lab/records/), and a glossary the README leads to. Reads the pages only."""

import re

import pytest

from conftest import ROOT

DOCS = ROOT / "docs"
# Reference pages are looked things up in, not read through: they may pass the task pages' length.
REFERENCES = {"results-schema.md", "command-line.md", "compare-rule.md"}
TOTAL_LINES = 2000
TASK_PAGE_LINES = 300
REFERENCE_PAGE_LINES = 400
PARAGRAPH_LINES = 6
DATE = re.compile(r"20\d\d-\d\d-\d\d")
LIST_ITEM = re.compile(r"^\s*([-*+]|\d+[.)])\s+")


def pages():
    return sorted(DOCS.glob("*.md"))


def page_ids():
    return [page.name for page in pages()]


def prose_paragraphs(text):
    """(first line number, lines) of each prose paragraph: fenced and indented code, tables, headings and
    blank lines end one; each list item starts its own, its wrapped continuation lines count with it."""
    paragraphs, current, fence, previous_blank = [], None, None, True
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        opening = re.match(r"^\s*(```+|~~~+)", line)
        if fence is not None:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = None
            previous_blank = False
            continue
        if opening:
            fence, current = opening.group(1), None
            continue
        indented_code = (
            line.startswith(("    ", "\t")) and (previous_blank or current is None) and stripped
        )
        if not stripped or stripped.startswith(("#", "|")) or indented_code:
            current = None
            previous_blank = not stripped or (previous_blank and bool(indented_code))
            continue
        previous_blank = False
        if current is None or LIST_ITEM.match(line):
            current = (number, [])
            paragraphs.append(current)
        current[1].append(line)
    return paragraphs


def outside_code(text):
    """The page without its fenced blocks, each removed line kept as an empty one (line numbers hold)."""
    kept, fence = [], None
    for line in text.splitlines():
        opening = re.match(r"^\s*(```+|~~~+)", line)
        if fence is not None:
            if opening and opening.group(1)[0] == fence[0]:
                fence = None
            kept.append("")
        elif opening:
            fence = opening.group(1)
            kept.append("")
        else:
            kept.append(line)
    return kept


def test_the_docs_together_stay_readable():
    counts = {page.name: len(page.read_text(encoding="utf-8").splitlines()) for page in pages()}
    assert sum(counts.values()) <= TOTAL_LINES, (
        f"docs/*.md hold {sum(counts.values())} lines (at most {TOTAL_LINES}): {counts}"
    )


@pytest.mark.parametrize("name", page_ids())
def test_a_page_is_not_too_long(name):
    lines = len((DOCS / name).read_text(encoding="utf-8").splitlines())
    limit = REFERENCE_PAGE_LINES if name in REFERENCES else TASK_PAGE_LINES
    kind = (
        "a reference page"
        if name in REFERENCES
        else "a task page (references: " + ", ".join(sorted(REFERENCES)) + ")"
    )
    assert lines <= limit, f"docs/{name} has {lines} lines; {kind} has at most {limit}"


@pytest.mark.parametrize("name", page_ids())
def test_no_paragraph_is_longer_than_six_lines(name):
    long = [
        f"line {first} ({len(lines)} lines): {lines[0].strip()[:60]}…"
        for first, lines in prose_paragraphs((DOCS / name).read_text(encoding="utf-8"))
        if len(lines) > PARAGRAPH_LINES
    ]
    assert not long, (
        f"docs/{name}: split these paragraphs or make them a list or table:\n" + "\n".join(long)
    )


def dated(line):
    """The dates on a line that are not part of a file name or path (results/reference/<gpu>-<date>-….json)."""
    found = []
    for token in re.findall(r"\S*" + DATE.pattern + r"\S*", line):
        path = token.strip("`*()[],.;:'\"")
        if "/" in path or re.search(r"\.(json|png|svg|html|md|txt|csv)\b", path):
            continue
        found.append(token)
    return found


@pytest.mark.parametrize("name", page_ids())
def test_no_page_is_a_dated_record(name):
    """Measurements with their dates belong in lab/records/; a date may appear in code or in a file's name."""
    hits = [
        f"line {number}: {', '.join(dated(line))}"
        for number, line in enumerate(
            outside_code((DOCS / name).read_text(encoding="utf-8")), start=1
        )
        if dated(line)
    ]
    assert not hits, (
        f"docs/{name} has dates outside code and file names (move the record to lab/records/):\n"
        + "\n".join(hits)
    )


def test_the_paragraph_reader_counts_what_a_reader_sees():
    text = "\n".join(
        [
            "one",
            "two",
            "",
            "```",
            *["code"] * 9,
            "```",
            "| a |",
            "|---|",
            "- item",
            "  wrapped",
            "- next",
            "",
            "    indented",
            "    code",
            "",
            "# heading",
            "three",
        ]
    )
    assert [(first, len(lines)) for first, lines in prose_paragraphs(text)] == [
        (1, 2),
        (17, 2),
        (19, 1),
        (25, 1),
    ]
    assert outside_code("a\n```\n2026-01-01\n```\nb") == ["a", "", "", "", "b"]
    assert dated("from `results/reference/gpu-2026-11-26-quick.json`") == []
    assert dated("Measured 2026-11-25 on a Xeon") == ["2026-11-25"]


def test_the_glossary_exists_and_the_readme_leads_to_it():
    glossary = DOCS / "glossary.md"
    assert glossary.exists(), "docs/glossary.md: the project's own words, one short entry each"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(docs/glossary.md)" in readme, (
        "README.md does not link docs/glossary.md: add a row to its docs table"
    )
