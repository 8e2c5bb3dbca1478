"""The answer key of the error-analysis exercise on the shipped golden set: a verdict and tags per response.

Every authored response was written to break one thing (its *variant*, see
``golden/README.md``); its verdict and failure-mode tag follow from that
variant alone (:data:`VARIANT_KEY`):

========================== ======== ======================
variant                    verdict  failure-mode tag
========================== ======== ======================
``grounded_correct``       pass     —
``proper_abstention``      pass     —
``confident_hallucination`` fail    ``hallucination``
``vague_hedging``          fail     ``vague``
``incomplete``             fail     ``incomplete``
``grounded_but_wrong``     fail     ``wrong-source``
``correct_but_unsupported`` fail    ``unsupported``
``wrong_abstention``       fail     ``wrong-abstention``
``cross_tenant_leak``      fail     ``tenant-leak``
``fabricated_citation``    fail     ``fabricated-citation``
========================== ======== ======================

A proper abstention only exists on the cases that must abstain
(out-of-scope, cross-tenant), where it is the right answer.  Model-generated
responses have no key.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .model import VARIANTS

__all__ = ["VARIANT_KEY", "VerdictKey", "verdict_key"]

#: variant -> (verdict: 1 pass / 0 fail, failure-mode tags).
VARIANT_KEY: dict[str, tuple[int, tuple[str, ...]]] = {
    "grounded_correct": (1, ()),
    "proper_abstention": (1, ()),
    "confident_hallucination": (0, ("hallucination",)),
    "vague_hedging": (0, ("vague",)),
    "incomplete": (0, ("incomplete",)),
    "grounded_but_wrong": (0, ("wrong-source",)),
    "correct_but_unsupported": (0, ("unsupported",)),
    "wrong_abstention": (0, ("wrong-abstention",)),
    "cross_tenant_leak": (0, ("tenant-leak",)),
    "fabricated_citation": (0, ("fabricated-citation",)),
}
assert set(VARIANT_KEY) == set(VARIANTS)


@dataclass(frozen=True)
class VerdictKey:
    """The key of one response: ``verdict`` 1 (pass) or 0 (fail), its ``tags``, and the ``variant`` it follows."""

    response_id: str
    verdict: int
    tags: tuple[str, ...]
    variant: str


def verdict_key(dataset: Any) -> dict[str, VerdictKey]:
    """``{response_id: VerdictKey}`` for every authored response of ``dataset`` (an ``OpenDataset`` or a golden
    ``Dataset``) whose variant is in :data:`VARIANT_KEY`; imported datasets have none (an empty dict)."""
    data = getattr(dataset, "dataset", dataset)
    out = {}
    for r in sorted(data.responses.values(), key=lambda r: r.response_id):
        if r.origin == "authored" and r.variant in VARIANT_KEY:
            verdict, tags = VARIANT_KEY[r.variant]
            out[r.response_id] = VerdictKey(r.response_id, verdict, tags, r.variant)
    return out
