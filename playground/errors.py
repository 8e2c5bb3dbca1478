"""One exception type for bad input, carrying every problem found at once."""
from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DataError", "Problem", "read_text"]


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with the input: the file, the item in it (case/fact id), the line."""

    file: str
    message: str
    where: str = ""
    line: int | None = None

    def __str__(self) -> str:
        place = self.file
        if self.line is not None:
            place += f":{self.line}"
        if self.where:
            place += f" [{self.where}]"
        return f"{place}: {self.message}"


class DataError(ValueError):
    """Raised with the full list of problems; the CLI prints it without a traceback."""

    def __init__(self, problems: list[Problem], summary: str = "invalid data"):
        self.problems = sorted(problems, key=lambda p: (p.file, p.line or 0, p.where, p.message))
        self.summary = summary
        super().__init__(self.report())

    def report(self) -> str:
        lines = [f"{self.summary}: {len(self.problems)} problem(s)"]
        lines += [f"  {p}" for p in self.problems]
        return "\n".join(lines)


def read_text(path: Path, rel: str, problems: list[Problem]) -> str | None:
    """The UTF-8 text of ``path``, or None with one problem appended saying why it cannot be read.

    Covers what a folder of data files can hold besides files: directories with a file's
    name, dangling symbolic links, symbolic link loops, unreadable files, and bytes that are
    not UTF-8 (with the line and byte offset of the first bad byte).
    """
    try:
        raw = path.read_bytes()
    except IsADirectoryError:
        problems.append(Problem(rel, "is a directory, expected a file"))
        return None
    except FileNotFoundError:
        if path.is_symlink():
            problems.append(Problem(rel, f"dangling symbolic link (its target {os.readlink(path)} does not exist)"))
        else:
            problems.append(Problem(rel, "file not found"))
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            problems.append(Problem(rel, "symbolic link loop (following the link leads back to it)"))
        else:
            problems.append(Problem(rel, f"cannot read ({exc.strerror or exc})"))
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        problems.append(Problem(rel, f"not UTF-8 text ({exc.reason} at byte {exc.start})", line=line))
        return None
