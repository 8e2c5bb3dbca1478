"""The Ollama legs (generation, judge, embeddings, cache, failures) against a protocol-level double.

No Ollama server exists on test machines: ``tests/ollama_double.py`` speaks
Ollama's REST API on 127.0.0.1 and the real ``ollama`` client is driven
against it, failure modes included.
"""
from __future__ import annotations

import dataclasses
import itertools
import json
import re
import socket
import time
from datetime import date
from typing import Any

import ollama
import pytest

from playground.claims import split_claims
from playground.harness.embed import EmbeddingIndex, cosine, semantic_similarity
from playground.harness.generate import (
    ABSTENTION_SENTENCE,
    GENERATED_VARIANT,
    build_prompt,
    generate_response,
    prompt_hash,
)
from playground.harness.judge import (
    JUDGE_RUBRIC,
    JUDGE_SCHEMA,
    JudgementInvalid,
    build_judge_prompt,
    check_judge_model,
    generation_metrics,
    in_uncertainty_window,
    judge_labels,
    judge_response,
    validate_judgement,
)
from playground.harness.llm import (
    CacheMiss,
    JudgeOutputError,
    ModelCache,
    ModelError,
    ModelNotFound,
    ModelTimeout,
    OllamaModels,
    OllamaUnavailable,
    cache_key,
    canonical_json,
)
from playground.model import Case, Locator, Passage, Response, Turn

try:
    from ollama_double import OllamaDouble, fake_embedding
except ImportError:  # tests/ imported as a package
    from tests.ollama_double import OllamaDouble, fake_embedding

GEN = "qwen2.5:7b"
JUDGE = "llama3.1:8b"
EMBED = "nomic-embed-text"


# --------------------------------------------------------------------------- fixtures and helpers


def judge_reply(request: dict[str, Any], supported: str = "yes") -> str:
    """A valid judgement for whatever claims the judge prompt lists."""
    user = request["messages"][1]["content"]
    section = user.split("## Claims of the response", 1)[1].split("\n## ", 1)[0]
    numbers = [int(n) for n in re.findall(r"^(\d+)\. ", section, re.M)]
    return json.dumps(
        {
            "claims": [{"claim": n, "supported": supported, "reason": f"claim {n} is in passage 1"} for n in numbers],
            "faithfulness": 1,
            "citation_accuracy": 0.5,
            "answer_relevance": 1,
        }
    )


def replies(request: dict[str, Any]) -> str:
    """Generator answers free text; the judge (format given) answers JSON."""
    if request.get("format") is not None:
        return judge_reply(request)
    digest = canonical_json(request["messages"])[-40:]
    return (
        "Webhooks are retried up to 5 times [1]. The newer page says 7 times [2]; the older page [1] disagrees. "
        f"({len(digest)})"
    )


@pytest.fixture
def double():
    with OllamaDouble(chat_reply=replies) as d:
        yield d


@pytest.fixture
def cache(tmp_path):
    with ModelCache(tmp_path / ".cache" / "ollama.db") as c:
        yield c


def make_models(host: str, cache: ModelCache | None, **kwargs: Any) -> tuple[OllamaModels, list[float]]:
    sleeps: list[float] = []
    kwargs.setdefault("timeout", 5.0)
    return OllamaModels(host, cache=cache, sleep=sleeps.append, **kwargs), sleeps


def passage(slug: str, heading: str, text: str, updated: date, title: str = "") -> Passage:
    return Passage(Locator("bluefin", slug, heading), text, title=title or slug.title(), updated=updated)


PASSAGES = [
    passage(
        "webhooks",
        "Retries",
        "Webhook deliveries are retried up to 5 times with exponential backoff.",
        date(2023, 1, 10),
    ),
    passage(
        "webhooks-v2", "Retries", "Since March 2024 webhook deliveries are retried up to 7 times.", date(2024, 3, 1)
    ),
    passage("billing", "Invoices", "Invoices are issued on the first day of each month in EUR.", date(2024, 2, 1)),
]


