"""An LLM judge: one more automatic labelling to compare with people.

For one response the judge gives three scores — ``faithfulness``,
``citation_accuracy``, ``answer_relevance`` on the anchors 0 / 0.5 / 1 of
:data:`JUDGE_RUBRIC` — and a yes/no ``supported`` label with a short reason
for every claim.

The prompt (:func:`build_judge_prompt`), in this order:

1. the numbered passages (the only evidence), each with title, section and
   ``updated`` date;
2. the question (with earlier turns of the conversation);
3. the response, then its claims numbered 1..n;
4. the rubric: named criteria with their anchors, and the rule that following
   the newer source while naming the older conflicting one is full marks;
5. the output contract (a JSON object, also passed to Ollama as the JSON
   schema :data:`JUDGE_SCHEMA` through ``format``);
6. the reference answer, **last**, so the judge reads the evidence and the
   response before it sees what a person expected.

The reply is checked by :func:`validate_judgement` (types, ranges, exactly one
entry per claim number, no extra keys) before anything is used.  An invalid
reply gets one retry with a reminder of what was wrong; a second invalid reply
raises :class:`~playground.harness.llm.JudgeOutputError` naming the case (and
the claim when one is at fault).  Both replies are cached like every call.

The judge must not be the generator (a model grading itself is lenient):
:func:`judge_response` refuses the same model unless ``force_same=True``.
To save calls a run may judge only responses whose deterministic score lies in
an uncertainty window (:func:`in_uncertainty_window`, 0.45-0.65 by default);
:func:`generation_metrics` then reports the judge's means as *skipped* when
fewer than 25% of the cases were judged.
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..model import Case, Claim, Label, Passage, Response
from .generate import format_passages, prompt_hash
from .llm import JudgeOutputError, OllamaModels, same_model

__all__ = [
    "ANCHORS", "CONFLICT_RULE", "DEFAULT_WINDOW", "JUDGE_RUBRIC", "JUDGE_SCHEMA", "MAX_REASON_CHARS",
    "MIN_JUDGED_FRACTION", "SCORE_NAMES", "SYSTEM_PROMPT", "ClaimSupport", "JudgeResult", "JudgementInvalid",
    "build_judge_prompt", "check_judge_model", "generation_metrics", "in_uncertainty_window", "judge_labels",
    "judge_response", "parse_judgement", "render_rubric", "validate_judgement",
]


SCORE_NAMES: tuple[str, ...] = ("faithfulness", "citation_accuracy", "answer_relevance")
ANCHORS: tuple[float, ...] = (0.0, 0.5, 1.0)
#: The anchors as the schema spells them (``0``, ``0.5``, ``1``, like the prompt).
_SCHEMA_ANCHORS: list[float | int] = [0, 0.5, 1]
#: Below this fraction of judged cases the judge's means are not reported.
MIN_JUDGED_FRACTION = 0.25
DEFAULT_WINDOW: tuple[float, float] = (0.45, 0.65)

#: The rubric: each criterion with what 0, 0.5 and 1 mean; per-claim support is yes/no.
JUDGE_RUBRIC: dict[str, dict[str, Any]] = {
    "faithfulness": {
        "question": "Is everything the response states backed by the passages?",
        "anchors": {
            1.0: "Every statement is stated in or directly follows from the passages. "
            "A correct statement that the passages do not contain the answer is faithful.",
            0.5: "The main answer is backed by the passages, but at least one detail "
            "(a number, name, identifier, condition or step) is not in them.",
            0.0: "The main answer is not in the passages, or contradicts them.",
        },
    },
    "citation_accuracy": {
        "question": "Do the [n] citations point at passages that support the sentences they are attached to?",
        "anchors": {
            1.0: "Every sentence that uses a passage cites it, and every cited number exists and supports "
            "its sentence. A response that makes no passage-based statement (an abstention) needs no citation.",
            0.5: "Citations are present, but some are missing, or point to a passage that does not support the "
            "sentence.",
            0.0: "No citations for passage-based statements, or citations to passages that do not exist "
            "or do not support what is cited.",
        },
    },
    "answer_relevance": {
        "question": "Does the response answer the question that was asked?",
        "anchors": {
            1.0: "It answers the question directly and completely; or, when the passages do not contain "
            "the answer, it clearly says so without guessing.",
            0.5: "It answers part of the question, hedges, or buries the answer in unrelated material.",
            0.0: "It does not address the question, or refuses although the passages contain the answer.",
        },
    },
    "supported": {
        "question": "For each numbered claim: is it supported by the passages?",
        "anchors": {
            "yes": "The claim is stated in or directly follows from the passages (a claim that the "
            "passages lack the answer is supported when they do lack it).",
            "no": "Any part of the claim is missing from the passages or contradicts them, "
            "including a number, name or identifier that differs.",
        },
    },
}

CONFLICT_RULE = (
    'When passages conflict, a response that follows the newer passage (later "updated" date) and says that '
    "the older passage disagrees is fully correct: give it full marks (1) on faithfulness, citation accuracy and "
    "answer relevance, and mark its claims about the older passage as supported."
)

JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "claims": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "claim": {"type": "integer"},
                    "supported": {"type": "string", "enum": ["yes", "no"]},
                    "reason": {"type": "string"},
                },
                "required": ["claim", "supported", "reason"],
                "additionalProperties": False,
            },
        },
        "faithfulness": {"type": "number", "enum": _SCHEMA_ANCHORS},
        "citation_accuracy": {"type": "number", "enum": _SCHEMA_ANCHORS},
        "answer_relevance": {"type": "number", "enum": _SCHEMA_ANCHORS},
    },
    "required": ["claims", *SCORE_NAMES],
    "additionalProperties": False,
}

SYSTEM_PROMPT = (
    "You are a strict, careful evaluator of answers written by a retrieval-augmented assistant. "
    "You judge only against the evidence you are given and reply with one JSON object and nothing else."
)

MAX_REASON_CHARS = 300


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class ClaimSupport:
    """The judge's label for one claim: ``index`` is ``Claim.index``; ``supported`` is 1 or 0."""

    index: int
    claim_id: str
    supported: int
    reason: str


