"""What the page teaches, beside the question it explains (issue 23.5): static text, no text from data.

* :data:`WHY` — a short "why this question?" under each question of the page
  (``relevant``, ``supported``, ``correct``, ``covered``) and beside the
  numbers (``wilson``: an interval on five claims; ``composite``: why the
  weighted composite is not a standard and gates are better).  Each is a
  ``<details>`` the student opens where the question is asked.
* :data:`VARIANT_PURPOSE` — what each authored response variant of the
  shipped set was built to show and which dimension it moves (the table
  "Variants" of ``golden/README.md``; a test keeps the two the same).  The
  page shows it beside the answer key once the response is labelled (blind
  until then).
"""
from __future__ import annotations

__all__ = ["VARIANT_PURPOSE", "WHY", "variant_html", "why_html"]

#: Why each question is asked, in a student's words (HTML, static).
WHY: dict[str, tuple[str, str]] = {
    "relevant": (
        "Why judge the passages on their own?",
        "Context relevance looks only at what retrieval returned, before any answer is written. So it isolates "
        "<b>retrieval</b>: a response can be perfect and this still low (the retriever brought noise), or the "
        "response wrong while this is high (the generator ignored good passages). Judge each passage against the "
        "question, never against the response.",
    ),
    "supported": (
        "Why can a true claim be unsupported?",
        "Faithfulness asks whether the claim can be found in the <b>retrieved passages shown here</b> — not whether "
        "it is true in the world. A claim that happens to be true but comes from the model's memory is "
        "<b>unfaithful</b>: nobody can check it against the sources, and the next time the memory is wrong nothing "
        "catches it. That is why “supported” and “correct” are asked separately.",
    ),
    "correct": (
        "Why a second question on the same claim?",
        "Correctness compares the claim with the <b>reference answer</b>, whatever the passages say. A claim can be "
        "faithful to a stale or wrong passage and still incorrect (grounded but wrong), or correct and unsupported. "
        "Asking both tells a retrieval or corpus problem from a generation problem.",
    ),
    "covered": (
        "Why check the reference facts?",
        "Coverage catches the answer that is <b>short, faithful and incomplete</b>: every claim it makes is supported "
        "and correct, so faithfulness and correctness are 100%, yet it leaves out what the user needed. Only a check "
        "from the reference's side — is each needed fact in the response? — sees what is missing.",
    ),
    "wilson": (
        "What does 60% [23–88%] on five claims mean?",
        "The number is the share of your “yes” answers; the brackets are a 95% <b>Wilson interval</b>: the rates that "
        "are plausible given so few labels. 3 of 5 claims supported is 60%, but anything from about 23% to 88% would "
        "often give 3 of 5. With five claims a single label moves the rate by 20 points — compare cases by their "
        "intervals, and label more before concluding.",
    ),
    "composite": (
        "Why is the composite not a standard, and why gates?",
        "The weights are a choice, not a measurement: change them and the ranking of answers changes. A high "
        "composite can hide one failing dimension (an answer with 0% faithfulness and 100% elsewhere scores 75% at "
        "equal weights). A <b>gate</b> says instead “faithfulness must be at least 0.8” — it fails the answer whatever "
        "the other dimensions are, which is what a release check needs.",
    ),
}

#: Variant -> (what it shows, the dimension that moves): golden/README.md, "Variants".
VARIANT_PURPOSE: dict[str, tuple[str, str]] = {
    "grounded_correct": ("right, from the sources, cited", "none (all high)"),
    "confident_hallucination": ("invented numbers, names or codes, stated with confidence",
                                "faithfulness, correctness"),
    "vague_hedging": ("\u201cit depends\u201d, \u201ctypically\u201d, no specifics", "coverage (and specificity)"),
    "incomplete": ("right but misses reference facts", "coverage"),
    "grounded_but_wrong": ("faithful to a stale or wrong passage", "correctness (faithfulness stays)"),
    "correct_but_unsupported": ("true per the reference, absent from the retrieved context",
                                "faithfulness (correctness stays)"),
    "proper_abstention": ("says the knowledge base does not cover it",
                          "\u2014 (right on out-of-scope/cross-tenant)"),
    "wrong_abstention": ("abstains although the answer is there", "correctness, coverage"),
    "cross_tenant_leak": ("reveals the other tenant's data", "correctness; hard assertion no_forbidden_text"),
    "fabricated_citation": ("cites a passage that was not offered, e.g. [7] of 5",
                            "hard assertion no_fabricated_citation"),
}


def why_html(topic: str) -> str:
    """The "why?" of one question or number, as a closed ``<details>`` (class ``pg-why pg-why-<topic>``)."""
    title, body = WHY[topic]
    return (f"<details class='pg-why pg-why-{topic}'><summary>{title}</summary>"
            f"<div class='pg-why-body'>{body}</div></details>")


def variant_html(variant: str) -> str:
    """What a revealed response was built to break: ``"" `` for a variant the shipped set does not author."""
    known = VARIANT_PURPOSE.get(variant)
    if known is None:
        return ""
    shows, moves = known
    return (f"<div class='pg-variant-purpose'><b>This was the {variant.replace('_', ' ')} response</b>: {shows} "
            f"<span class='pg-muted'>— built to move: {moves}</span></div>")