def make_case(case_id: str = "C-001", query: str = "How often are webhook deliveries retried?", history=()) -> Case:
    return Case(
        case_id=case_id,
        case_type="stale_conflict",
        tenant="bluefin",
        query=query,
        history=tuple(history),
        expected_sources=(PASSAGES[1].locator,),
        reference_answer="Deliveries are retried up to 7 times; the older 5-times page is outdated.",
        reference_facts=(),
    )


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def response_bytes(responses: list[Response]) -> bytes:
    return canonical_json([dataclasses.asdict(r) for r in responses]).encode()


# --------------------------------------------------------------------------- the double speaks Ollama


def test_the_real_client_talks_to_the_double(double):
    client = ollama.Client(host=double.host, timeout=5, trust_env=False)
    chat = client.chat(model=GEN, messages=[{"role": "user", "content": "hi"}], options={"temperature": 0})
    assert chat.message.role == "assistant" and chat.message.content
    assert double.bodies("/api/chat")[-1]["stream"] is False  # non-streaming calls say so
    streamed = list(client.chat(model=GEN, messages=[{"role": "user", "content": "hi"}], stream=True))
    assert "".join(part.message.content for part in streamed) == chat.message.content
    assert client.generate(model=GEN, prompt="hi").response
    vectors = client.embed(model=EMBED, input=["alpha beta", "gamma"]).embeddings
    assert len(vectors) == 2 and len(vectors[0]) == 64
    names = {m.model for m in client.list().models}
    assert {"qwen2.5:7b", "llama3.1:8b", "nomic-embed-text:latest"} <= names
    assert client.show(GEN).details.family == "qwen2"
    with pytest.raises(ollama.ResponseError) as info:
        client.chat(model="mistral", messages=[{"role": "user", "content": "hi"}])
    assert info.value.status_code == 404 and "not found" in info.value.error


# --------------------------------------------------------------------------- generation


