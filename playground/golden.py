"""Load and validate the golden set: cases, authored responses and their answer keys.

Files (YAML, UTF-8):

* ``golden/cases/*.yaml`` — a mapping ``{cases: [...]}``; each case has
  ``case_id`` ("GC-0001"), ``case_type`` (one of ``model.CASE_TYPES``),
  ``tenant``, ``query``, ``history`` (list of ``{role, content}``),
  ``expected_sources`` (list of ``{tenant, slug, heading}`` locators),
  optionally ``relevant_sections`` (more locators the key judges relevant, see
  :func:`passage_key`),
  ``reference_answer``, ``reference_facts`` (list of ``{fact_id, statement,
  accept}``), ``must_contain``, ``forbidden_text`` and ``notes``.
* ``golden/responses/*.yaml`` — ``{responses: [...]}``; each response has
  ``response_id``, ``case_id``, ``variant`` (one of ``model.VARIANTS``),
  ``claims`` (the response, sentence by sentence, each with its answer key
  ``supported`` and ``correct``), ``facts`` (``{fact_id: covered}`` for every
  reference fact of the case) and ``notes``.  The response text is the claims
  joined by single spaces, unless a ``text`` is given; either way the claim
  splitter must cut it into exactly the keyed claims, so the key covers every
  claim anyone will label.

Everything is validated before anything is returned: all problems, each
with file, line and case/response/fact id, come back together as one
:class:`~playground.errors.DataError`.  Locators that resolve to nothing are
problems too — never dropped.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import safeyaml
from .claims import split_claims
from .corpus import Corpus, read_corpus
from .errors import DataError, Problem, read_text
from .model import (
    CASE_TYPES,
    UNIT_DIMENSIONS,
    VARIANTS,
    Case,
    Claim,
    ClaimKey,
    Fact,
    Locator,
    Passage,
    Response,
    Turn,
    Unit,
    fact_unit_id,
    passage_unit_id,
    short_hash,
    slugify,
)

__all__ = [
    "CASE_KEYS", "CASE_OPTIONAL", "RESPONSE_KEYS", "RESPONSE_OPTIONAL", "Dataset", "load_dataset", "load_golden",
    "passage_key", "passage_unit", "response_units",
]


_CASE_ID = re.compile(r"^GC-\d{4}$")
CASE_KEYS = {
    "case_id": str, "case_type": str, "tenant": str, "query": str, "history": list,
    "expected_sources": list, "reference_answer": str, "reference_facts": list,
    "must_contain": list, "forbidden_text": list, "notes": str,
}
#: Optional case fields: ``relevant_sections`` (locators, see :func:`passage_key`).
CASE_OPTIONAL = {"relevant_sections": list}
RESPONSE_KEYS = {"response_id": str, "case_id": str, "variant": str, "claims": list, "facts": dict}
RESPONSE_OPTIONAL = {"text": str, "notes": str, "origin": str}


@dataclass(frozen=True)
class Dataset:
    """A validated corpus plus golden set: what the playground and the harness run on."""

    root: Path
    corpus: Corpus
    cases: dict[str, Case]
    responses: dict[str, Response]
    case_files: dict[str, str] = field(default_factory=dict)

    def responses_for(self, case_id: str) -> list[Response]:
        """The responses of ``case_id`` in insertion order (an index built once: O(1) per call, not O(responses))."""
        cached = self.__dict__.get("_by_case")
        if cached is None or cached[0] != len(self.responses):
            index: dict[str, list[Response]] = {}
            for r in self.responses.values():
                index.setdefault(r.case_id, []).append(r)
            cached = (len(self.responses), index)
            object.__setattr__(self, "_by_case", cached)
        return list(cached[1].get(case_id, ()))

    def claims(self, response_id: str) -> list[Claim]:
        response = self.responses[response_id]
        return split_claims(response.text, response.response_id)

    def units(self, passages_by_case: dict[str, list[Passage]] | None = None) -> list[Unit]:
        """Every labellable unit, in a stable order (case, then passages, then per response claims, facts).

        ``passages_by_case`` holds the passages retrieved for each case; without
        it only claims and facts are listed.
        """
        units: list[Unit] = []
        for case_id in sorted(self.cases):
            case = self.cases[case_id]
            for passage in (passages_by_case or {}).get(case_id, []):
                units.append(passage_unit(case, passage))
            for response in sorted(self.responses_for(case_id), key=lambda r: r.response_id):
                units += response_units(case, response)
        return units


def passage_unit(case: Case, passage: Passage) -> Unit:
    """The unit "is this passage relevant to this case's question?"."""
    return Unit(
        "passage", passage_unit_id(case.case_id, passage.passage_id), case.case_id, "",
        UNIT_DIMENSIONS["passage"], passage.text, short_hash(case.query + "\n" + passage.text, 12),
    )


def response_units(case: Case, response: Response) -> list[Unit]:
    """The claim and fact units of one response."""
    units = [
        Unit(
            "claim",
            c.claim_id,
            case.case_id,
            response.response_id,
            UNIT_DIMENSIONS["claim"],
            c.text,
            short_hash(c.text, 12),
        )
        for c in split_claims(response.text, response.response_id)
    ]
    units += [
        Unit(
            "fact",
            fact_unit_id(response.response_id, f.fact_id),
            case.case_id,
            response.response_id,
            UNIT_DIMENSIONS["fact"],
            f.statement,
            short_hash(f.statement + "\n" + response.text, 12),
        )
        for f in case.reference_facts
    ]
    return units


# --- YAML with line numbers ---------------------------------------------------------------


def _load_items(path: Path, rel: str, key: str, problems: list[Problem]) -> list[tuple[Any, int]]:
    """Parse ``{key: [...]}`` and return (item, line) pairs; problems are appended, not raised."""
    text = read_text(path, rel, problems)
    if text is None:
        return []
    try:
        node, data = safeyaml.load_with_node(text)
    except safeyaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        problems.append(Problem(rel, f"malformed YAML: {problem}", line=mark.line + 1 if mark else None))
        return []
    if node is None or not isinstance(data, dict) or not isinstance(data.get(key), list):
        problems.append(Problem(rel, f"expected a mapping with a '{key}' list at the top", line=1))
        return []
    seq = next(v for k, v in node.value if k.value == key)
    return [(item, n.start_mark.line + 1) for item, n in zip(data[key], seq.value, strict=True)]


def _typed(
    item: dict[str, Any],
    spec: Mapping[str, type],
    rel: str,
    where: str,
    line: int,
    problems: list[Problem],
    required: bool = True,
) -> bool:
    ok = True
    for k, kind in spec.items():
        if k not in item:
            if required:
                problems.append(Problem(rel, f"missing field '{k}'", where, line))
                ok = False
        elif not isinstance(item[k], kind) or isinstance(item[k], bool) != (kind is bool):
            problems.append(
                Problem(rel, f"field '{k}' must be {kind.__name__}, got {type(item[k]).__name__}", where, line)
            )
            ok = False
    return ok


def _strings(value: list[Any], rel: str, where: str, line: int, name: str, problems: list[Problem]) -> tuple[str, ...]:
    if not all(isinstance(v, str) and v.strip() for v in value):
        problems.append(Problem(rel, f"'{name}' must be a list of non-empty strings", where, line))
        return ()
    return tuple(value)


def _checked_fields(
    item: Any,
    noun: str,
    id_key: str,
    spec: tuple[Mapping[str, type], Mapping[str, type]],
    rel: str,
    line: int,
    problems: list[Problem],
) -> str | None:
    """The item's id for problem messages, or None when the item cannot be parsed further.

    Rule: the item is a mapping, has no field outside ``spec``'s required and
    optional fields, every required field is present, and every field present
    has its declared type (``bool`` is not an ``int``).  All such problems are
    appended, not only the first.
    """
    if not isinstance(item, dict):
        problems.append(Problem(rel, f"a {noun} must be a mapping", line=line))
        return None
    required, optional = spec
    where = str(item.get(id_key, "?"))
    unknown = sorted(set(item) - set(required) - set(optional))
    for k in unknown:
        problems.append(Problem(rel, f"unknown field '{k}'", where, line))
    ok = _typed(item, required, rel, where, line, problems)
    ok = _typed(item, optional, rel, where, line, problems, required=False) and ok
    if not ok or unknown:
        return None
    return where


def _check_case_header(item: dict[str, Any], corpus: Corpus, rel: str, where: str, line: int,
                       problems: list[Problem]) -> None:
    """A case's id is of the form GC-0001, its type one of ``CASE_TYPES``, its tenant one of the corpus's,
    and its query not blank."""
    if not _CASE_ID.match(item["case_id"]):
        problems.append(Problem(rel, f"case_id '{item['case_id']}' is not of the form GC-0001", where, line))
    if item["case_type"] not in CASE_TYPES:
        problems.append(
            Problem(rel, f"unknown case_type '{item['case_type']}' (known: {', '.join(CASE_TYPES)})", where, line)
        )
    if item["tenant"] not in corpus.tenants:
        problems.append(
            Problem(rel, f"unknown tenant '{item['tenant']}' (corpus has: {', '.join(corpus.tenants)})", where, line)
        )
    if not item["query"].strip():
        problems.append(Problem(rel, "empty query", where, line))


def _case_history(turns: list[Any], rel: str, where: str, line: int, problems: list[Problem]) -> list[Turn]:
    """The conversation before the query: each turn exactly ``{role: user|assistant, content: text}``."""
    history = []
    for turn in turns:
        if not (
            isinstance(turn, dict)
            and set(turn) == {"role", "content"}
            and turn["role"] in ("user", "assistant")
            and isinstance(turn["content"], str)
        ):
            problems.append(
                Problem(rel, f"history turn must be {{role: user|assistant, content: text}}, got {turn!r}", where, line)
            )
        else:
            history.append(Turn(turn["role"], turn["content"]))
    return history


def _case_sections(item: dict[str, Any], corpus: Corpus, rel: str, where: str, line: int,
                   problems: list[Problem]) -> tuple[list[Locator], list[Locator]]:
    """The case's ``expected_sources`` and ``relevant_sections``; a section may be in only one of the two."""
    sources = _locators(item["expected_sources"], "expected source", corpus, rel, where, line, problems)
    relevant = _locators(item.get("relevant_sections", []), "relevant section", corpus, rel, where, line, problems)
    for loc in [x for x in relevant if x in sources]:  # in file order: one run reports like the next
        problems.append(Problem(rel, f"relevant section {loc} is already an expected source", where, line))
    return sources, relevant