@dataclass(frozen=True)
class JudgeResult:
    """The judge's verdict on one response."""

    case_id: str
    response_id: str
    judge_model: str
    faithfulness: float
    citation_accuracy: float
    answer_relevance: float
    claims: tuple[ClaimSupport, ...]
    prompt_hash: str
    #: True when the first reply was invalid and the reminder's reply was used.
    retried: bool = False

    @property
    def annotator(self) -> str:
        return f"judge:{self.judge_model}"

    @property
    def support(self) -> dict[int, tuple[int, str]]:
        """Claim index -> (0/1, reason)."""
        return {c.index: (c.supported, c.reason) for c in self.claims}

    @property
    def scores(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in SCORE_NAMES}

    def to_dict(self) -> dict[str, Any]:
        return {
            "case_id": self.case_id,
            "response_id": self.response_id,
            "judge_model": self.judge_model,
            **self.scores,
            "claims": [
                {"index": c.index, "claim_id": c.claim_id, "supported": c.supported, "reason": c.reason}
                for c in self.claims
            ],
            "prompt_hash": self.prompt_hash,
            "retried": self.retried,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JudgeResult:
        """The inverse of :meth:`to_dict` (a run's checkpoints store judge results as dicts)."""
        return cls(
            case_id=data["case_id"],
            response_id=data["response_id"],
            judge_model=data["judge_model"],
            **{name: data[name] for name in SCORE_NAMES},
            claims=tuple(ClaimSupport(c["index"], c["claim_id"], c["supported"], c["reason"]) for c in data["claims"]),
            prompt_hash=data["prompt_hash"],
            retried=data.get("retried", False),
        )


# --------------------------------------------------------------------------- prompt


def render_rubric() -> str:
    lines: list[str] = []
    for name in SCORE_NAMES:
        item = JUDGE_RUBRIC[name]
        lines.append(f"- {name}: {item['question']}")
        for anchor in (1.0, 0.5, 0.0):
            lines.append(f"    {anchor:g} = {item['anchors'][anchor]}")
    item = JUDGE_RUBRIC["supported"]
    lines.append(f"- supported (per claim): {item['question']}")
    for answer in ("yes", "no"):
        lines.append(f"    {answer} = {item['anchors'][answer]}")
    return "\n".join(lines)


def _question_block(case: Case) -> str:
    if not case.history:
        return case.query.strip()
    turns = "\n".join(f"{t.role}: {t.content.strip()}" for t in case.history)
    return f"Conversation so far:\n{turns}\n\nCurrent question: {case.query.strip()}"


def build_judge_prompt(
    case: Case, passages: Sequence[Passage], response_text: str, claims: Sequence[Claim]
) -> list[dict[str, str]]:
    """System message plus one user message; the reference answer is its last section."""
    if claims:
        claim_lines = "\n".join(f"{n}. {c.text}" for n, c in enumerate(claims, start=1))
        numbers = f"one entry for each claim number 1 to {len(claims)}"
    else:
        claim_lines = "(the response has no claims)"
        numbers = "an empty list"
    user = "\n\n".join(
        [
            "## Passages (the only evidence)\n\n" + format_passages(passages),
            "## Question\n\n" + _question_block(case),
            "## Response to judge\n\n" + (response_text.strip() or "(empty response)"),
            "## Claims of the response\n\n" + claim_lines,
            "## Rubric\n\nScore each criterion 0, 0.5 or 1 using these anchors:\n" + render_rubric(),
            "## Conflicting sources\n\n" + CONFLICT_RULE,
            "## Output\n\n"
            "Reply with one JSON object with exactly these keys:\n"
            '- "claims": ' + numbers + ', each {"claim": <number>, "supported": "yes" or "no", '
            '"reason": <one short sentence>};\n'
            '- "faithfulness", "citation_accuracy", "answer_relevance": 0, 0.5 or 1.\n'
            "Judge faithfulness, citations and claim support against the passages only. "
            "Use the reference answer below only to understand what the question asks for.",
            "## Reference answer (written by a person)\n\n" + (case.reference_answer.strip() or "(none)"),
        ]
    )
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


# --------------------------------------------------------------------------- validation


class JudgementInvalid(ValueError):
    """The judge's reply does not satisfy the contract; ``claim`` names the culprit (1-based) if any."""

    def __init__(self, reason: str, claim: int | None = None):
        self.reason = reason
        self.claim = claim
        super().__init__(reason)


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)


