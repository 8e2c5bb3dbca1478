"""``calibrate ragtruth --frozen|--tuning-cv --judge MODEL`` and ``calibrate begin [--tuning-cv] --judge MODEL``.

The real ollama client and the harness's judge, cache and errors against the protocol-level double
(tests/ollama_double.py), on the tiny data sets of tests/frozen_tiny.py whose canned verdicts give figures computed
here by hand (hallucinated = positive; a "no" verdict flags the claim).
"""
from __future__ import annotations

import json
import socket

import pytest
from frozen_tiny import (
    BEGIN_FROZEN_SOURCES,
    BEGIN_TUNING_SOURCES,
    RT_FROZEN_SOURCES,
    RT_TUNING_SOURCES,
    all_verdicts,
    begin_claims,
    claim_of,
    rt_claims,
    verdict_reply,
)
from ollama_double import OllamaDouble
from real_data import run_main

from playground.calibrate.begin import begin_split
from playground.calibrate.judge_scorer import NO_QUESTION, same_weights
from playground.calibrate.outside_report import OutsideScorers, outside_report
from playground.calibrate.ragtruth import ragtruth_split
from playground.calibrate.splits import is_frozen
from playground.harness.llm import ModelCache, OllamaModels
from playground.sampling import ranked

JUDGE = "llama3.1:8b"
ROW = f"LLM judge ({JUDGE})"


@pytest.fixture
def double():
    with OllamaDouble(chat_reply=verdict_reply(all_verdicts())) as d:
        yield d


def _judged(double) -> list[str]:
    return [claim_of(b) for b in double.bodies("/api/chat")]


def _cli(capsys, double, cache, *argv):
    return run_main(capsys, "calibrate", *argv, "--judge", JUDGE, "--ollama-host", double.host,
                    "--judge-cache", str(cache), "--boot", "50")


def table_rows(out: str) -> list[dict[str, str]]:
    """The printed table's rows as ``{column: cell}`` (columns start where their header names start)."""
    lines = out.splitlines()
    h = next(i for i, x in enumerate(lines) if x.startswith("scorer "))
    names = lines[h].split()
    starts = [lines[h].index(f"{n}") if k == 0 else lines[h].index(f"  {n}") + 2 for k, n in enumerate(names)]
    rows = []
    for x in lines[h + 1:]:
        if not x.strip() or x.startswith(("caveat", "wrote")):
            break
        cells = [x[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)]
        rows.append(dict(zip(names, cells, strict=True)))
    return rows


def printed(out: str, scorer: str, task: str = "all") -> dict[str, str]:
    return next(r for r in table_rows(out) if r["scorer"] == scorer and r["task_type"] == task)


def _figures(row):
    return (row["kappa"], row["balanced_accuracy"], row["recall_hallucinated"], row["precision_hallucinated"])


def test_the_tiny_sources_are_on_the_sides_the_tests_assume(tiny):
    assert all(is_frozen("ragtruth", s) for s in RT_FROZEN_SOURCES)
    assert not any(is_frozen("ragtruth", s) for s in RT_TUNING_SOURCES)
    assert all(is_frozen("begin", s) for s in BEGIN_FROZEN_SOURCES)
    assert not any(is_frozen("begin", s) for s in BEGIN_TUNING_SOURCES)
    tuning, frozen = ragtruth_split()
    assert [r.example_id for r in tuning] == [c["id"] for c in rt_claims() if not c["frozen"]]
    assert [r.example_id for r in frozen] == [c["id"] for c in rt_claims() if c["frozen"]]
    bt, bf = begin_split()
    assert (len(bt), len(bf)) == (4, 4)


def test_judge_row_on_the_ragtruth_frozen_part_by_hand(tiny, double):
    models = OllamaModels(double.host, timeout=5.0, cache=ModelCache(tiny / "c.db"))
    rep = outside_report("ragtruth", OutsideScorers(judge=JUDGE, models=models), n_boot=0)
    # only the 8 frozen claims were judged, one call each; the tuning part needs no judging (no floor)
    assert sorted(_judged(double)) == sorted(c["text"] for c in rt_claims() if c["frozen"])
    s = rep.scorer(ROW)
    assert s.yes_no and s.floor is None
    # frozen: hallucinated 904:1 no (tp), 905:1 yes (fn), 906:1 no (tp); supported 904:2 no (fp), four yes (tn)
    # tp 2, fn 1, fp 1, tn 4: recall 2/3, precision 2/3, specificity 4/5, balanced accuracy (2/3 + 4/5) / 2;
    # p_o 6/8, p_e (3*3 + 5*5)/64 = 34/64, kappa (0.75 - 0.53125) / (1 - 0.53125) = 0.466667
    rows = {r["task_type"]: r for r in s.rows}
    assert (rows["all"]["n"], rows["all"]["hallucinated"], rows["all"]["sources"]) == (8, 3, 3)
    assert _figures(rows["all"]) == (0.4667, 0.7333, 0.6667, 0.6667)
    # QA (904, 905): tp 1, fn 1, fp 1, tn 2: p_o 3/5, p_e (2*2 + 3*3)/25 = 13/25, kappa 0.08/0.48
    assert _figures(rows["QA"]) == (0.1667, 0.5833, 0.5, 0.5)
    assert _figures(rows["Summary"]) == (1.0, 1.0, 1.0, 1.0)  # 906: tp 1, tn 2
    table = rep.table()
    assert set(table[table["scorer"] == ROW]["floor"]) == {"yes/no"}
    assert [x.name for x in rep.scorers] == ["support", "plain coverage", "ROUGE-1 precision", ROW]
    assert rep.scorer("support").rows[0]["n"] == 8 and rep.n_tuning == 6


