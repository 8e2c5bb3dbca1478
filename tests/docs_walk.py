"""The docs as a reader meets them: their fenced blocks, the commands in them, and the output they promise.

Read by ``tests/test_readme_examples.py`` (which runs every command and compares every promised output) and
``tests/test_docs_serve.py`` (which starts every ``serve`` and opens its page in Chromium).

Rules of the docs' code blocks (docs/development.md, "The docs are tests"):

* A **command** is a line of a fenced block (not ``python``) whose first word, after any ``VAR=value``
  prefixes, is a program in :data:`PROGRAMS`.  A line ending in ``\\`` goes on on the next line, and a
  here-document (``cat > FILE <<'TAG'`` … ``TAG``) belongs to the command that opens it, as in a shell.
* A block with commands is a **command block**.  An untagged block without commands that comes after a
  command block (prose between them is fine, another command block is not) is that block's **printed
  output**: each of its lines must be printed by those commands now, figures and all (:func:`line_pattern`).
  A block tagged with another language (``text``, ``yaml``, ``nginx``…) is neither.
* A command that cannot run here carries a visible marker in the source: a trailing ``# not run by the docs test: WHY``,
  or a line ``# not run by the docs test: WHY`` at the top of its block for every command of the block.  The marker is
  read, listed and counted; nothing else is left out.
* A trailing ``# exits N`` says the command ends with exit code N (a gate's FAIL, say).
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["PROGRAMS", "Block", "Command", "blocks_of", "commands_of", "expected_exit", "line_pattern",
           "not_run_reason", "outputs_of", "python_blocks", "stale_lines"]

#: First words that make a line of a code block a command.
PROGRAMS = frozenset({
    "playground", ".venv/bin/playground", ".venv/bin/python", "python", "python3", "make", "git", "export",
    "cat", "cp", "mkdir", "printf", "echo", "openssl", "head", "ollama", "sudo", "docker", "valgrind", "sqlite3",
    "curl", "cd", "rm", "ls",
})
NOT_RUN = re.compile(r"#\s*not run by the docs test:\s*(.+?)\s*$")
_FENCE = re.compile(r"^(`{3,}|~{3,})\s*([\w+-]*)\s*$")
_ASSIGN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=\S*")
_HEREDOC = re.compile(r"<<-?\s*'?\"?(\w+)'?\"?")


@dataclass(frozen=True)
class Block:
    """One fenced code block: its page, the line of its opening fence, its language tag and its lines."""

    doc: Path
    line: int
    lang: str
    lines: tuple[str, ...]


@dataclass(frozen=True)
class Command:
    """One command as a shell reads it: its first line's number, its text, and the block it is in."""

    doc: Path
    line: int
    text: str
    block: int  # index of its block in the page's blocks
    not_run: str | None = None
    output: list[tuple[int, str]] = field(default_factory=list, compare=False, hash=False)


def blocks_of(doc: Path, text: str) -> list[Block]:
    """Every fenced block of a page, in order (an unclosed fence runs to the end of the page)."""
    found: list[Block] = []
    fence, lang, start, lines = None, "", 0, []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if fence is None:
            m = _FENCE.match(stripped)
            if m:
                fence, lang, start, lines = m.group(1), m.group(2).lower(), number, []
            continue
        if stripped.startswith(fence) and stripped.strip(fence[0]) == "":
            found.append(Block(doc, start, lang, tuple(lines)))
            fence = None
        else:
            lines.append(line)
    if fence is not None:
        found.append(Block(doc, start, lang, tuple(lines)))
    return found


def _program(line: str) -> str | None:
    """The program a line runs (after ``VAR=value`` prefixes), or None for a line that is not a command."""
    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        words = line.split()
    while words and _ASSIGN.fullmatch(words[0]):
        words = words[1:]
    return words[0] if words and words[0] in PROGRAMS else None


def not_run_reason(text: str) -> str | None:
    """The reason of a ``# not run by the docs test: WHY`` marker on a command's last line, else None."""
    m = NOT_RUN.search(text.splitlines()[-1]) if text else None
    return m.group(1) if m else None


