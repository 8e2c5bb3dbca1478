"""Load the corpus (markdown articles with YAML front matter) and chunk it into passages.

Layout: ``corpus/<tenant>/<slug>.md``.  Front matter keys: ``title``,
``tenant`` (= folder), ``slug`` (= file name), ``version`` (int >= 1),
``updated`` (ISO date), optional ``supersedes`` (slug of an older article of
the same tenant).  Body: an optional ``# Title`` line, then every line under a
``##`` heading; headings are unique within an article and are what locators
name.  Every problem in every file is collected and raised together as one
:class:`~playground.errors.DataError`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from . import safeyaml
from .errors import DataError, Problem, read_text
from .model import Document, Locator, Passage, Section

__all__ = [
    "CHUNKERS", "OPTIONAL_KEYS", "REQUIRED_KEYS", "Corpus", "chunk_by_heading", "chunk_corpus", "chunk_fixed",
    "load_corpus", "read_corpus",
]


REQUIRED_KEYS = {"title": str, "tenant": str, "slug": str, "version": int, "updated": date}
OPTIONAL_KEYS = {"supersedes": str}
_SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Corpus:
    """All articles, sorted by (tenant, slug), with locator lookup."""

    documents: tuple[Document, ...]

    _by_key: dict[tuple[str, str], Document] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_key", {(d.tenant, d.slug): d for d in self.documents})

    @property
    def tenants(self) -> tuple[str, ...]:
        return tuple(sorted({d.tenant for d in self.documents}))

    def document(self, tenant: str, slug: str) -> Document | None:
        return self._by_key.get((tenant, slug))

    def for_tenant(self, tenant: str) -> tuple[Document, ...]:
        return tuple(d for d in self.documents if d.tenant == tenant)

    def resolve(self, locator: Locator) -> Section | None:
        """The section a locator names, or None when it names nothing."""
        doc = self.document(locator.tenant, locator.slug)
        if doc is None:
            return None
        return next((s for s in doc.sections if s.heading == locator.heading), None)

    def superseded_by(self, tenant: str, slug: str) -> Document | None:
        """The newer article that supersedes ``slug``, if any."""
        return next((d for d in self.for_tenant(tenant) if d.supersedes == slug), None)


def _split_front_matter(text: str, path: str, problems: list[Problem]) -> tuple[dict[str, Any] | None, list[str], int]:
    """Return (front matter, body lines, line number of the first body line)."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        problems.append(Problem(path, "missing YAML front matter (the file must start with '---')", line=1))
        return None, lines, 1
    try:
        close = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        problems.append(Problem(path, "front matter is not closed by a '---' line", line=1))
        return None, [], len(lines) + 1
    raw = "\n".join(lines[1:close])
    try:
        # one empty line for the opening '---', so YAML's line numbers are the file's
        meta = safeyaml.load("\n" + raw)
    except safeyaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        problems.append(Problem(path, f"malformed YAML front matter: {problem}", line=line))
        return None, lines[close + 1 :], close + 2
    if not isinstance(meta, dict):
        problems.append(Problem(path, "front matter must be a mapping of keys to values", line=2))
        return None, lines[close + 1 :], close + 2
    return meta, lines[close + 1 :], close + 2


def _check_meta(meta: dict[str, Any], path: Path, rel: str, problems: list[Problem]) -> bool:
    ok = True
    for key, kind in REQUIRED_KEYS.items():
        if key not in meta:
            problems.append(Problem(rel, f"front matter lacks '{key}'"))
            ok = False
        elif not isinstance(meta[key], kind) or (kind is int and isinstance(meta[key], bool)):
            problems.append(
                Problem(rel, f"'{key}' must be {kind.__name__}, got {type(meta[key]).__name__} {meta[key]!r}")
            )
            ok = False
    for key in sorted(set(meta) - set(REQUIRED_KEYS) - set(OPTIONAL_KEYS)):
        problems.append(Problem(rel, f"unknown front matter key '{key}'"))
        ok = False
    sup = meta.get("supersedes")
    if sup is not None and not isinstance(sup, str):
        problems.append(Problem(rel, f"'supersedes' must be a slug string, got {sup!r}"))
        ok = False
    if not ok:
        return False
    if meta["tenant"] != path.parent.name:
        problems.append(Problem(rel, f"tenant '{meta['tenant']}' differs from its folder '{path.parent.name}'"))
        ok = False
    if meta["slug"] != path.stem:
        problems.append(Problem(rel, f"slug '{meta['slug']}' differs from the file name '{path.stem}'"))
        ok = False
    if not _SLUG.match(meta["slug"]):
        problems.append(Problem(rel, f"slug '{meta['slug']}' is not lower-case words joined by '-'"))
        ok = False
    if meta["version"] < 1:
        problems.append(Problem(rel, f"version must be >= 1, got {meta['version']}"))
        ok = False
    return ok