def test_cli_table_then_a_rerun_from_the_cache(tiny, double, capsys):
    cache = tiny / "run" / ".cache"  # a harness run folder's cache: DIR/ollama.db
    rc, out, err = _cli(capsys, double, cache, "ragtruth", "--frozen")
    assert rc == 0, err
    assert double.count("/api/chat") == 8
    with ModelCache(cache / "ollama.db") as stored:
        assert len(stored) == 8
    row = printed(out, ROW)
    assert (row["n"], row["hallucinated"], row["sources"], row["floor"]) == ("8", "3", "3", "yes/no")
    assert (row["kappa"], row["bal_acc"], row["recall_h"], row["precision_h"]) == ("0.467", "0.733", "0.667", "0.667")
    assert printed(out, "support")["floor"] != "yes/no"
    # a second run: zero calls to the double (no preflight either), the same bytes
    rc2, out2, _ = _cli(capsys, double, cache, "ragtruth", "--frozen")
    assert rc2 == 0 and out2 == out
    assert double.count("/api/chat") == 8 and double.count("/api/tags") == 1


def test_a_rerun_needs_no_server(tiny, capsys):
    cache = tiny / "judge-cache"
    with OllamaDouble(chat_reply=verdict_reply(all_verdicts())) as d:
        host = d.host
        rc, out, err = _cli(capsys, d, cache, "begin")
        assert rc == 0, err
    # the double is gone: nothing listens at host any more
    rc2, out2, err2 = run_main(capsys, "calibrate", "begin", "--judge", JUDGE, "--ollama-host", host,
                               "--judge-cache", str(cache), "--boot", "50")
    assert (rc2, out2, err2) == (0, out, "")


def test_begin_judge_row_and_prompt(tiny, double):
    models = OllamaModels(double.host, timeout=5.0, cache=ModelCache(tiny / "c.db"))
    rep = outside_report("begin", OutsideScorers(judge=JUDGE, models=models), n_boot=0)
    # frozen: begin-f-1 not attributable, "no" (tp); begin-f-2 not attributable, "yes" (fn); two attributable "yes"
    # tp 1, fn 1, fp 0, tn 2: recall 0.5, precision 1, specificity 1, balanced accuracy 0.75;
    # p_o 3/4, p_e (1*2 + 3*2)/16 = 0.5, kappa 0.5
    assert _figures(rep.scorer(ROW).rows[0]) == (0.5, 0.75, 0.5, 1.0)
    bodies = double.bodies("/api/chat")
    assert len(bodies) == 4 and all(b["format"]["required"][0] == "claims" for b in bodies)
    first = next(b for b in bodies if claim_of(b) == "tea was first drunk in japan")
    user = first["messages"][1]["content"]
    passages = user.split("## Passages (the only evidence)", 1)[1].split("\n## ", 1)[0]
    question = user.split("## Question", 1)[1].split("\n## ", 1)[0]
    assert "[1] knowledge snippet\nTea was first drunk in China." in passages and "[2]" not in passages
    assert "Do you like tea?" in question and "Do you like tea?" not in passages  # the previous turn is no evidence
    assert "## Response to judge\n\ntea was first drunk in japan\n" in user
    assert user.rstrip().endswith("(none)")  # no reference answer
    assert first["options"]["temperature"] == 0 and first["stream"] is False


def test_ragtruth_prompt_has_no_question_and_the_evidence_numbered(tiny, double):
    models = OllamaModels(double.host, timeout=5.0, cache=ModelCache(tiny / "c.db"))
    outside_report("ragtruth", OutsideScorers(judge=JUDGE, models=models), n_boot=0)
    body = next(b for b in double.bodies("/api/chat") if claim_of(b) == "The recipe needs two eggs.")
    user = body["messages"][1]["content"]
    assert "[1] MARCO evidence\nEvidence for The recipe needs two eggs.\n\n[2] MARCO evidence\nAnother passage." in user
    assert f"## Question\n\n{NO_QUESTION}\n" in user