def _reference_facts(item: dict[str, Any], rel: str, where: str, line: int, problems: list[Problem]) -> list[Fact]:
    """The case's reference facts: each exactly ``{fact_id, statement, accept}``, its id
    ``<case_id>-F...``, a statement and a non-empty ``accept`` list; no fact_id twice in the case."""
    facts = []
    for fact in item["reference_facts"]:
        if not (isinstance(fact, dict) and set(fact) == {"fact_id", "statement", "accept"}):
            problems.append(
                Problem(rel, f"reference fact must have exactly fact_id, statement, accept; got {fact!r}", where, line)
            )
            continue
        fid = fact["fact_id"]
        if not isinstance(fid, str) or not fid.startswith(item["case_id"] + "-F"):
            problems.append(Problem(rel, f"fact_id {fid!r} must start with '{item['case_id']}-F'", where, line))
            continue
        accept = fact["accept"] if isinstance(fact["accept"], list) else None
        if not accept or not isinstance(fact["statement"], str):
            problems.append(Problem(rel, "fact needs a statement and a non-empty 'accept' list", fid, line))
            continue
        facts.append(Fact(fid, fact["statement"], _strings(accept, rel, fid, line, "accept", problems)))
    dup_facts = [f for f, n in Counter(f.fact_id for f in facts).items() if n > 1]
    for fid in dup_facts:
        problems.append(Problem(rel, "duplicate fact_id", fid, line))
    return facts


