"""One exception type for bad input, carrying every problem found at once."""
from __future__ import annotations

from dataclasses import dataclass


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
