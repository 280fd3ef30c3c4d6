"""docs/command-line.md documents exactly the options `--help` lists, for the program and every command.

The page's convention: a heading "## `offloadbench CMD`" per command ("## `offloadbench`" for the
program), and under it table rows whose first cell names the option or positional in backticks
(`` | `--name` | `` or `` | `--help`, `-h` | ``). `--help` is documented once, under the program."""

import re

import pytest
from conftest import ROOT

PAGE = ROOT / "docs" / "command-line.md"
HEADING = re.compile(r"^## `offloadbench(?: ([a-z]+))?`\s*$")


def documented():
    """{command ('' for the program): set of names in its table rows' first cells}."""
    sections, current = {}, None
    for line in PAGE.read_text().splitlines():
        if line.startswith("## "):
            match = HEADING.match(line)
            current = match.group(1) or "" if match else None
            if current is not None:
                assert current not in sections, f"command-line.md has two sections for '{current}'"
                sections[current] = set()
        elif current is not None and line.startswith("| `"):
            first_cell = line.split("|")[1]
            sections[current].update(name for name in re.findall(r"`([^`]+)`", first_cell))
    return sections


def help_names(text):
    """CLI11's --help: option names from "Options:" ('-h,--help' gives both), positionals from
    "Positionals:", and the commands from "Subcommands:"."""
    names, commands, section = set(), set(), None
    for line in text.splitlines():
        if re.match(r"^[A-Z][A-Za-z ]*:$", line):
            section = line[:-1]
            continue
        entry = re.match(r"^  (\S+)", line)  # continuation lines are indented further
        if not entry or line.startswith("   "):
            continue
        first = entry.group(1)
        if section == "Options":
            names.update(first.split(","))
        elif section == "Positionals":
            names.add(first)
        elif section == "Subcommands":
            commands.add(first)
    return names, commands


def difference(command, in_help, in_page):
    where = f"'offloadbench {command}'" if command else "'offloadbench'"
    problems = []
    if in_help - in_page:
        problems.append(
            f"{where} --help lists {sorted(in_help - in_page)}, missing from docs/command-line.md"
        )
    if in_page - in_help:
        problems.append(
            f"docs/command-line.md documents {sorted(in_page - in_help)} under {where}, "
            "which --help does not list"
        )
    return problems


def test_the_page_and_help_name_the_same_commands(run_offloadbench):
    done = run_offloadbench("--help")
    assert done.returncode == 0, done.stderr
    _, commands = help_names(done.stdout)
    assert commands, done.stdout
    page = documented()
    assert "" in page, (
        "docs/command-line.md has no '## `offloadbench`' section for the program's options"
    )
    assert set(page) - {""} == commands, (
        f"commands only in --help: {sorted(commands - set(page))}; "
        f"only in the page: {sorted(set(page) - {''} - commands)}"
    )


def commands_in_help():
    # The page's headings, checked against --help by the test above; each is one parametrised case.
    return sorted(documented())


@pytest.mark.parametrize("command", commands_in_help())
def test_every_option_of_a_command_is_on_the_page_and_nothing_else(run_offloadbench, command):
    done = run_offloadbench(*([command] if command else []), "--help")
    assert done.returncode == 0, done.stderr
    in_help, _ = help_names(done.stdout)
    assert in_help, done.stdout
    if command:  # --help is documented once, under the program
        in_help -= {"-h", "--help"}
    problems = difference(command, in_help, documented()[command])
    assert not problems, "\n".join(problems)


def test_the_help_parser_reads_clis_format():
    # What CLI11 prints, option names and a wrapped description included.
    text = """Usage: offloadbench compare [OPTIONS] BASE NEW

Positionals:
  BASE TEXT REQUIRED          Baseline results file

Options:
  -h,--help                   Print this help message and exit
  --format TEXT:{a,b} REQUIRED
                              a or b
  --verbose                   Also print the method
"""
    assert help_names(text) == ({"BASE", "-h", "--help", "--format", "--verbose"}, set())
