"""Generated answers: a grounded RAG prompt sent to a local model at temperature 0.

The prompt (:func:`build_prompt`) is a list of chat messages:

1. ``system`` — the rules: answer only from the numbered passages, cite every
   sentence with ``[n]``, say "I cannot answer this from the knowledge base."
   when the passages lack the answer, and on conflicting passages follow the
   newer one (each passage shows its title, section and ``updated`` date) and
   say that the older one disagrees;
2. the earlier turns of ``case.history`` (``user``/``assistant``);
3. ``user`` — the numbered passages, then the question.

The generated text becomes a :class:`~playground.model.Response` like the
authored ones, so people can label it in the playground: ``origin="model"``,
``variant="generated"`` (:data:`GENERATED_VARIANT`; the authored variants in
:data:`playground.model.VARIANTS` are a fixed teaching set and a generated
answer is none of them), no answer key, and ``meta`` carrying the model,
the prompt hash and the canonical JSON of the options.  Its id is
``<case_id>-G-<short_hash(model + prompt_hash)>``: the same model, prompt and
options give the same id, so labels on a generated answer survive re-runs.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..model import Case, Passage, Response, short_hash
from .llm import DEFAULT_GENERATOR_MODEL, OllamaModels, canonical_json, sha256_hex

__all__ = [
    "ABSTENTION_SENTENCE", "GENERATED_VARIANT", "SYSTEM_RULES", "build_prompt", "format_passage", "format_passages",
    "generate_response", "generated_response_id", "prompt_hash", "strip_thinking",
]


GENERATED_VARIANT = "generated"
#: What the model is told to say when the passages lack the answer.
ABSTENTION_SENTENCE = "I cannot answer this from the knowledge base."

SYSTEM_RULES = f"""You are the support assistant of a company knowledge base. Answer the user's question using ONLY the numbered passages given with it.

Rules:
1. Use only what the passages state. Do not add facts, numbers or names from your own knowledge.
2. Cite the passage behind every sentence with its number in square brackets, e.g. [1] or [2][3]. Cite only passage numbers that exist.
3. If the passages do not contain the answer, reply exactly: "{ABSTENTION_SENTENCE}" Do not guess, and do not answer from another product or company.
4. If passages disagree, follow the one with the newer "updated" date and say that the older passage disagrees, citing both, e.g. "The limit is 10 [2]; the older passage [1] says 5, which is outdated."
5. Keep identifiers, numbers, units and names exactly as written in the passages.
6. Be concise: answer in a few sentences."""  # noqa: E501 — the prompt's exact text is part of every cache key


def format_passage(number: int, passage: Passage) -> str:
    """``[n] Title › Section (updated YYYY-MM-DD)`` then the passage text."""
    head = f"[{number}]"
    title = passage.title or passage.locator.slug
    head += f" {title}"
    if passage.locator.heading:
        head += f" › {passage.locator.heading}"
    if passage.updated is not None:
        head += f" (updated {passage.updated.isoformat()})"
    return f"{head}\n{passage.text.strip()}"


def format_passages(passages: Sequence[Passage]) -> str:
    if not passages:
        return "(no passages were found for this question)"
    return "\n\n".join(format_passage(i, p) for i, p in enumerate(passages, start=1))


def build_prompt(case: Case, passages: Sequence[Passage]) -> list[dict[str, str]]:
    """Chat messages: system rules, the conversation so far, then passages + question."""
    messages: list[dict[str, str]] = [{"role": "system", "content": SYSTEM_RULES}]
    for turn in case.history:
        messages.append({"role": turn.role, "content": turn.content})
    user = f"Passages:\n\n{format_passages(passages)}\n\nQuestion: {case.query.strip()}"
    messages.append({"role": "user", "content": user})
    return messages


def prompt_hash(messages: Sequence[Mapping[str, str]], options: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the canonical JSON of ``{"messages": ..., "options": ...}``."""
    body = {"messages": [{"role": m["role"], "content": m["content"]} for m in messages], "options": dict(options)}
    return sha256_hex(canonical_json(body))


_THINKING = re.compile(r"^\s*<think>.*?</think>\s*", re.S)


def strip_thinking(text: str) -> str:
    """Drop a leading ``<think>...</think>`` block (reasoning models) and surrounding space."""
    return _THINKING.sub("", text, count=1).strip()


def generated_response_id(case_id: str, model: str, phash: str) -> str:
    return f"{case_id}-G-{short_hash(model + phash)}"


def generate_response(
    models: OllamaModels,
    case: Case,
    passages: Sequence[Passage],
    model: str = DEFAULT_GENERATOR_MODEL,
    options: Mapping[str, Any] | None = None,
) -> Response:
    """Ask ``model`` for a grounded answer (through the cache) and wrap it as a Response."""
    messages = build_prompt(case, passages)
    opts = models.effective_options(options)
    phash = prompt_hash(messages, opts)
    text = strip_thinking(models.chat(model, messages, opts))
    return Response(
        response_id=generated_response_id(case.case_id, model, phash),
        case_id=case.case_id,
        variant=GENERATED_VARIANT,
        text=text,
        origin="model",
        meta=(("model", model), ("prompt_hash", phash), ("options", canonical_json(opts))),
    )