def test_build_prompt_numbers_passages_and_states_the_rules():
    history = (Turn("user", "We use webhooks."), Turn("assistant", "Noted, webhooks are enabled."))
    messages = build_prompt(make_case(history=history), PASSAGES[:2])
    system = messages[0]
    assert system["role"] == "system"
    assert "ONLY the numbered passages" in system["content"]
    assert "[1]" in system["content"] and ABSTENTION_SENTENCE in system["content"]
    assert "newer" in system["content"] and "older passage disagrees" in system["content"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[1]["content"] == "We use webhooks." and messages[2]["content"].startswith("Noted")
    last = messages[-1]["content"]
    assert "[1] Webhooks › Retries (updated 2023-01-10)\nWebhook deliveries are retried up to 5 times" in last
    assert "[2] Webhooks-V2 › Retries (updated 2024-03-01)" in last
    assert "[3]" not in last
    assert last.index("[2]") < last.index("Question: How often are webhook deliveries retried?")
    assert "(no passages were found" in build_prompt(make_case(), [])[-1]["content"]


def test_a_reasoning_block_is_not_part_of_the_answer(tmp_path):
    reply = "<think>\nhmm, passage 2 is newer\n</think>\n\nRetried 7 times [2]."
    with OllamaDouble(chat_reply=lambda r: reply) as double, ModelCache(tmp_path / "c.db") as cache:
        models, _ = make_models(double.host, cache)
        assert generate_response(models, make_case(), PASSAGES, model=GEN).text == "Retried 7 times [2]."


def test_generation_is_cached_and_reproducible(double, tmp_path):
    cases = [make_case("C-001"), make_case("C-002", "What currency are invoices in?")]
    path = tmp_path / "run" / ".cache" / "ollama.db"

    with ModelCache(path) as cache:
        models, _ = make_models(double.host, cache)
        first = [generate_response(models, c, PASSAGES, model=GEN) for c in cases]
        assert (cache.hits, cache.misses) == (0, 2)
    calls = double.count()
    assert calls == 2

    with ModelCache(path) as cache:  # a re-run: a new process, same cache file
        models, _ = make_models(double.host, cache)
        second = [generate_response(models, c, PASSAGES, model=GEN) for c in cases]
        assert (cache.hits, cache.misses) == (2, 0)
        assert models.stats() == {"cache_hits": 2, "cache_misses": 0, "requests": 0, "retries": 0}
    assert double.count() == calls  # zero calls to the server
    assert response_bytes(first) == response_bytes(second)


def test_generated_response_is_a_labellable_response(double, cache):
    models, _ = make_models(double.host, cache)
    case = make_case()
    response = generate_response(models, case, PASSAGES, model=GEN, options={"num_predict": 256})
    meta = dict(response.meta)
    opts = json.loads(meta["options"])
    assert response.origin == "model" and response.variant == GENERATED_VARIANT == "generated"
    assert response.case_id == case.case_id and response.key_claims == ()
    assert opts == {"temperature": 0.0, "seed": 42, "num_ctx": 8192, "num_predict": 256}
    assert meta["model"] == GEN
    assert meta["prompt_hash"] == prompt_hash(build_prompt(case, PASSAGES), opts)
    assert re.fullmatch(r"C-001-G-[0-9a-f]{8}", response.response_id)
    assert response.text.startswith("Webhooks are retried")
    sent = double.bodies("/api/chat")[-1]
    assert sent["options"]["temperature"] == 0 and sent["options"]["seed"] == 42 and sent["stream"] is False
    assert sent["messages"] == build_prompt(case, PASSAGES)
    # Another model or other options: another response id, another cache entry.
    other = generate_response(models, case, PASSAGES, model=JUDGE)
    assert other.response_id != response.response_id


def test_cache_key_is_the_hash_of_model_input_and_options():
    messages = [{"role": "user", "content": "x"}]
    key = cache_key("chat", GEN, messages, {"seed": 42, "temperature": 0})
    assert key == cache_key("chat", GEN, messages, {"temperature": 0, "seed": 42})  # key order does not matter
    assert key != cache_key("chat", JUDGE, messages, {"seed": 42, "temperature": 0})
    assert key != cache_key("chat", GEN, messages, {"seed": 43, "temperature": 0})
    assert key != cache_key("chat", GEN, messages, {"seed": 42, "temperature": 0}, format="json")
    assert key != cache_key("embed", GEN, "x", {"seed": 42, "temperature": 0})


def test_cache_only_mode_never_reaches_a_server(cache):
    models = OllamaModels(f"http://127.0.0.1:{closed_port()}", cache=cache, cache_only=True)
    with pytest.raises(CacheMiss, match="ollama serve"):
        models.chat(GEN, [{"role": "user", "content": "x"}])


# --------------------------------------------------------------------------- judge


def judged_claims(
    text: str = "Webhooks are retried up to 7 times [2]. The older page [1] says 5 times.",
) -> tuple[Response, list]:
    response = Response("C-001-G-abc", "C-001", GENERATED_VARIANT, text, origin="model", meta=(("model", GEN),))
    return response, split_claims(text, response.response_id)


def test_judge_prompt_puts_passages_first_and_the_reference_answer_last():
    case = make_case(history=(Turn("user", "We use webhooks."),))
    response, claims = judged_claims()
    messages = build_judge_prompt(case, PASSAGES[:2], response.text, claims)
    assert [m["role"] for m in messages] == ["system", "user"]
    user = messages[1]["content"]
    order = [
        "## Passages",
        "## Question",
        "## Response to judge",
        "## Claims",
        "## Rubric",
        "## Conflicting sources",
        "## Output",
        "## Reference answer",
    ]
    positions = [user.index(h) for h in order]
    assert positions == sorted(positions) and positions[0] == 0
    assert user.rstrip().endswith(case.reference_answer)
    assert "(updated 2024-03-01)" in user and "We use webhooks." in user
    assert "1. Webhooks are retried up to 7 times [2]." in user and "2. The older page [1] says 5 times." in user
    assert "follows the newer passage" in user and "full marks" in user
    for name in ("faithfulness", "citation_accuracy", "answer_relevance"):
        assert name in user and set(JUDGE_RUBRIC[name]["anchors"]) == {0.0, 0.5, 1.0}
    for anchor in ("0.5 = The main answer is backed", "1 = Every statement", "0 = The main answer is not"):
        assert anchor in user


def test_judge_response_validates_and_yields_labels(double, cache):
    models, _ = make_models(double.host, cache)
    response, claims = judged_claims()
    result = judge_response(models, JUDGE, GEN, make_case(), PASSAGES[:2], response, claims)
    assert (result.faithfulness, result.citation_accuracy, result.answer_relevance) == (1.0, 0.5, 1.0)
    assert result.support == {0: (1, "claim 1 is in passage 1"), 1: (1, "claim 2 is in passage 1")}
    assert not result.retried
    sent = double.bodies("/api/chat")[-1]
    assert sent["model"] == JUDGE and sent["format"] == JUDGE_SCHEMA and sent["options"]["temperature"] == 0
    labels = judge_labels(result)
    assert [(lab.annotator, lab.unit_kind, lab.unit_id, lab.dimension, lab.value) for lab in labels] == [
        ("judge:llama3.1:8b", "claim", c.claim_id, "supported", 1) for c in claims
    ]
    json.dumps(result.to_dict())  # reportable


def test_judge_must_not_be_the_generator(double, cache):
    models, _ = make_models(double.host, cache)
    response, claims = judged_claims()
    with pytest.raises(ValueError, match="also the generator"):
        judge_response(models, GEN, GEN, make_case(), PASSAGES, response, claims)
    with pytest.raises(ValueError, match=r"judge\.force_same"):  # caught from the response's own meta too
        judge_response(models, "qwen2.5:7b", None, make_case(), PASSAGES, response, claims)
    with pytest.raises(ValueError):
        check_judge_model("llama3", "llama3:latest")
    assert double.count() == 0  # refused before any call
    result = judge_response(models, GEN, GEN, make_case(), PASSAGES, response, claims, force_same=True)
    assert result.judge_model == GEN and double.count() == 1
    check_judge_model(JUDGE, GEN)  # different models are fine


def test_uncertainty_window():
    assert in_uncertainty_window(0.45) and in_uncertainty_window(0.55) and in_uncertainty_window(0.65)
    assert not in_uncertainty_window(0.44) and not in_uncertainty_window(0.66)
    assert in_uncertainty_window(0.2, low=0.1, high=0.3)
    with pytest.raises(ValueError):
        in_uncertainty_window(0.5, low=0.7, high=0.6)


def test_generation_metrics_are_skipped_below_a_quarter_of_cases(double, cache):
    models, _ = make_models(double.host, cache)
    response, claims = judged_claims()
    one = judge_response(models, JUDGE, GEN, make_case("C-001"), PASSAGES, response, claims)
    two = dataclasses.replace(one, case_id="C-002", faithfulness=0.0)
    skipped = generation_metrics([one], total_cases=5)  # 20%
    assert skipped["skipped"] is True and "1 of 5 cases (20%)" in skipped["reason"] and "25%" in skipped["reason"]
    assert "faithfulness" not in skipped
    ok = generation_metrics([one, two], total_cases=8)  # exactly 25%
    assert ok["skipped"] is False and ok["faithfulness"] == 0.5 and ok["citation_accuracy"] == 0.5
    assert ok["claim_support_rate"] == 1.0 and ok["judged_cases"] == 2
    assert generation_metrics([], total_cases=0)["skipped"] is True


def test_invalid_judge_json_gets_one_reminder_then_a_clear_error(tmp_path):
    def broken(request: dict[str, Any]) -> str:
        return "Sure! Here is my verdict: faithful." if request.get("format") else "x"

    with OllamaDouble(chat_reply=broken) as double, ModelCache(tmp_path / "c.db") as cache:
        models, _ = make_models(double.host, cache)
        response, claims = judged_claims()
        with pytest.raises(JudgeOutputError) as info:
            judge_response(models, JUDGE, GEN, make_case("C-042"), PASSAGES, response, claims)
        assert double.count() == 2  # the first reply and one retry with a reminder
        reminder = double.bodies("/api/chat")[-1]["messages"]
        assert reminder[-2]["role"] == "assistant" and "not valid" in reminder[-1]["content"]
        message = str(info.value)
        assert "\n" not in message and "C-042" in message and "not JSON" in message and "--resume" in message


def test_a_judge_that_fixes_its_reply_after_the_reminder_is_accepted(tmp_path):
    def sloppy(request: dict[str, Any]) -> str:
        good = json.loads(judge_reply(request))
        if "not valid" in request["messages"][-1]["content"]:
            return json.dumps(good)
        good["claims"] = good["claims"][:1]  # forgets claim 2
        return json.dumps(good)

    with OllamaDouble(chat_reply=sloppy) as double, ModelCache(tmp_path / "c.db") as cache:
        models, _ = make_models(double.host, cache)
        response, claims = judged_claims()
        result = judge_response(models, JUDGE, GEN, make_case(), PASSAGES, response, claims)
        assert result.retried and len(result.claims) == 2
        assert "claim 2 has no verdict" in double.bodies("/api/chat")[-1]["messages"][-1]["content"]


def test_a_missing_claim_twice_names_the_claim(tmp_path):
    def forgetful(request: dict[str, Any]) -> str:
        good = json.loads(judge_reply(request))
        good["claims"] = good["claims"][:1]
        return json.dumps(good)

    with OllamaDouble(chat_reply=forgetful) as double, ModelCache(tmp_path / "c.db") as cache:
        models, _ = make_models(double.host, cache)
        response, claims = judged_claims()
        with pytest.raises(JudgeOutputError, match=r"case C-001, response C-001-G-abc, claim 2 \(C-001-G-abc:c1:"):
            judge_response(models, JUDGE, GEN, make_case(), PASSAGES, response, claims)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d.update(extra=1), "unexpected key"),
        (lambda d: d.pop("faithfulness"), "missing key"),
        (lambda d: d.update(faithfulness=1.5), r"\[0, 1\]"),
        (lambda d: d.update(faithfulness=True), "must be a number"),
        (lambda d: d.update(answer_relevance="1"), "must be a number"),
        (lambda d: d["claims"].append(dict(d["claims"][0])), "judged twice"),
        (lambda d: d["claims"][0].update(claim=9), "does not exist"),
        (lambda d: d["claims"][0].update(supported="maybe"), "yes"),
        (lambda d: d["claims"][0].update(note="x"), "unexpected key"),
        (lambda d: d["claims"][1].update(reason=None), "reason"),
    ],
)
def test_validate_judgement_rejects_bad_shapes(mutate, message):
    data = {
        "claims": [{"claim": 1, "supported": "yes", "reason": "ok"}, {"claim": 2, "supported": "no", "reason": "no"}],
        "faithfulness": 1,
        "citation_accuracy": 0,
        "answer_relevance": 0.5,
    }
    assert validate_judgement(json.loads(json.dumps(data)), 2)["claims"] == {1: (1, "ok"), 2: (0, "no")}
    mutate(data)
    with pytest.raises(JudgementInvalid, match=message):
        validate_judgement(data, 2)