def parse_judgement(content: str) -> Any:
    """JSON from the reply; a surrounding ```json fence is tolerated."""
    fenced = _FENCE.match(content)
    text = fenced.group(1) if fenced else content
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:  # only JSONDecodeError carries .msg and .pos
        snippet = content.strip().replace("\n", " ")[:60]
        raise JudgementInvalid(f"not JSON ({exc.msg} at char {exc.pos}; reply began {snippet!r})") from None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def validate_judgement(data: Any, n_claims: int) -> dict[str, Any]:
    """Check the parsed reply; return ``{scores..., "claims": {number: (0/1, reason)}}``.

    Scores must be numbers in [0, 1]; ``claims`` must hold exactly one entry
    for each number 1..n_claims with ``supported`` "yes"/"no" and a string
    ``reason``; no other keys anywhere.
    """
    if not isinstance(data, dict):
        raise JudgementInvalid(f"expected a JSON object, got {type(data).__name__}")
    expected = {"claims", *SCORE_NAMES}
    extra = sorted(set(data) - expected)
    if extra:
        raise JudgementInvalid(f"unexpected key(s) {', '.join(extra)}")
    missing = sorted(expected - set(data))
    if missing:
        raise JudgementInvalid(f"missing key(s) {', '.join(missing)}")
    out: dict[str, Any] = {}
    for name in SCORE_NAMES:
        value = data[name]
        if not _is_number(value):
            raise JudgementInvalid(f"{name} must be a number, got {value!r}")
        if not 0 <= value <= 1:
            raise JudgementInvalid(f"{name} must lie in [0, 1], got {value!r}")
        out[name] = float(value)
    entries = data["claims"]
    if not isinstance(entries, list):
        raise JudgementInvalid(f"claims must be a list, got {type(entries).__name__}")
    claims: dict[int, tuple[int, str]] = {}
    for entry in entries:
        if not isinstance(entry, dict):
            raise JudgementInvalid(f"each claims entry must be an object, got {entry!r}")
        given = entry.get("claim")
        where = given if isinstance(given, int) and not isinstance(given, bool) else None
        extra = sorted(set(entry) - {"claim", "supported", "reason"})
        if extra:
            raise JudgementInvalid(f"unexpected key(s) {', '.join(extra)} in a claims entry", where)
        if where is None:
            raise JudgementInvalid(f"claims entry without an integer claim number: {entry!r}")
        number: int = where
        if not 1 <= number <= n_claims:
            raise JudgementInvalid(f"claim {number} does not exist (claims are 1 to {n_claims})", number)
        if number in claims:
            raise JudgementInvalid(f"claim {number} is judged twice", number)
        supported = entry.get("supported")
        if supported not in ("yes", "no"):
            raise JudgementInvalid(f'claim {number}: supported must be "yes" or "no", got {supported!r}', number)
        reason = entry.get("reason")
        if not isinstance(reason, str):
            raise JudgementInvalid(f"claim {number}: reason must be a string, got {reason!r}", number)
        claims[number] = (1 if supported == "yes" else 0, " ".join(reason.split())[:MAX_REASON_CHARS])
    absent = [n for n in range(1, n_claims + 1) if n not in claims]
    if absent:
        raise JudgementInvalid(
            f"claim {absent[0]} has no verdict" + (f" (nor {', '.join(map(str, absent[1:]))})" if absent[1:] else ""),
            absent[0],
        )
    out["claims"] = claims
    return out