def _check_case_type_rules(case_type: str, sources: list[Locator], relevant: list[Locator], history: list[Turn],
                           forbidden: tuple[str, ...], rel: str, where: str, line: int,
                           problems: list[Problem]) -> None:
    """What each case type demands: ``out_of_scope`` and ``cross_tenant`` cases must abstain, so they have
    no expected sources and no relevant sections; every other type has at least one expected source;
    ``multi_turn`` has a history; ``cross_tenant`` has ``forbidden_text`` (what must not leak)."""
    if case_type in ("out_of_scope", "cross_tenant") and sources:
        problems.append(
            Problem(rel, f"a {case_type} case must abstain, so it has no expected_sources", where, line)
        )
    if case_type in ("out_of_scope", "cross_tenant") and relevant:
        problems.append(Problem(rel, f"a {case_type} case must abstain, so it has no relevant_sections",
                                where, line))
    if case_type not in ("out_of_scope", "cross_tenant") and not sources:
        problems.append(Problem(rel, f"a {case_type} case needs at least one expected source", where, line))
    if case_type == "multi_turn" and not history:
        problems.append(Problem(rel, "a multi_turn case needs a history", where, line))
    if case_type == "cross_tenant" and not forbidden:
        problems.append(Problem(rel, "a cross_tenant case needs forbidden_text (what must not leak)", where, line))


