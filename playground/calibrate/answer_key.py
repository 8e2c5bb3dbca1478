"""The golden set's authored answer key as a human labelling (a ready-made careful annotator).

* From the dataset (:func:`key_from_dataset`): claims get ``supported`` and
  ``correct`` from ``Response.key_claims`` (matched to the response's claim
  units by text), facts get ``covered`` from ``Response.key_facts``.
* From a run folder's ``units.csv`` ``key`` column (:func:`key_from_run`):
  the same for claims and facts; for a passage, the authored relevance key
  (:func:`playground.golden.passage_key`: an expected source or an authored
  relevant section).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from .labellings import HumanLabelling, _human_frame
from .run_folder import _read_units_csv

__all__ = ["key_from_dataset", "key_from_run"]


def key_from_dataset(dataset: Any) -> HumanLabelling:
    """The golden set's authored answer key for claims (supported, correct) and facts (covered).

    Claim units come from :func:`playground.golden.response_units`, matched to
    ``Response.key_claims`` by text (the loader guarantees the splitter cuts
    each response into exactly the keyed claims).  Column ``variant`` holds the
    response's authored variant (for :func:`accuracy_against_key`).
    """
    from ..golden import response_units

    rows = []
    for rid in sorted(dataset.responses):
        response = dataset.responses[rid]
        case = dataset.cases.get(response.case_id)
        if case is None or not (response.key_claims or response.key_facts):
            continue
        keys = list(response.key_claims)
        facts = dict(response.key_facts)
        units = response_units(case, response)
        claim_units = [u for u in units if u.unit_kind == "claim"]
        # shorter wins only for a response keyed on its facts alone (no claim keys); otherwise the
        # loader guarantees the splitter's claims are exactly the keyed ones
        for unit, key in zip(claim_units, keys, strict=False):
            if key.text != unit.text:  # pragma: no cover - the golden loader rejects such responses
                continue
            for dim, value in (("supported", key.supported), ("correct", key.correct)):
                rows.append({"unit_id": unit.unit_id, "unit_kind": "claim", "case_id": case.case_id,
                             "response_id": rid, "dimension": dim, "value": int(value), "variant": response.variant})
        for unit, fact in zip([u for u in units if u.unit_kind == "fact"], case.reference_facts, strict=True):
            if fact.fact_id in facts:
                rows.append({"unit_id": unit.unit_id, "unit_kind": "fact", "case_id": case.case_id,
                             "response_id": rid, "dimension": "covered", "value": int(facts[fact.fact_id]),
                             "variant": response.variant})
    return HumanLabelling("answer key", _human_frame(rows, ("variant",)), "key",
                          "authored answer key of the golden set (claims and facts)")


def key_from_run(run_dir: str | Path) -> HumanLabelling:
    """The answer key as recorded in a run's ``units.csv`` (``key`` column): claims' and facts' authored
    key, and for passages the authored relevance key (an expected source or an authored relevant section)."""
    rows = [r for r in _read_units_csv(run_dir) if r["key"] not in ("", None)]
    frame = _human_frame({"unit_id": r["unit_id"], "unit_kind": r["unit_kind"], "case_id": r["case_id"],
                          "response_id": r["response_id"], "dimension": r["dimension"], "value": int(r["key"])}
                         for r in rows)
    return HumanLabelling("answer key", frame, "key",
                          "authored key (claims, facts); passages: expected or authored relevant section")