# --------------------------------------------------------------------------- judging


def check_judge_model(judge_model: str, generator_model: str | None, *, force_same: bool = False) -> None:
    """Refuse a judge that is the generator (``llama3`` == ``llama3:latest``) unless forced.

    Call it before a run starts so the refusal comes before any work.
    """
    if not judge_model:
        raise ValueError("no judge model configured — set judge.model (e.g. llama3.1:8b)")
    if same_model(judge_model, generator_model) and not force_same:
        raise ValueError(
            f"the judge model '{judge_model}' is also the generator — a model grading its own answers is lenient; "
            "set judge.model to a different model (e.g. llama3.1:8b), or judge.force_same: true to do it anyway"
        )


def _response_model(response: Response) -> str | None:
    return dict(response.meta).get("model") if response.origin == "model" else None


def judge_response(
    models: OllamaModels,
    judge_model: str,
    generator_model: str | None,
    case: Case,
    passages: Sequence[Passage],
    response: Response,
    claims: Sequence[Claim],
    *,
    force_same: bool = False,
    options: Mapping[str, Any] | None = None,
    repeat: int = 0,
) -> JudgeResult:
    """Judge ``response`` (split into ``claims``) against ``passages``; see the module docstring.

    ``generator_model`` is the model that wrote the response (None for an
    authored one); a generated response's own ``meta`` model is checked too.
    ``repeat`` r >= 1: the r-th rerun of the same judgement (its calls are
    :meth:`OllamaModels.chat` with ``repeat=r``: another seed, another cache entry).
    """
    check_judge_model(judge_model, generator_model, force_same=force_same)
    check_judge_model(judge_model, _response_model(response), force_same=force_same)
    claims = list(claims)
    messages = build_judge_prompt(case, passages, response.text, claims)
    opts = models.effective_options(options)
    phash = prompt_hash(messages, opts)

    try:
        verdict, retried = _ask_judge(models, judge_model, messages, opts, len(claims), repeat)
    except JudgementInvalid as second:
        where = _judged_place(case, response, claims, second.claim)
        raise JudgeOutputError(judge_model, where, second.reason) from None

    supports = tuple(
        ClaimSupport(claim.index, claim.claim_id, *verdict["claims"][n]) for n, claim in enumerate(claims, start=1)
    )
    return JudgeResult(
        case_id=case.case_id,
        response_id=response.response_id,
        judge_model=judge_model,
        faithfulness=verdict["faithfulness"],
        citation_accuracy=verdict["citation_accuracy"],
        answer_relevance=verdict["answer_relevance"],
        claims=supports,
        prompt_hash=phash,
        retried=retried,
    )