def _parse_case(item: Any, rel: str, line: int, corpus: Corpus, problems: list[Problem]) -> Case | None:
    """One case of a cases file, or None with its problems appended (see the module docstring)."""
    where = _checked_fields(item, "case", "case_id", (CASE_KEYS, CASE_OPTIONAL), rel, line, problems)
    if where is None:
        return None
    before = len(problems)
    _check_case_header(item, corpus, rel, where, line, problems)
    history = _case_history(item["history"], rel, where, line, problems)
    sources, relevant = _case_sections(item, corpus, rel, where, line, problems)
    facts = _reference_facts(item, rel, where, line, problems)
    must_contain = _strings(item["must_contain"], rel, where, line, "must_contain", problems)
    forbidden = _strings(item["forbidden_text"], rel, where, line, "forbidden_text", problems)
    _check_case_type_rules(item["case_type"], sources, relevant, history, forbidden, rel, where, line, problems)
    if len(problems) > before:
        return None
    return Case(
        item["case_id"],
        item["case_type"],
        item["tenant"],
        item["query"],
        tuple(history),
        tuple(sources),
        item["reference_answer"],
        tuple(facts),
        must_contain,
        forbidden,
        item["notes"],
        tuple(relevant),
    )


def _locators(items: list[Any], name: str, corpus: Corpus, rel: str, where: str, line: int,
              problems: list[Problem]) -> list[Locator]:
    """``items`` as locators ``{tenant, slug, heading}``; each one that is malformed or resolves to
    nothing in the corpus is a problem."""
    out = []
    for loc in items:
        if not (
            isinstance(loc, dict)
            and set(loc) == {"tenant", "slug", "heading"}
            and all(isinstance(v, str) for v in loc.values())
        ):
            problems.append(
                Problem(rel, f"{name} must be a locator {{tenant, slug, heading}}, got {loc!r}", where, line))
            continue
        locator = Locator(loc["tenant"], loc["slug"], loc["heading"])
        if corpus.resolve(locator) is None:
            problems.append(
                Problem(rel, f"locator {loc['tenant']}/{loc['slug']} § '{loc['heading']}' resolves to nothing in the "
                             "corpus", where, line))
        out.append(locator)
    return out


