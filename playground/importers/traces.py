"""OpenInference / Phoenix traces as RAG samples: one sample per trace, trace and span ids kept.

Spans are read by :mod:`.spans` (Parquet, JSON Lines, OTLP JSON; in any
order — spans of many traces interleaved, as OTLP batches come, are grouped
by trace id) and each trace becomes one :class:`~.core.Sample`:

* **question** — the root span's ``input.value`` (when its
  ``input.mime_type`` is ``application/json`` and it is an object, its
  ``query``, ``question``, ``input``, ``user_input`` or ``message`` field);
* **passages** — the documents of the trace's RETRIEVER spans, in span start
  order and document position; when the trace has a RERANKER span, the
  ``reranker.output_documents`` of the last one instead (what the model
  saw).  Each keeps its ``document.id`` (the passage id), its score, and
  where it came from (span id, position) for the export;
* **response** — the root span's ``output.value``, else the output of the LLM
  span that ended last;
* **history** — the earlier traces of the same ``session.id`` (by root start
  time): their questions and responses as user/assistant turns.

The sample id is the trace id, so re-importing a later export of the same
project (``--replace``) keeps every label: a trace's case, passages and
claims get the same ids as long as their text is the same.

A trace with no question, no retriever span (or no documents) or no output
is *skipped*: listed with its trace id and why, never dropped silently.
Fatal problems, each listed with the trace and span id (and the line of a
JSON Lines file), import nothing: a span without trace or span id, a span id
given twice, a parent id that is not in the file (missing parent), parent
ids that form a cycle (one problem a cycle, naming its first :data:`NAMED`
members and the count), more than one root span (two final outputs), two LLM
spans ending last with different outputs (two final outputs), a document
without content, an attribute that is not UTF-8 text, and a bound of
:mod:`.limits` crossed: a file over ``MAX_FILE_BYTES``, more than ``MAX_ROWS``
traces (counted as the spans stream: reading stops at the first span of one
too many), a span's cell or nesting (its field named), histories of more than
``MAX_FILE_BYTES`` characters in all.

The trees are built in time linear in the spans (:func:`_structure`).
"""
from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import limits
from ..errors import Problem
from ..model import Turn
from .core import Place, Sample
from .spans import Document, SpanRecord, read_spans

__all__ = ["NAMED", "QUESTION_KEYS", "Skipped", "TraceImport", "TraceRead", "assemble", "import_traces",
           "prepare_traces", "read_traces"]

#: Fields of a JSON root input that hold the question, in order of preference.
QUESTION_KEYS = ("query", "question", "input", "user_input", "message")
#: Span ids a problem names at most (cycle members, root spans); the count says how many more.
NAMED = 5
_ID = re.compile(r"^[0-9A-Za-z_.-]{1,120}$")


@dataclass(frozen=True)
class Skipped:
    """A trace with nothing to label: its id, its root span's id and why."""

    trace_id: str
    span_id: str
    reason: str

    def __str__(self) -> str:
        return f"trace {self.trace_id} (span {self.span_id}): {self.reason}"


@dataclass
class TraceRead:
    """What :func:`read_traces` found: samples, skipped traces, counts."""

    format: str
    samples: list[Sample] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    spans: int = 0
    traces: int = 0


@dataclass(frozen=True)
class _Turn:
    """One assembled trace, before sessions give it a history."""

    start: int
    trace_id: str
    query: str
    response: str
    documents: tuple[tuple[str, Document], ...]
    session_id: str | None
    root_span_id: str
    response_span_id: str


def _where(span: SpanRecord) -> str:
    return f"trace {span.trace_id} span {span.span_id}"


def _problem(file: str, span: SpanRecord, message: str) -> Problem:
    return Problem(file, message, _where(span), span.line)


def _question(root: SpanRecord) -> str:
    text = root.input or ""
    if root.input_mime == "application/json":
        try:
            obj = json.loads(text)
        except json.JSONDecodeError:
            return text
        if isinstance(obj, dict):
            for key in QUESTION_KEYS:
                if isinstance(obj.get(key), str):
                    return str(obj[key])
    return text


def _named(ids: list[str], joiner: str = ", ") -> str:
    """The first :data:`NAMED` ids joined, and how many more there are."""
    more = f"{joiner}… ({len(ids) - NAMED:,} more)" if len(ids) > NAMED else ""
    return joiner.join(ids[:NAMED]) + more