def commands_of(block: Block, index: int) -> list[Command]:
    """The commands of one block (none in a ``python`` block or a block tagged with another language)."""
    if block.lang not in ("", "sh", "bash", "shell", "console"):
        return []
    block_reason = None
    found: list[Command] = []
    lines = list(block.lines)
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        number = block.line + 1 + i
        if not found and block_reason is None and (m := NOT_RUN.match(stripped)):
            block_reason = m.group(1)
            i += 1
            continue
        if _program(stripped) is None:
            i += 1
            continue
        held = [stripped]
        while held[-1].endswith("\\") and i + 1 < len(lines):
            i += 1
            held.append(lines[i].strip())
        text = "\n".join(held)
        tag = _HEREDOC.search(text)
        if tag and "<<" in text:
            body = []
            while i + 1 < len(lines):
                i += 1
                body.append(lines[i])
                if lines[i].strip() == tag.group(1):
                    break
            text = text + "\n" + "\n".join(body)
        found.append(Command(block.doc, number, text, index, not_run_reason(held[-1]) or block_reason))
        i += 1
    return found


def outputs_of(blocks: list[Block]) -> list[tuple[int, int, list[tuple[int, str]]]]:
    """``(command block index, output block's fence line, [(line number, text)])`` for each printed-output block."""
    found = []
    last_commands: int | None = None
    for index, block in enumerate(blocks):
        if commands_of(block, index):
            last_commands = index
            continue
        if block.lang == "" and last_commands is not None and any(line.strip() for line in block.lines):
            found.append((last_commands, block.line,
                          [(block.line + 1 + k, line) for k, line in enumerate(block.lines)]))
    return found


def python_blocks(blocks: list[Block]) -> list[Block]:
    """The blocks tagged ``python``."""
    return [b for b in blocks if b.lang == "python"]


def expected_exit(command: str) -> int:
    """The exit code a guide says its command ends with (a trailing ``# exits N``), else 0."""
    m = re.search(r"#\s*exits (\d+)", command)
    return int(m.group(1)) if m else 0


_ELISION = re.compile(r"…|\.\.\.")
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:\d\d|Z)?")


def line_pattern(line: str) -> re.Pattern[str]:
    """A documented output line as a pattern over a printed line.

    The line must be printed as shown, every figure exactly, with three allowances a reader would make: runs
    of spaces match any run of spaces (tables realign), ``…`` or ``...`` stands for any text the doc left out,
    and an ISO timestamp stands for any timestamp (the moment a label was made is not the doc's to promise).
    """
    parts = []
    for token in line.strip().split():
        pieces = []
        for i, chunk in enumerate(_ELISION.split(token)):
            if i:
                pieces.append(".*?")
            times = _TIME.split(chunk)
            pieces.append(r"\S+".join(re.escape(t) for t in times))
        parts.append("".join(pieces))
    return re.compile(r"\s+".join(parts))


def _skeleton(line: str) -> str:
    return re.sub(r"\d+(?:[.,]\d+)*", "#", " ".join(line.split()))


def stale_lines(promised: list[tuple[int, str]], printed: str) -> list[str]:
    """The documented lines the command no longer prints, each as ``LINE: doc says … / prints …``.

    A line that is only an elision, or blank, promises nothing.  Where a printed line has the same words and
    other figures, it is quoted beside the documented one.
    """
    lines = [" ".join(p.split()) for p in printed.splitlines() if p.strip()]
    stale = []
    for number, text in promised:
        wanted = text.strip()
        if not wanted or _ELISION.fullmatch(wanted):
            continue
        pattern = line_pattern(wanted)
        if any(pattern.fullmatch(p) for p in lines):
            continue
        skeleton = _skeleton(wanted)
        near = [p for p in lines if _skeleton(p) == skeleton]
        said = f"prints {near[0]!r}" if near else "prints no such line"
        stale.append(f"{number}: doc says {' '.join(wanted.split())!r} / {said}")
    return stale