# --------------------------------------------------------------------------- failures


def test_connection_refused_names_ollama_serve(cache):
    host = f"http://127.0.0.1:{closed_port()}"
    models, sleeps = make_models(host, cache)
    with pytest.raises(OllamaUnavailable) as info:
        models.chat(GEN, [{"role": "user", "content": "x"}])
    assert str(info.value) == f"Ollama is not running at {host} — start it with `ollama serve`"
    assert info.value.fix == "start it with `ollama serve`" and sleeps == []
    with pytest.raises(OllamaUnavailable):
        models.preflight([GEN])
    with pytest.raises(OllamaUnavailable):
        models.embed(EMBED, ["x"])


def test_model_not_pulled_names_ollama_pull(double, cache):
    double.remove_model(GEN)
    models, sleeps = make_models(double.host, cache)
    with pytest.raises(ModelNotFound) as info:
        generate_response(models, make_case(), PASSAGES, model=GEN)
    assert str(info.value) == "model 'qwen2.5:7b' is not pulled — run `ollama pull qwen2.5:7b`"
    assert double.count() == 1 and sleeps == []  # 404 is not retried
    with pytest.raises(ModelNotFound) as info:
        models.preflight([GEN, JUDGE, EMBED, "mistral"])
    assert info.value.models == (GEN, "mistral")
    assert "`ollama pull qwen2.5:7b && ollama pull mistral`" in str(info.value)
    double.add_model(GEN)
    models.preflight([GEN, JUDGE, EMBED])  # nomic-embed-text matches nomic-embed-text:latest


