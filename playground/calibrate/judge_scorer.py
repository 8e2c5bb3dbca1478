"""An LLM judge through Ollama as one more scorer on the real data sets' claims.

Each claim is judged by one call to the harness's judge
(:func:`playground.harness.judge.judge_response`: its prompt, the JSON schema
passed as ``format``, validation and one retry), through the harness's client
and on-disk cache (:class:`playground.harness.llm.OllamaModels`,
:class:`~playground.harness.llm.ModelCache`):

* the response is the claim alone, as a one-claim response (claim number 1),
  its whitespace runs (line breaks too) made single spaces so that it stays one
  line of the prompt's numbered claim list;
* the numbered passages are the claim's evidence (RAGTruth: its non-empty
  evidence strings, titled by the source name; BEGIN: the knowledge snippet);
* the question is BEGIN's previous dialogue turn (the message the response
  answers; it is *not* evidence) and, for RAGTruth, whose records carry no
  question, the line :data:`NO_QUESTION`;
* there is no reference answer (the prompt says ``(none)``).

The verdict is the score: 1.0 for "yes" (supported), 0.0 for "no"; there is
no floor to choose (:class:`~playground.calibrate.frozen.GivenScores` with
``yes_no``).  The judge's one-sentence reason per claim is kept beside the
verdicts (:class:`JudgeVerdicts`; from the cache on a re-run, as the verdicts).
The judge's three response-level scores are ignored.

Rules:

* **Not the generator.**  Before any call, the judge model is checked against
  the generator of every record to be judged (RAGTruth ``generator_model``,
  BEGIN ``model_name``) with :func:`~playground.harness.judge.check_judge_model`,
  and also by :func:`same_weights` (the data sets spell models unlike Ollama
  tags: ``llama-2-7b-chat`` is Ollama's ``llama2:7b-chat``); one refusal
  (``ValueError``) names the generator and how many claims it wrote.
* **Cache first.**  The first call of every claim is looked up in the cache
  (:func:`judge_call_key`); the server is asked (``preflight``: it answers and
  the model is pulled) only when at least one is missing, so a re-run is served
  from the file with no server at all and gives the same verdicts.
* **No silent 0.**  A reply still invalid after the retry raises
  :class:`JudgeReplyInvalid` naming the record; server down, model missing and
  timeouts are the client's one-line :class:`~playground.harness.llm.ModelError`.
* ``--judge-limit N``: :func:`first_sources` picks the first N sources in
  stable-hash order (:func:`playground.sampling.ranked`, seed :data:`LIMIT_SEED`).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..model import Case, Claim, Locator, Passage, Response
from ..sampling import ranked
from .frozen import GivenScores

__all__ = [
    "LIMIT_SEED",
    "NO_QUESTION",
    "JudgeReplyInvalid",
    "JudgeTask",
    "JudgeVerdicts",
    "check_not_generator",
    "first_sources",
    "judge_call_key",
    "judge_claims",
    "judge_task",
    "same_weights",
]

#: Seed of the stable-hash order of sources that ``--judge-limit`` takes the first N of.
LIMIT_SEED = "judge-limit"
#: The question of a record that has none (RAGTruth).
NO_QUESTION = "(not given: judge the claim against the passages only)"


class JudgeReplyInvalid(RuntimeError):
    """The judge's reply for one claim was invalid twice (once more after the reminder).

    ``str(error)`` is one line: the model, the record id and file line, the reason, the fix."""

    def __init__(self, model: str, claim_id: str, where: str, reason: str):
        self.model = model
        self.claim_id = claim_id
        self.reason = reason
        super().__init__(
            f"judge '{model}' returned invalid output twice for claim {claim_id} ({where}): {reason} — use a judge "
            "model that follows JSON output (e.g. llama3.1:8b); the verdicts so far are cached, a rerun starts there")


@dataclass(frozen=True)
class JudgeVerdicts(GivenScores):
    """The judge's verdicts as yes/no :class:`~playground.calibrate.frozen.GivenScores` (1.0 = "yes",
    supported; 0.0 = "no"), and ``reasons``: ``example_id`` -> the judge's reason for that verdict (the
    harness's :class:`~playground.harness.judge.ClaimSupport` ``reason``: one line, whitespace runs made
    single spaces).  A scorer like any given scores: the reports read ``scores`` and ``yes_no`` only."""

    reasons: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class JudgeTask:
    """What the judge is shown for one record (module docstring), and whose model wrote it."""

    claim_id: str
    case: Case
    passages: tuple[Passage, ...]
    response: Response
    claim: Claim
    generator: str
    where: str


def judge_task(record: Any, dataset: str, where: str = "") -> JudgeTask:
    """The judge's view of a RAGTruth or BEGIN record (``dataset`` ``RAGTruth`` or ``BEGIN``); ``where``
    names the record's file and line in errors (default: the data set and the record's line)."""
    rid = str(record.example_id)
    begin = hasattr(record, "knowledge")
    if begin:
        question = record.message.strip() or NO_QUESTION
        generator = record.model_name
        titles = ["knowledge snippet"]
    else:
        question = NO_QUESTION
        generator = record.generator_model
        titles = [f"{record.source_name} evidence"] * len(record.context)
    case = Case(case_id=rid, case_type=str(record.task_type), tenant=dataset.lower(), query=question, history=(),
                expected_sources=(), reference_answer="", reference_facts=())
    passages = tuple(Passage(Locator(dataset.lower(), str(record.source_id), ""), text, title=title)
                     for text, title in zip(record.context, titles, strict=True))
    text = " ".join(str(record.claim).split())
    response = Response(response_id=rid, case_id=rid, variant="claim", text=text)
    claim = Claim(response_id=rid, index=0, text=text, start=0, end=len(text))
    line = getattr(record, "line", 0)
    return JudgeTask(rid, case, passages, response, claim, str(generator),
                     where or (f"{dataset} line {line}" if line else dataset))


_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def same_weights(a: str, b: str) -> bool:
    """Whether two model names name the same model once spelling is ignored: lower case, a registry
    prefix and ``:latest`` dropped, every character but letters and digits removed
    (``llama2:7b-chat`` and ``llama-2-7b-chat`` are the same)."""
    from ..harness.llm import normalize_model_name

    def key(name: str) -> str:
        n = normalize_model_name(name)
        return _NON_ALNUM.sub("", n.removesuffix(":latest"))

    return bool(a.strip() and b.strip()) and key(a) == key(b)


def check_not_generator(judge_model: str, tasks: Sequence[JudgeTask]) -> None:
    """Refuse (one ``ValueError``) a judge that wrote any claim to be judged: by
    :func:`~playground.harness.judge.check_judge_model` per record, and by :func:`same_weights`."""
    from ..harness.judge import check_judge_model

    counts: dict[str, int] = {}
    for t in tasks:
        counts[t.generator] = counts.get(t.generator, 0) + 1
    for generator, n in sorted(counts.items()):
        try:
            check_judge_model(judge_model, generator)
            clash = same_weights(judge_model, generator)
        except ValueError:
            clash = True
        if clash:
            raise ValueError(
                f"the judge model '{judge_model}' is the generator '{generator}' of {n} of the {len(tasks)} claims "
                "to judge — a model grading its own answers is lenient; choose a different --judge")


def judge_call_key(models: Any, judge_model: str, task: JudgeTask) -> str:
    """The cache key of the first judge call of ``task`` (as :meth:`OllamaModels.chat` computes it)."""
    from ..harness.judge import JUDGE_SCHEMA, build_judge_prompt
    from ..harness.llm import cache_key

    messages = build_judge_prompt(task.case, task.passages, task.response.text, [task.claim])
    msgs = [{"role": str(m["role"]), "content": str(m["content"])} for m in messages]
    return cache_key("chat", judge_model, msgs, models.effective_options(None), JUDGE_SCHEMA)


def first_sources(records: Iterable[Any], n: int) -> list[str]:
    """The first ``n`` distinct sources of ``records`` in stable-hash order (seed :data:`LIMIT_SEED`)."""
    if n < 1:
        raise ValueError(f"--judge-limit must be at least 1, got {n}")
    return ranked((r.source_id for r in records), LIMIT_SEED)[:n]


def judge_claims(records: Sequence[Any], dataset: str, models: Any, judge_model: str, *,
                 where: Mapping[str, str] | None = None, progress: bool = False) -> JudgeVerdicts:
    """The judge's verdict on every record, as yes/no scores keyed by ``example_id``, with its reason
    (:class:`JudgeVerdicts`; module docstring).

    ``models``: an :class:`~playground.harness.llm.OllamaModels` (with a cache).
    ``where``: ``example_id`` -> "file line N", for errors.
    ``progress``: a bar on stderr, drawn only when it is a terminal."""
    from ..harness.judge import judge_response
    from ..harness.llm import JudgeOutputError

    places = where or {}
    tasks = [judge_task(r, dataset, places.get(r.example_id, "")) for r in records]
    check_not_generator(judge_model, tasks)
    cache = getattr(models, "cache", None)
    if cache is None or any(judge_call_key(models, judge_model, t) not in cache for t in tasks):
        models.preflight([judge_model])
    bar = None
    if progress:
        from tqdm import tqdm

        # disable=None: tqdm draws only when stderr is a terminal (no \r-joined bars in CI logs).
        bar = tqdm(total=len(tasks), desc=f"judge {judge_model} on {dataset}", unit="claim", disable=None)
    verdicts: dict[str, float] = {}
    reasons: dict[str, str] = {}
    try:
        for t in tasks:
            try:
                result = judge_response(models, judge_model, t.generator, t.case, t.passages, t.response, [t.claim])
            except JudgeOutputError as exc:
                raise JudgeReplyInvalid(judge_model, t.claim_id, t.where, exc.reason) from None
            verdicts[t.claim_id] = float(result.claims[0].supported)
            reasons[t.claim_id] = result.claims[0].reason
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return JudgeVerdicts(verdicts, yes_no=True, reasons=reasons)