def _structure(file: str, spans: list[SpanRecord], problems: list[Problem]) -> SpanRecord | None:
    """The root span of a trace, or None after listing missing parents, cycles and extra roots.

    Linear in spans: one pass builds the parent map, the children lists and the roots; one walk
    down from the roots (and from the spans whose parent is missing) reaches every span of a tree.
    A span it does not reach hangs from a cycle (:func:`_cycles`).
    """
    by_id = {s.span_id: s for s in spans}
    children: dict[str, list[str]] = defaultdict(list)
    roots: list[SpanRecord] = []
    starts: list[str] = []
    before = len(problems)
    for s in spans:
        if s.parent_id is None:
            roots.append(s)
            starts.append(s.span_id)
        elif s.parent_id not in by_id:
            problems.append(_problem(file, s, f"missing parent: parent span {s.parent_id} is not in the file"))
            starts.append(s.span_id)
        else:
            children[s.parent_id].append(s.span_id)
    reached = set(starts)
    stack = list(starts)
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in reached:
                reached.add(child)
                stack.append(child)
    if len(reached) < len(by_id):
        _cycles(file, by_id, reached, problems)
    roots.sort(key=lambda s: (s.start, s.span_id))
    if len(roots) > 1:
        problems.append(_problem(file, roots[1], f"two final outputs: {len(roots):,} root spans "
                                 f"({_named([r.span_id for r in roots])})"))
    if len(problems) > before or not roots:
        return None
    return roots[0]


def _cycles(file: str, by_id: dict[str, SpanRecord], reached: set[str], problems: list[Problem]) -> None:
    """Each cycle of parent ids among the spans not ``reached`` from a root, listed once.

    Following parents from an unreached span stays among unreached spans (a span whose parent is
    reached is reached); a walk stops at a span an earlier walk passed, so each span is followed
    once.  A walk that comes back to its own span closed a cycle: it is listed on its smallest span
    id, members in parent order from there, the first :data:`NAMED` named and the count given.
    """
    walk_of: dict[str, int] = {}
    for walk, start in enumerate(sid for sid in by_id if sid not in reached):
        node: str | None = start
        while node is not None and node in by_id and node not in reached and node not in walk_of:
            walk_of[node] = walk
            node = by_id[node].parent_id
        if node is None or walk_of.get(node) != walk:
            continue
        members = [node]
        parent = by_id[node].parent_id
        while parent is not None and parent != node:
            members.append(parent)
            parent = by_id[parent].parent_id
        first = members.index(min(members))
        members = members[first:] + members[:first]
        count = f"{len(members):,} span" + ("s" if len(members) > 1 else "")
        shown = _named(members, " -> ") + (f" -> {members[0]}" if len(members) <= NAMED else "")
        problems.append(_problem(file, by_id[members[0]], f"parent ids form a cycle of {count}: {shown}"))


def _passages(file: str, spans: list[SpanRecord], problems: list[Problem]) -> tuple[tuple[str, Document], ...] | str:
    """``(span id, document)`` pairs the model saw, or the reason there are none."""
    ordered = sorted(spans, key=lambda s: (s.start, s.span_id))
    rerankers = [s for s in ordered if s.kind == "RERANKER" and s.reranked]
    if rerankers:
        sources = [(rerankers[-1], rerankers[-1].reranked)]
    else:
        sources = [(s, s.documents) for s in ordered if s.kind == "RETRIEVER"]
    if not sources:
        return "no retriever span"
    docs = tuple((s.span_id, d) for s, ds in sources for d in ds)
    for span, ds in sources:
        for d in ds:
            if d.content is None or not d.content.strip():
                problems.append(_problem(file, span, f"document {d.position} has no content"))
    return docs if docs else "the retriever returned no documents"


def _response(file: str, root: SpanRecord, spans: list[SpanRecord],
              problems: list[Problem]) -> tuple[str, str] | None:
    """``(response, span id)``: the root's output, else the last-ending LLM span's; None when there is none."""
    if root.output is not None and root.output.strip():
        return root.output, root.span_id
    llms = [s for s in spans if s.kind == "LLM" and s.output is not None and s.output.strip()]
    if not llms:
        return None
    last = max(s.end for s in llms)
    final = sorted((s for s in llms if s.end == last), key=lambda s: s.span_id)
    if len({s.output for s in final}) > 1:
        problems.append(_problem(file, final[1], "two final outputs: LLM spans "
                                 f"{', '.join(s.span_id for s in final)} end last with different outputs"))
        return None
    return final[0].output or "", final[0].span_id