def _ask_judge(models: OllamaModels, judge_model: str, messages: list[dict[str, str]], opts: dict[str, Any],
               n_claims: int, repeat: int) -> tuple[dict[str, Any], bool]:
    """``(verdict, retried)``: the judge's validated reply, with one retry.

    Rule: a first reply that is not a valid judgement is answered once with a
    reminder naming what was wrong (the conversation so far, the reply, then the
    reason); the second reply's :class:`JudgementInvalid` propagates.
    """
    content = models.chat(judge_model, messages, opts, format=JUDGE_SCHEMA, repeat=repeat)
    try:
        return validate_judgement(parse_judgement(content), n_claims), False
    except JudgementInvalid as first:
        reminder = [
            *messages,
            {"role": "assistant", "content": content},
            {
                "role": "user",
                "content": f"Your reply was not valid: {first.reason}. Reply again with only the JSON object "
                f"described in the Output section: the keys claims, faithfulness, citation_accuracy and "
                f"answer_relevance, and exactly one claims entry for each claim number 1 to {n_claims}.",
            },
        ]
        content = models.chat(judge_model, reminder, opts, format=JUDGE_SCHEMA, repeat=repeat)
        return validate_judgement(parse_judgement(content), n_claims), True


def _judged_place(case: Case, response: Response, claims: Sequence[Claim], claim: int | None) -> str:
    """Where an invalid judgement is: the case and response, and the claim number it names (with the
    claim's id when the number is one of the response's claims)."""
    where = f"case {case.case_id}, response {response.response_id}"
    if claim is not None and 1 <= claim <= len(claims):
        where += f", claim {claim} ({claims[claim - 1].claim_id})"
    elif claim is not None:
        where += f", claim {claim}"
    return where


def judge_labels(result: JudgeResult) -> list[Label]:
    """Per-claim ``supported`` labels under annotator ``judge:<model>``, in claim order."""
    return [Label(result.annotator, "claim", c.claim_id, "supported", c.supported) for c in result.claims]


def in_uncertainty_window(score: float, low: float = DEFAULT_WINDOW[0], high: float = DEFAULT_WINDOW[1]) -> bool:
    """True when the deterministic ``score`` lies in [low, high] (inclusive): worth a judge call."""
    if not 0 <= low <= high <= 1:
        raise ValueError(f"the window must satisfy 0 <= low <= high <= 1, got [{low}, {high}]")
    return low <= score <= high


def generation_metrics(
    judged: Sequence[JudgeResult], total_cases: int, min_fraction: float = MIN_JUDGED_FRACTION
) -> dict[str, Any]:
    """The judge's means over judged responses, or ``{"skipped": True, "reason": ...}``.

    Skipped (no numbers at all) when the judged *cases* (distinct case ids)
    are fewer than ``min_fraction`` (25%) of ``total_cases``: a mean over a
    window-selected handful of cases would read as a property of the whole set.
    """
    cases = sorted({r.case_id for r in judged})
    n = len(cases)
    base = {"judged_cases": n, "total_cases": total_cases, "min_fraction": min_fraction}
    if total_cases <= 0 or n < min_fraction * total_cases:
        share = f"{n / total_cases:.0%}" if total_cases > 0 else "no cases"
        return {
            **base,
            "skipped": True,
            "reason": f"the judge ran on {n} of {total_cases} cases ({share}), below the {min_fraction:.0%} minimum",
        }
    out: dict[str, Any] = {**base, "skipped": False, "judged_responses": len(judged)}
    for name in SCORE_NAMES:
        out[name] = round(sum(getattr(r, name) for r in judged) / len(judged), 6)
    labels = [c.supported for r in judged for c in r.claims]
    out["claims_judged"] = len(labels)
    out["claim_support_rate"] = round(sum(labels) / len(labels), 6) if labels else None
    return out