def test_slow_model_times_out_with_a_clear_fix(cache):
    with OllamaDouble(delay=2.0) as double:
        models, sleeps = make_models(double.host, cache, timeout=0.3)
        start = time.monotonic()
        with pytest.raises(ModelTimeout) as info:
            models.chat(GEN, [{"role": "user", "content": "x"}])
        assert time.monotonic() - start < 1.9  # gave up before the 2 s answer
        assert "did not answer within 0.3 s" in str(info.value) and "--timeout" in str(info.value)
        assert double.count() == 2 and sleeps == [0.5]  # a timeout is retried once


def test_server_error_is_retried_with_backoff_then_succeeds(double, cache):
    double.fail_next(500, times=2, path="/api/chat")
    models, sleeps = make_models(double.host, cache)
    assert models.chat(GEN, [{"role": "user", "content": "x"}])
    assert double.count() == 3 and sleeps == [0.5, 1.0] and models.retries == 2


def test_server_error_retries_are_bounded(double, cache):
    double.fail_next(503, times=10)
    models, sleeps = make_models(double.host, cache)
    with pytest.raises(ModelError, match="HTTP 503") as info:
        models.chat(GEN, [{"role": "user", "content": "x"}])
    assert double.count() == 4 and sleeps == [0.5, 1.0, 2.0]
    assert "\n" not in str(info.value)
    assert len(cache) == 0  # nothing cached from a failure