def test_tuning_cv_judges_no_frozen_claim(tiny, double, capsys):
    rc, out, err = _cli(capsys, double, tiny / "cache", "ragtruth", "--tuning-cv", "--folds", "2")
    assert rc == 0, err
    judged = _judged(double)
    frozen_texts = {c["text"] for c in rt_claims() if c["frozen"]}
    assert not frozen_texts & set(judged)
    assert sorted(judged) == sorted(c["text"] for c in rt_claims() if not c["frozen"])
    # tuning: 901:1 hallucinated "no" (tp), 903:0 hallucinated "yes" (fn), four supported "yes" (tn)
    # recall 0.5, precision 1, balanced accuracy 0.75; p_o 5/6, p_e (1*2 + 5*4)/36, kappa 0.571429
    row = printed(out, ROW)
    assert (row["n"], row["hallucinated"], row["floor"], row["kappa"], row["bal_acc"]) == (
        "6", "2", "yes/no", "0.571", "0.750")
    rc, _, err = _cli(capsys, double, tiny / "cache", "begin", "--tuning-cv", "--folds", "2")
    assert rc == 0, err
    begin_frozen = {c["text"] for c in begin_claims() if c["frozen"]}
    assert not begin_frozen & set(_judged(double))


def test_tuning_cv_judge_row_by_hand(tiny, double):
    models = OllamaModels(double.host, timeout=5.0, cache=ModelCache(tiny / "c.db"))
    rep = outside_report("ragtruth", OutsideScorers(judge=JUDGE, models=models), tuning_cv=True, folds=2, n_boot=0)
    s = rep.scorer(ROW)
    assert s.yes_no and s.fold_floors == ()
    assert _figures(s.rows[0]) == (0.5714, 0.75, 0.5, 1.0)
    assert rep.table().query("scorer == @ROW")["floor"].tolist()[0] == "yes/no"


def test_judge_limit_reports_every_row_on_the_first_sources(tiny, double, capsys):
    first = ranked(RT_FROZEN_SOURCES, "judge-limit")[0]
    rc, out, err = _cli(capsys, double, tiny / "cache", "ragtruth", "--frozen", "--judge-limit", "1")
    assert rc == 0, err
    expected = [c for c in rt_claims() if c["source"] == first]
    assert sorted(_judged(double)) == sorted(c["text"] for c in expected)
    assert (f"NOTE: subset (--judge-limit 1): the first 1 of 3 frozen sources in stable-hash order, "
            f"{len(expected)} of 8 claims; every row is on this subset") in out
    overall = [r for r in table_rows(out) if r["task_type"] == "all"]
    assert [r["scorer"] for r in overall] == ["support", "plain coverage", "ROUGE-1 precision", ROW]
    assert {r["n"] for r in overall} == {str(len(expected))}


def test_default_cache_is_the_harness_path_under_the_current_folder(tiny, double, capsys, monkeypatch):
    monkeypatch.chdir(tiny)
    rc, _, err = run_main(capsys, "calibrate", "begin", "--judge", JUDGE, "--ollama-host", double.host, "--boot", "0")
    assert rc == 0, err
    assert (tiny / ".cache" / "ollama.db").is_file()
    with ModelCache(tiny / ".cache" / "ollama.db") as cache:
        assert len(cache) == 4