def passage_key(case: Case, passage: Passage) -> bool:
    """The answer key of "is this passage relevant to the question?".

    A passage is relevant when any section it draws text from (its
    ``locators``) is one of the case's ``expected_sources`` or one of its
    authored ``relevant_sections`` (other sections that state part of the
    answer); tenant and slug equal, headings equal after slugging.  Whether a
    passage is relevant does not depend on whether it is current: a superseded
    section that states the (old) answer is relevant, and the answer built on
    it is then faithful but not correct.
    """
    wanted = {(e.tenant, e.slug, slugify(e.heading)) for e in (*case.expected_sources, *case.relevant_sections)}
    return any((loc.tenant, loc.slug, slugify(loc.heading)) in wanted for loc in passage.locators)


def _check_response_ids(item: dict[str, Any], cases: dict[str, Case], rel: str, where: str, line: int,
                        problems: list[Problem]) -> Case | None:
    """The response's case (None when unknown): its ``case_id`` names a loaded case, its ``response_id``
    starts with ``<case_id>-R``, and its variant is one of ``VARIANTS``."""
    case = cases.get(item["case_id"])
    if case is None:
        problems.append(Problem(rel, f"unknown case_id '{item['case_id']}'", where, line))
    elif not item["response_id"].startswith(case.case_id + "-R"):
        problems.append(Problem(rel, f"response_id must start with '{case.case_id}-R'", where, line))
    if item["variant"] not in VARIANTS:
        problems.append(
            Problem(rel, f"unknown variant '{item['variant']}' (known: {', '.join(VARIANTS)})", where, line)
        )
    return case


def _claim_keys(claims: list[Any], rel: str, where: str, line: int, problems: list[Problem]) -> list[ClaimKey]:
    """The answer key per claim: each exactly ``{text, supported: bool, correct: bool}``; at least one."""
    keys = []
    for claim in claims:
        if not (
            isinstance(claim, dict)
            and set(claim) == {"text", "supported", "correct"}
            and isinstance(claim["text"], str)
            and isinstance(claim["supported"], bool)
            and isinstance(claim["correct"], bool)
        ):
            problems.append(
                Problem(rel, f"claim must be {{text, supported: bool, correct: bool}}, got {claim!r}", where, line)
            )
            continue
        keys.append(ClaimKey(claim["text"].strip(), claim["supported"], claim["correct"]))
    if not keys:
        problems.append(Problem(rel, "a response needs at least one claim", where, line))
    return keys


def _check_key_covers_split(text: str, response_id: str, keys: list[ClaimKey], rel: str, where: str, line: int,
                            problems: list[Problem]) -> None:
    """The claim splitter cuts ``text`` into exactly the keyed claims, in order, so the key covers every
    claim anyone will label."""
    split = [c.text for c in split_claims(text, response_id)]
    if keys and split != [k.text for k in keys]:
        problems.append(
            Problem(
                rel,
                f"the claim splitter cuts this response into {len(split)} claim(s) {split!r}, "
                f"but the answer key lists {len(keys)}: the key must cover exactly the split claims",
                where,
                line,
            )
        )


def _fact_key(facts: dict[Any, Any], case: Case | None, rel: str, where: str, line: int,
              problems: list[Problem]) -> list[tuple[str, bool]]:
    """``(fact_id, covered)`` for the case's reference facts: the key names every fact of the case,
    no other, each true or false (nothing to check when the case is unknown)."""
    fact_key: list[tuple[str, bool]] = []
    if case is not None:
        expected = {f.fact_id for f in case.reference_facts}
        given = set(facts)
        for fid in sorted(expected - given):
            problems.append(Problem(rel, f"answer key lacks fact '{fid}'", where, line))
        for fid in sorted(given - expected):
            problems.append(
                Problem(rel, f"answer key names fact '{fid}', which case {case.case_id} does not have", where, line)
            )
        for fid in sorted(given & expected):
            if not isinstance(facts[fid], bool):
                problems.append(Problem(rel, f"fact '{fid}' must be true or false", where, line))
            else:
                fact_key.append((fid, facts[fid]))
    return fact_key