def assemble(file: str, trace_id: str, spans: list[SpanRecord],
             problems: list[Problem]) -> _Turn | Skipped | None:
    """One trace as a turn, or why it is skipped; None when it has fatal problems (listed)."""
    root = _structure(file, spans, problems)
    if root is None:
        return None
    before = len(problems)
    docs = _passages(file, spans, problems)
    response = _response(file, root, spans, problems)
    if len(problems) > before:
        return None
    query = _question(root)
    if not query.strip():
        return Skipped(trace_id, root.span_id, "the root span has no input (no question)")
    if isinstance(docs, str):
        return Skipped(trace_id, root.span_id, docs)
    if response is None:
        return Skipped(trace_id, root.span_id, "no output (neither the root span nor an LLM span has one)")
    session = root.session_id or next((s.session_id for s in spans if s.session_id), None)
    return _Turn(root.start, trace_id, query, response[0], docs, session, root.span_id, response[1])


def _group(file: str, records: Iterable[SpanRecord],
           problems: list[Problem]) -> tuple[dict[str, list[SpanRecord]], int]:
    """Spans by trace id (any order in the file); ids, text and bounds checked.

    Traces are counted as the spans stream: the span that starts trace ``MAX_ROWS + 1`` (each trace
    is one sample) stops the reading with one problem, before any sample is made.
    """
    traces: dict[str, list[SpanRecord]] = defaultdict(list)
    owner: dict[str, str] = {}
    n = 0
    for span in records:
        n += 1
        if span.trace_id not in traces and len(traces) >= limits.MAX_ROWS:
            problems.append(Problem(file, f"{len(traces) + 1:,} traces or more, more samples than the limit of "
                                    f"{limits.MAX_ROWS:,} (one a trace; {limits.describe()}): split it",
                                    "" if span.line is not None else span.place, span.line))
            break
        if span.over_limit is not None:
            field, what = span.over_limit
            problems.append(Problem(file, what, _where(span) + (f", {field}" if field else ""), span.line))
        if not span.trace_id or not span.span_id:
            problems.append(Problem(file, "a span without trace id or span id (a spans dataframe saved without "
                                    "its context.span_id index? save df.reset_index())", span.place, span.line))
            continue
        if not _ID.match(span.trace_id):
            problems.append(_problem(file, span, "the trace id is not usable as a sample id (1-120 letters, "
                                     "digits, '_', '.', '-')"))
        for key in span.bad_text:
            problems.append(_problem(file, span, f"attribute {key} is not UTF-8 text"))
        first = owner.setdefault(span.span_id, span.trace_id)
        if first != span.trace_id:
            problems.append(_problem(file, span, f"span id also used in trace {first}"))
            continue
        traces[span.trace_id].append(span)
    for spans in traces.values():
        seen: set[str] = set()
        for s in spans:
            if s.span_id in seen:
                problems.append(_problem(file, s, "span id given twice in the trace"))
            seen.add(s.span_id)
    return traces, n


def _samples(file: str, turns: list[_Turn], problems: list[Problem]) -> list[Sample]:
    """Turns in (start, trace id) order as samples; a session's earlier turns become history.

    A history repeats the session's earlier text in every later sample, so a long session's
    samples hold text quadratic in its turns: past ``MAX_FILE_BYTES`` characters of history in
    all, one problem names the session and no sample is made.
    """
    history: dict[str, list[Turn]] = defaultdict(list)
    chars: dict[str, int] = defaultdict(int)  # the characters of a session's history so far
    total = 0
    samples = []
    for n, t in enumerate(sorted(turns, key=lambda t: (t.start, t.trace_id)), 1):
        before = tuple(history[t.session_id]) if t.session_id else ()
        if t.session_id:
            total += chars[t.session_id]
            if total > limits.MAX_FILE_BYTES:
                problems.append(Problem(file, f"the histories of the samples come to more than "
                                        f"{limits.MAX_FILE_BYTES:,} characters, larger than the limit "
                                        f"({limits.describe()}): split the session", f"session {t.session_id}"))
                return []
            history[t.session_id] += [Turn("user", t.query), Turn("assistant", t.response)]
            chars[t.session_id] += len(t.query) + len(t.response)
        extra: dict[str, Any] = {
            "trace_id": t.trace_id, "root_span_id": t.root_span_id, "response_span_id": t.response_span_id,
            "session_id": t.session_id,
            "documents": [[span_id, d.position, d.score] for span_id, d in t.documents]}
        samples.append(Sample(Place(file, "trace", n), t.query, t.response,
                              tuple(d.content or "" for _, d in t.documents),
                              tuple(d.doc_id or "" for _, d in t.documents), before, sample_id=t.trace_id,
                              extra=extra))
    return samples