def _parse_sections(body: list[str], first_line: int, rel: str, problems: list[Problem]) -> list[Section]:
    sections: list[Section] = []
    heading: str | None = None
    heading_line = 0
    buf: list[str] = []

    def flush() -> None:
        if heading is not None:
            text = "\n".join(buf).strip()
            if not text:
                problems.append(Problem(rel, f"section '{heading}' is empty", line=heading_line))
            sections.append(Section(heading, text, heading_line))

    title_seen = False
    for offset, line in enumerate(body):
        number = first_line + offset
        if line.startswith("### "):
            problems.append(Problem(rel, "headings deeper than '##' are not allowed", line=number))
        elif line.startswith("## "):
            flush()
            heading, heading_line, buf = line[3:].strip(), number, []
            if not heading:
                problems.append(Problem(rel, "empty '##' heading", line=number))
        elif line.startswith("# ") and heading is None and not title_seen:
            title_seen = True
        elif heading is None:
            if line.strip():
                problems.append(
                    Problem(rel, "text before the first '##' heading (locators cannot name it)", line=number)
                )
        else:
            buf.append(line)
    flush()
    if not sections:
        problems.append(Problem(rel, "no '##' sections"))
    seen: dict[str, int] = {}
    for s in sections:
        if s.heading in seen:
            problems.append(
                Problem(rel, f"duplicate heading '{s.heading}' (first at line {seen[s.heading]})", line=s.line)
            )
        seen.setdefault(s.heading, s.line)
    return sections


def load_corpus(corpus_dir: str | Path, relative_to: str | Path | None = None) -> Corpus:
    """Load every ``<tenant>/<slug>.md`` below ``corpus_dir``; raise DataError listing all problems."""
    corpus, problems = read_corpus(corpus_dir, relative_to)
    if problems:
        raise DataError(problems, "invalid corpus")
    return corpus


def read_corpus(corpus_dir: str | Path, relative_to: str | Path | None = None) -> tuple[Corpus, list[Problem]]:
    """Load what loads and collect every problem (the articles with problems are left out)."""
    corpus_dir = Path(corpus_dir)
    base = Path(relative_to) if relative_to is not None else corpus_dir.parent
    problems: list[Problem] = []
    if not corpus_dir.is_dir():
        return Corpus(()), [Problem(str(corpus_dir), "corpus folder does not exist")]
    documents: list[Document] = []
    for path in sorted(corpus_dir.glob("*/*.md")):
        rel = str(path.relative_to(base)) if path.is_relative_to(base) else str(path)
        text = read_text(path, rel, problems)
        if text is None:
            continue
        meta, body, first = _split_front_matter(text, rel, problems)
        if meta is None:
            continue
        if not _check_meta(meta, path, rel, problems):
            continue
        sections = _parse_sections(body, first, rel, problems)
        documents.append(
            Document(
                tenant=meta["tenant"],
                slug=meta["slug"],
                title=meta["title"].strip(),
                version=meta["version"],
                updated=meta["updated"],
                sections=tuple(sections),
                path=rel,
                supersedes=meta.get("supersedes"),
            )
        )
    if not documents and not problems:
        problems.append(Problem(str(corpus_dir), "no articles found (expected <tenant>/<slug>.md files)"))
    keys = {(d.tenant, d.slug) for d in documents}
    for d in documents:
        if d.supersedes is not None and (d.tenant, d.supersedes) not in keys:
            problems.append(
                Problem(d.path, f"supersedes '{d.supersedes}', which is not an article of tenant '{d.tenant}'")
            )
        if d.supersedes == d.slug:
            problems.append(Problem(d.path, "an article cannot supersede itself"))
    documents.sort(key=lambda d: (d.tenant, d.slug))
    return Corpus(tuple(documents)), problems


# --- chunkers -------------------------------------------------------------------------


def chunk_by_heading(doc: Document) -> list[Passage]:
    """One passage per ``##`` section; its locator names that section exactly."""
    return [Passage(doc.locator(s.heading), s.text, doc.title, doc.updated) for s in doc.sections]


def chunk_fixed(doc: Document, size: int = 120, overlap: int = 30) -> list[Passage]:
    """Naive fixed windows of ``size`` words, each starting ``size - overlap`` words after the last.

    Windows run over the sections' text in order and ignore heading
    boundaries (that is what makes them naive).  A window's locator is the
    section its first word lies in; ``overlaps`` lists the further sections it
    reaches into, so retrieval metrics can still credit it.  The text is the
    original slice between the window's first and last word (per section,
    joined by a blank line), so passage text stays readable.
    """
    if size < 1 or not 0 <= overlap < size:
        raise ValueError(f"fixed chunking needs size >= 1 and 0 <= overlap < size, got size={size}, overlap={overlap}")
    words: list[tuple[int, re.Match[str]]] = []  # (section index, word match)
    for index, section in enumerate(doc.sections):
        words += [(index, m) for m in _WORD.finditer(section.text)]
    passages: list[Passage] = []
    step = size - overlap
    start = 0
    while start < len(words):
        window = words[start : start + size]
        pieces = []
        touched: list[int] = []
        for index in sorted({i for i, _ in window}):
            ms = [m for i, m in window if i == index]
            pieces.append(doc.sections[index].text[ms[0].start() : ms[-1].end()])
            touched.append(index)
        first = doc.sections[touched[0]]
        also = tuple(doc.locator(doc.sections[i].heading) for i in touched[1:])
        passages.append(Passage(doc.locator(first.heading), "\n\n".join(pieces), doc.title, doc.updated, also))
        if start + size >= len(words):
            break
        start += step
    return passages


CHUNKERS = {"heading": chunk_by_heading, "fixed": chunk_fixed}


def chunk_corpus(corpus: Corpus, method: str = "heading", **options: int) -> list[Passage]:
    """Chunk every document with the named chunker (``heading`` or ``fixed``)."""
    if method not in CHUNKERS:
        raise ValueError(f"unknown chunker '{method}' (choose from {', '.join(sorted(CHUNKERS))})")
    chunker = CHUNKERS[method]
    passages: list[Passage] = []
    for doc in corpus.documents:
        passages += chunker(doc, **options) if options else chunker(doc)
    return passages