def test_ollama_host_from_the_environment(tiny, double, capsys, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", double.host)
    rc, _, err = run_main(capsys, "calibrate", "begin", "--judge", JUDGE, "--judge-cache", str(tiny / "cache"),
                          "--boot", "0")
    assert rc == 0, err
    assert double.count("/api/chat") == 4


# --------------------------------------------------------------------------- errors: one line, exit 1, no table


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _one_error(rc, out, err) -> str:
    assert rc == 1 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_server_down(tiny, capsys):
    port = _free_port()
    floors = tiny / "floors.json"
    msg = _one_error(*run_main(capsys, "calibrate", "ragtruth", "--frozen", "--judge", JUDGE, "--ollama-host",
                               f"127.0.0.1:{port}", "--judge-cache", str(tiny / "cache"), "--save-floors", str(floors)))
    assert msg == f"error: Ollama is not running at http://127.0.0.1:{port} — start it with `ollama serve`"
    assert not floors.exists()  # nothing half-written


def test_model_not_pulled(tiny, double, capsys):
    msg = _one_error(*run_main(capsys, "calibrate", "begin", "--judge", "nope:1b", "--ollama-host", double.host,
                               "--judge-cache", str(tiny / "cache")))
    assert msg == "error: model 'nope:1b' is not pulled — run `ollama pull nope:1b`"
    assert double.count("/api/chat") == 0


def test_timeout(tiny, capsys):
    with OllamaDouble(chat_reply=verdict_reply(all_verdicts()), delay=2.0) as slow:
        msg = _one_error(*run_main(capsys, "calibrate", "begin", "--judge", JUDGE, "--ollama-host", slow.host,
                                   "--judge-cache", str(tiny / "cache"), "--timeout", "0.3"))
    assert msg.startswith(f"error: model '{JUDGE}' did not answer within 0.3 s — raise --timeout")


def test_a_reply_invalid_twice_is_a_named_error_not_a_zero(tiny, capsys):
    good = verdict_reply(all_verdicts())

    def reply(request):
        return "I think it is fine." if claim_of(request) == "It bakes for ninety minutes." else good(request)

    with OllamaDouble(chat_reply=reply) as d:
        msg = _one_error(*run_main(capsys, "calibrate", "ragtruth", "--frozen", "--judge", JUDGE, "--ollama-host",
                                   d.host, "--judge-cache", str(tiny / "cache")))
        assert sum(claim_of(b) == "It bakes for ninety minutes." for b in d.bodies("/api/chat")) == 2
    assert msg.startswith(f"error: judge '{JUDGE}' returned invalid output twice for claim 904:1 "
                          "(validation-sample.jsonl line 4): not JSON")


def test_a_reply_invalid_once_is_retried_and_used(tiny):
    good = verdict_reply(all_verdicts())
    seen: list[str] = []

    def reply(request):
        c = claim_of(request)
        if c == "It bakes for ninety minutes." and c not in seen:
            seen.append(c)
            return json.dumps({"claims": [], "faithfulness": 1, "citation_accuracy": 1, "answer_relevance": 1})
        return good(request)

    with OllamaDouble(chat_reply=reply) as d:
        models = OllamaModels(d.host, timeout=5.0, cache=ModelCache(tiny / "c.db"))
        rep = outside_report("ragtruth", OutsideScorers(judge=JUDGE, models=models), n_boot=0)
        assert d.count("/api/chat") == 9  # 8 claims, one of them asked twice
        retry = [b for b in d.bodies("/api/chat") if claim_of(b) == "It bakes for ninety minutes."][1]
        assert retry["messages"][-1]["content"].startswith("Your reply was not valid: claim 1 has no verdict")
    assert _figures(rep.scorer(ROW).rows[0]) == (0.4667, 0.7333, 0.6667, 0.6667)  # its "no" after the reminder


def test_the_judge_may_not_be_a_generator_of_the_claims(tiny, double, capsys):
    double.add_model("llama-2-13b-chat")
    double.add_model("llama2:13b-chat")
    for judge in ("llama-2-13b-chat", "llama2:13b-chat"):  # the second is Ollama's spelling of the same model
        msg = _one_error(*run_main(capsys, "calibrate", "ragtruth", "--frozen", "--judge", judge, "--ollama-host",
                                   double.host, "--judge-cache", str(tiny / "cache")))
        assert msg == (f"error: the judge model '{judge}' is the generator 'llama-2-13b-chat' of 2 of the 8 claims "
                       "to judge — a model grading its own answers is lenient; choose a different --judge")
    assert double.count("/api/chat") == 0  # refused before any call


def test_same_weights():
    assert same_weights("llama2:7b-chat", "llama-2-7b-chat")
    assert same_weights("Mistral:7B-Instruct", "mistral-7B-instruct")
    assert same_weights("gpt-4-0613:latest", "gpt-4-0613")
    assert not same_weights("llama2:7b", "llama-2-7b-chat")
    assert not same_weights("llama3.1:8b", "llama-2-7b-chat")
    assert not same_weights("", "")


def test_a_cache_folder_that_is_a_file(tiny, double, capsys):
    (tiny / "f").write_text("x")
    msg = _one_error(*run_main(capsys, "calibrate", "begin", "--judge", JUDGE, "--ollama-host", double.host,
                               "--judge-cache", str(tiny / "f")))
    assert msg == f"error: --judge-cache {tiny / 'f'} is a file: name the folder that holds (or will hold) ollama.db"


def test_option_errors(tiny, capsys):
    cases = {
        ("ragtruth", "--judge", JUDGE): "error: --judge and --scores report on one part: add --frozen (the frozen "
        "part) or --tuning-cv (the tuning part)",
        ("begin", "--judge-limit", "2"): "error: --judge-limit is an option of --judge: add --judge MODEL",
        ("begin", "--judge", JUDGE, "--judge-limit", "0"): "error: --judge-limit must be at least 1, got 0",
        ("begin", "--tuning-cv", "--judge", JUDGE, "--save-floors", "f.json"): "error: --save-floors needs one "
        "floor: use it with the frozen report, not with --tuning-cv (one floor per fold)",
    }
    for argv, message in cases.items():
        assert _one_error(*run_main(capsys, "calibrate", *argv)) == message