def read_traces(path: Path, problems: list[Problem]) -> TraceRead:
    """Samples and skipped traces of a span file; every problem appended (see the module docstring)."""
    file = path.name
    try:
        limits.check_file(path, text=path.suffix.lower() != ".parquet")  # Parquet's text is counted as read
    except limits.LimitExceeded as exc:
        problems.append(Problem(file, str(exc)))
        return TraceRead(path.suffix.lower().lstrip("."))
    traces, n = _group(file, read_spans(path, problems), problems)
    out = TraceRead(path.suffix.lower().lstrip("."), spans=n, traces=len(traces))
    turns = []
    for tid in sorted(traces):
        made = assemble(file, tid, traces[tid], problems)
        if isinstance(made, Skipped):
            out.skipped.append(made)
        elif made is not None:
            turns.append(made)
    out.samples = _samples(file, turns, problems)
    return out


# --- into the label store -------------------------------------------------------------------------


@dataclass(frozen=True)
class TraceImport:
    """What :func:`import_traces` did: the dataset import and what the span file held."""

    result: Any  # load.DatasetImport
    spans: int
    traces: int
    skipped: tuple[Skipped, ...]

    def summary(self) -> str:
        text = str(self.result.summary()) + f"\n  read {self.spans} spans in {self.traces} traces"
        if self.skipped:
            text += f"\n  {len(self.skipped)} trace(s) with nothing to label, not imported:"
            text += "".join(f"\n    {s}" for s in self.skipped)
        return text


def prepare_traces(path: Path, name: str) -> tuple[dict[str, Any], list[Any], TraceRead]:
    """``(payload, units, read)`` of a span file (DataError listing every problem; nothing written)."""
    from .core import build_payload, check_name
    from .hf_disk import digest
    from .load import payload_units

    check_name(name)
    problems: list[Problem] = []
    read = read_traces(path, problems)
    if not read.samples and not problems:
        problems.append(Problem(path.name, f"no trace to label ({read.spans} spans, {read.traces} traces)"))
        problems += [Problem(path.name, f"skipped: {s.reason}", f"trace {s.trace_id} span {s.span_id}")
                     for s in read.skipped]
    if problems:
        from ..errors import DataError

        raise DataError(problems, f"{path}: not a usable span file; nothing was imported")
    payload = build_payload(name, "traces", read.samples, source=path.name, source_sha256=digest(path),
                            source_format=read.format)
    payload["skipped"] = [[s.trace_id, s.span_id, s.reason] for s in read.skipped]
    units = payload_units(payload)
    payload["summary"]["units"] = len(units)
    return payload, units, read


def import_traces(path: Path, name: str, store: Any, *, labels: Path | None = None, replace: bool = False,
                  prepared: tuple[dict[str, Any], list[Any], TraceRead] | None = None) -> TraceImport:
    """Validate the span file (and ``labels``), then store the dataset and labels in one transaction.

    ``prepared`` is :func:`prepare_traces`'s result when the caller has it (the file is not read again).
    """
    from .load import DatasetImport, read_label_rows

    payload, units, read = prepared if prepared is not None else prepare_traces(path, name)
    catalog = {u.unit_id: u for u in units}
    rows = read_label_rows(labels, catalog) if labels is not None else []
    before = store.dataset(name)
    if before is not None and before.kind != "traces" and not replace:
        raise ValueError(f"a dataset named {name!r} already exists (kind {before.kind}); choose another name")
    info = store.put_dataset(name, "traces", payload, label_rows=rows, replace=replace)
    stale = [s for s in store.stale(catalog) if s.unit_id.startswith(f"{name}:")]
    result = DatasetImport(name, "traces", len(payload["samples"]), len(units), store.url,
                           replaced=before is not None and before.sha256 != info.sha256,
                           unchanged=before is not None and before.sha256 == info.sha256,
                           labels=len(rows), stale=len(stale))
    return TraceImport(result, read.spans, read.traces, tuple(read.skipped))