def test_bad_request_is_not_retried(double, cache):
    double.fail_next(400, path="/api/chat")
    models, sleeps = make_models(double.host, cache)
    with pytest.raises(ModelError, match="HTTP 400") as info:
        models.chat(GEN, [{"role": "user", "content": "x"}])
    assert not isinstance(info.value, ModelNotFound)
    assert double.count() == 1 and sleeps == []


def test_a_missing_endpoint_is_not_reported_as_a_missing_model(double, cache):
    double.fail_next(404, path="/api/embed", message="404 page not found")
    models, sleeps = make_models(double.host, cache)
    with pytest.raises(ModelError, match="update Ollama") as info:
        models.embed(EMBED, ["x"])
    assert not isinstance(info.value, ModelNotFound) and sleeps == []


def test_dropped_connection_is_retried(double, cache):
    double.fail_next("drop", path="/api/embed")
    models, sleeps = make_models(double.host, cache)
    assert len(models.embed(EMBED, ["a b c"])[0]) == 64
    assert double.count("/api/embed") == 2 and sleeps == [0.5]


# --------------------------------------------------------------------------- embeddings


def test_embedding_ranking_is_deterministic_and_cached(double, tmp_path):
    twin = passage("webhooks-copy", "Retries", PASSAGES[0].text, date(2023, 1, 10))  # same text, other id
    pool = [*PASSAGES, twin]
    path = tmp_path / "e.db"
    with ModelCache(path) as cache:
        models, _ = make_models(double.host, cache)
        index = EmbeddingIndex(models, EMBED)
        assert index.query_prefix == "search_query: " and index.document_prefix == "search_document: "
        ranked = index.rank("which currency are invoices issued in each month", pool)
        assert ranked[0] == PASSAGES[2].passage_id
        scores = dict(index.scores("webhook deliveries retried", pool))
        first = index.rank("webhook deliveries retried", pool)
        assert len(set(first)) == len(pool) == 4
        for a, b in itertools.pairwise(first):  # best first, ties by passage id
            assert (-scores[a], a) < (-scores[b], b)
        assert index("webhook deliveries retried", "bluefin", pool) == first  # the retrieval-leg signature
        assert index("webhook deliveries retried", "northwind", pool) == []
        calls = double.count()
        assert double.count("/api/embed") == calls
    with ModelCache(path) as cache:
        models, _ = make_models(double.host, cache)
        again = EmbeddingIndex(models, EMBED).rank("webhook deliveries retried", list(reversed(pool)))
    assert again == first and double.count() == calls  # re-run: same order, zero calls