def _parse_response(item: Any, rel: str, line: int, cases: dict[str, Case], problems: list[Problem]) -> Response | None:
    """One authored response with its answer key, or None with its problems appended (see the module
    docstring); the text is ``text`` if given, else the claims joined by single spaces."""
    where = _checked_fields(item, "response", "response_id", (RESPONSE_KEYS, RESPONSE_OPTIONAL), rel, line, problems)
    if where is None:
        return None
    before = len(problems)
    case = _check_response_ids(item, cases, rel, where, line, problems)
    keys = _claim_keys(item["claims"], rel, where, line, problems)
    text = item.get("text") or " ".join(k.text for k in keys)
    _check_key_covers_split(text, item["response_id"], keys, rel, where, line, problems)
    fact_key = _fact_key(item["facts"], case, rel, where, line, problems)
    if len(problems) > before:
        return None
    return Response(
        item["response_id"],
        item["case_id"],
        item["variant"],
        text,
        item.get("origin", "authored"),
        tuple(keys),
        tuple(fact_key),
        item.get("notes", ""),
    )


def load_golden(
    golden_dir: str | Path,
    corpus: Corpus,
    relative_to: str | Path | None = None,
    problems: list[Problem] | None = None,
) -> tuple[dict[str, Case], dict[str, Response], dict[str, str]]:
    """Load cases and responses; raise DataError listing every problem (``problems`` found earlier included)."""
    golden_dir = Path(golden_dir)
    base = Path(relative_to) if relative_to is not None else golden_dir.parent
    problems = list(problems or [])

    def rel(p: Path) -> str:
        return str(p.relative_to(base)) if p.is_relative_to(base) else str(p)

    case_files = sorted((golden_dir / "cases").glob("*.yaml"))
    if not case_files:
        problems.append(Problem(rel(golden_dir / "cases"), "no case files (*.yaml) found"))
    cases: dict[str, Case] = {}
    origin: dict[str, str] = {}
    for path in case_files:
        for item, line in _load_items(path, rel(path), "cases", problems):
            case = _parse_case(item, rel(path), line, corpus, problems)
            if case is None:
                continue
            if case.case_id in cases:
                problems.append(
                    Problem(rel(path), f"duplicate case_id (first in {origin[case.case_id]})", case.case_id, line)
                )
                continue
            cases[case.case_id] = case
            origin[case.case_id] = rel(path)
    all_facts = Counter(f.fact_id for c in cases.values() for f in c.reference_facts)
    for fid, n in all_facts.items():
        if n > 1:
            problems.append(Problem("golden/cases", f"fact_id used by {n} cases", fid))
    responses: dict[str, Response] = {}
    r_origin: dict[str, str] = {}
    for path in sorted((golden_dir / "responses").glob("*.yaml")):
        for item, line in _load_items(path, rel(path), "responses", problems):
            response = _parse_response(item, rel(path), line, cases, problems)
            if response is None:
                continue
            if response.response_id in responses:
                problems.append(
                    Problem(
                        rel(path),
                        f"duplicate response_id (first in {r_origin[response.response_id]})",
                        response.response_id,
                        line,
                    )
                )
                continue
            responses[response.response_id] = response
            r_origin[response.response_id] = rel(path)
    if problems:
        raise DataError(problems, "invalid golden set")
    return dict(sorted(cases.items())), dict(sorted(responses.items())), origin


def load_dataset(root: str | Path | None = None) -> Dataset:
    """Load ``root/corpus`` and ``root/golden`` (default: the repository's own).

    Corpus and golden-set problems are reported together in one DataError.
    """
    from .installed import REPO_ROOT

    root = Path(root) if root is not None else REPO_ROOT
    corpus, problems = read_corpus(root / "corpus", relative_to=root)
    cases, responses, origin = load_golden(root / "golden", corpus, relative_to=root, problems=problems)
    return Dataset(root, corpus, cases, responses, origin)
