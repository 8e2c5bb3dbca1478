"""Error analysis beside the four dimensions: a pass/fail verdict per response, notes, failure-mode tags.

The flow (issue 24.6), as courses on LLM evaluation teach it:

1. *Verdict*: each response is one label unit of kind ``response`` with the
   one dimension ``pass`` (1 pass, 0 fail, unsure) — :func:`response_unit`,
   labelled with ``store.set_label(annotator, unit, "pass", value)`` like any
   other unit (history, undo, adjudication, export, import).
2. *Note*: what went wrong, in free text — the unit's comment
   (``store.set_comment``).
3. *Open coding*: failure-mode tags (``store.set_tags``), names by
   :func:`validate_tag`; a new name joins the dataset's taxonomy.
4. *Axial coding*: rename and merge tags (``store.rename_failure_mode``,
   ``store.merge_failure_modes``); notes and tag events are never rewritten.
5. *Count*: :func:`failure_mode_table` and :func:`pass_rate`, with 95%
   Wilson intervals (:func:`playground.stats.wilson_interval`).

Counting rules.  Only current judgements count: a verdict or tag set whose
unit text changed since (another text hash) is stale and left out; unsure
verdicts are not judgements.  For one ``annotator``: a response is *judged*
when they gave it pass or fail, *tagged* with T when it is judged and their
current set (resolved through the taxonomy) holds T.  Pooled
(``annotator=None``, people only — the reserved names never count): a
response is judged when anyone gave it pass or fail, tagged with T when it
is judged and anyone tagged it T; it *passed* when its consensus verdict is
pass (majority of people, an adjudication decides, a tie is not judged in
:func:`pass_rate`).  ``rate = tagged / judged``.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from .model import Unit, short_hash
from .stats import wilson_interval
from .store.checks import RESERVED_ANNOTATORS, RESPONSE_KIND, VERDICT_DIMENSION, dataset_of_case
from .store.core import majority
from .store.tags import TAG_RULE, check_tag_name

__all__ = ["RESPONSE_KIND", "TAG_RULE", "VERDICT_DIMENSION", "FailureModeRow", "PassRate", "failure_mode_table",
           "pass_rate", "response_catalog", "response_unit", "response_units", "validate_tag"]


def response_unit(case_id: str, response_id: str, response_text: str) -> Unit:
    """The verdict unit of one response: kind ``response``, id ``response_id``, dimension ``pass``.

    ``text_hash`` is the first 12 hex digits of the SHA-256 of the response
    text (as a claim's): a verdict on a response whose text changed is stale.
    """
    return Unit(RESPONSE_KIND, response_id, case_id, response_id, (VERDICT_DIMENSION,), response_text,
                short_hash(response_text, 12))


def response_units(dataset: Any) -> list[Unit]:
    """The verdict unit of every response of ``dataset`` (an ``OpenDataset`` or a golden ``Dataset``),
    by case id then response id.  A RAGTruth dataset (claims only, no response text) has none."""
    data = getattr(dataset, "dataset", dataset)
    responses = sorted(data.responses.values(), key=lambda r: (r.case_id, r.response_id))
    return [response_unit(r.case_id, r.response_id, r.text) for r in responses]


def response_catalog(store: Any = None, root: Any = None, dataset: str | None = None) -> dict[str, Unit]:
    """``unit_id -> Unit`` of the verdict units of ``dataset`` (default: the golden set and every dataset in
    ``store``); what ``labels export|import`` add to the unit catalog so verdicts and tags are known units."""
    from .datasets import SHIPPED, dataset_names, open_dataset
    from .golden import load_dataset

    names = [dataset] if dataset is not None else dataset_names(store)
    out: dict[str, Unit] = {}
    for name in names:
        if name == SHIPPED:
            units = response_units(load_dataset(root))
        else:
            units = response_units(open_dataset(name, store, root))
        out.update((u.unit_id, u) for u in units)
    return out


def validate_tag(name: str) -> str:
    """``name`` if it is a good tag name, else ``ValueError`` stating the rule (:data:`TAG_RULE`):
    lower-case letters, digits, ``-`` and ``_``, 1 to 40 characters, starting with a letter."""
    return check_tag_name(name)


@dataclass(frozen=True)
class FailureModeRow:
    """One failure mode's count: ``responses_tagged`` of ``responses_judged``, the rate and its 95% Wilson
    interval (``None`` when nothing is judged)."""

    name: str
    responses_tagged: int
    responses_judged: int
    rate: float | None
    low: float | None
    high: float | None


class PassRate(NamedTuple):
    """``(passed, judged, low, high)``: passed of judged responses and the 95% Wilson interval (``None``s
    when nothing is judged)."""

    passed: int
    judged: int
    low: float | None
    high: float | None


def _verdicts(store: Any, units: Sequence[Unit], annotator: str | None) -> dict[str, list[int]]:
    """``{response unit id: [1/0 verdicts of people]}`` (current ones only), plus ``consensus`` adjudications
    under the key ``"<id>\\x00consensus"``."""
    catalog = {u.unit_id: u for u in units if u.unit_kind == RESPONSE_KIND}
    out: dict[str, list[int]] = defaultdict(list)
    for lb in store.current_labels(catalog, annotator=annotator):
        if lb.dimension != VERDICT_DIMENSION:
            continue
        if lb.annotator in RESERVED_ANNOTATORS:
            if lb.annotator == "consensus" and annotator is None:
                out[lb.unit_id + "\x00consensus"].append(lb.value)
            continue
        out[lb.unit_id].append(lb.value)
    return out


def _rate(k: int, n: int) -> tuple[float | None, float | None, float | None]:
    ci = wilson_interval(k, n)
    return (None, None, None) if ci is None else (k / n, ci[0], ci[1])


def pass_rate(store: Any, units: Iterable[Unit], annotator: str | None = None) -> PassRate:
    """How many judged responses passed (see the module docstring for one annotator and pooled)."""
    units = list(units)
    verdicts = _verdicts(store, units, annotator)
    passed = judged = 0
    for u in units:
        if u.unit_kind != RESPONSE_KIND:
            continue
        settled = verdicts.get(u.unit_id + "\x00consensus")
        votes = verdicts.get(u.unit_id, [])
        if settled:
            value: int | None = settled[0]
        elif annotator is not None:
            value = votes[0] if votes else None
        else:
            value, _status = majority(votes.count(1), votes.count(0)) if votes else (None, "")
        if value is not None:
            judged += 1
            passed += value == 1
    _, low, high = _rate(passed, judged)
    return PassRate(passed, judged, low, high)


def failure_mode_table(store: Any, units: Iterable[Unit], annotator: str | None = None) -> list[FailureModeRow]:
    """One row per failure mode (resolved names; every tag in use in the units' datasets' taxonomies, even
    at 0), sorted by most tagged then name (see the module docstring for the counting rules)."""
    units = [u for u in units if u.unit_kind == RESPONSE_KIND]
    hashes = {u.unit_id: u.text_hash for u in units}
    verdicts = _verdicts(store, units, annotator)
    judged = {u.unit_id for u in units if verdicts.get(u.unit_id)}
    tagged: dict[str, set[str]] = defaultdict(set)
    for t in store.tags(unit_ids=hashes, annotator=annotator):
        if t.annotator in RESERVED_ANNOTATORS or hashes.get(t.unit_id) != t.text_hash or t.unit_id not in judged:
            continue
        for name in t.tags:
            tagged[name].add(t.unit_id)
    names = set(tagged)
    for ds in sorted({dataset_of_case(u.case_id) for u in units}):
        names |= {m.name for m in store.taxonomy(ds) if m.merged_into is None}
    rows = [FailureModeRow(n, len(tagged.get(n, ())), len(judged), *_rate(len(tagged.get(n, ())), len(judged)))
            for n in names]
    return sorted(rows, key=lambda r: (-r.responses_tagged, r.name))