def test_embeddings_are_cached_per_text(double, cache):
    models, _ = make_models(double.host, cache)
    models.embed(EMBED, ["alpha", "beta"])
    models.embed(EMBED, ["beta", "gamma", "gamma"])
    bodies = double.bodies("/api/embed")
    assert [b["input"] for b in bodies] == [["alpha", "beta"], ["gamma"]]
    assert models.embed(EMBED, ["gamma"])[0] == fake_embedding("gamma")


def test_semantic_similarity(double, cache):
    models, _ = make_models(double.host, cache)
    assert semantic_similarity(models, "retry webhook", "retry webhook") == pytest.approx(1.0)
    related = semantic_similarity(models, "webhook retries five times", "webhook retries seven times")
    unrelated = semantic_similarity(models, "webhook retries five times", "invoices in euro")
    assert related > unrelated
    assert cosine([0, 0], [1, 0]) == 0.0


# --------------------------------------------------------------------------- resume


def run_cases(models: OllamaModels, cases: list[Case], done: list[str]) -> None:
    """A miniature of the harness loop: generate, judge, checkpoint each finished case."""
    for case in cases:
        if case.case_id in done:
            continue
        response = generate_response(models, case, PASSAGES, model=GEN)
        claims = split_claims(response.text, response.response_id)
        judge_response(models, JUDGE, GEN, case, PASSAGES, response, claims)
        done.append(case.case_id)


def test_resume_after_a_failure_mid_run(double, tmp_path):
    cases = [
        make_case("C-001"),
        make_case("C-002", "Are retries exponential?"),
        make_case("C-003", "Invoice currency?"),
    ]
    path = tmp_path / "run" / ".cache" / "ollama.db"

    def remove_generator_after_case_1_is_judged(request: dict[str, Any]) -> str:
        reply = replies(request)
        if request.get("format") is not None and "How often are webhook" in canonical_json(request["messages"]):
            double.remove_model(GEN)  # e.g. `ollama rm qwen2.5:7b` while the run was going
        return reply

    double.chat_reply = remove_generator_after_case_1_is_judged
    done: list[str] = []  # the per-case checkpoint
    with ModelCache(path) as cache:
        models, sleeps = make_models(double.host, cache)
        with pytest.raises(ModelNotFound, match=r"ollama pull qwen2\.5:7b"):
            run_cases(models, cases, done)
    assert done == ["C-001"] and sleeps == []
    assert double.count() == 3  # generate + judge for C-001, the failed generation of C-002

    double.chat_reply = replies
    double.add_model(GEN)  # the user ran `ollama pull qwen2.5:7b`
    before = len(double.requests)
    with ModelCache(path) as cache:  # --resume: a new process, same cache, same checkpoint
        models, _ = make_models(double.host, cache)
        run_cases(models, cases, done)
    assert done == ["C-001", "C-002", "C-003"]
    resumed = [canonical_json(r.body) for r in double.requests[before:]]
    assert len(resumed) == 4 and not any("How often are webhook" in body for body in resumed)

    with ModelCache(path) as cache:  # even a full re-run without the checkpoint repeats no call
        models, _ = make_models(double.host, cache)
        run_cases(models, cases, [])
        assert (cache.hits, cache.misses) == (6, 0)
    assert double.count() == 7


def test_preflight_checks_server_and_models(double, cache):
    models, _ = make_models(double.host, cache)
    models.preflight([GEN, JUDGE, EMBED, "nomic-embed-text:latest"])
    assert double.count() == 0 and double.count("/api/tags") == 1
