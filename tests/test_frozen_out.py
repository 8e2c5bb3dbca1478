"""``--out DIR`` on ``calibrate ragtruth --frozen|--tuning-cv`` and ``calibrate begin [--tuning-cv]``.

On the tiny data sets of tests/frozen_tiny.py, with the Ollama double giving each claim its canned verdict and a
reason naming the claim, and the hand-made scores as ``--scores``: the claims file's exact rows (labels at the
floors computed here by hand), disagreements first, the same bytes from the cache with no server, the table file
equal to the printed figures.  On the shared real data: the files' counts and headers, and the per-claim passes
of ``--tuning-cv`` reproduce the pooled figures of the table.
"""
from __future__ import annotations

import csv
import io
import json

import pytest
from frozen_tiny import all_verdicts, begin_claims, claim_of, rt_claims
from ollama_double import OllamaDouble
from real_data import run_main
from test_frozen_judge import table_rows

from playground.calibrate.frozen_files import TABLE_COLUMNS, claim_rows, file_names
from playground.calibrate.judge_scorer import JudgeVerdicts
from playground.calibrate.outside_report import OutsideScorers, outside_run
from playground.harness.llm import ModelCache, OllamaModels

JUDGE = "llama3.1:8b"
OURS = ["support_score", "support_pass", "plain_coverage_score", "plain_coverage_pass", "rouge_1_precision_score",
        "rouge_1_precision_pass"]
HEADER = ["claim_id", "source_id", "task_type", "human_supported", *OURS, "judge_verdict", "judge_pass",
          "judge_reason", "mine_score", "mine_pass", "claim"]


def reason_of(claim: str, verdict: str) -> str:
    """The double's reason for a claim: a comma and quotes, so that the CSV must quote it."""
    return f'{"stated" if verdict == "yes" else "not stated"}, see "{claim}"'


def reasoned_reply(verdicts: dict[str, str]):
    def reply(request):
        claim = claim_of(request)
        v = verdicts[claim]
        return json.dumps({"claims": [{"claim": 1, "supported": v, "reason": reason_of(claim, v)}],
                           "faithfulness": 1, "citation_accuracy": 1, "answer_relevance": 1})

    return reply


@pytest.fixture
def double():
    with OllamaDouble(chat_reply=reasoned_reply(all_verdicts())) as d:
        yield d


def _scores(tiny, claims):
    path = tiny / "mine.csv"
    path.write_text("claim_id,score\n" + "".join(f"{c['id']},{c['score']}\n" for c in claims), encoding="utf-8")
    return path


def _cli(capsys, host, tiny, out, *argv):
    return run_main(capsys, "calibrate", *argv, "--judge", JUDGE, "--ollama-host", host, "--judge-cache",
                    str(tiny / "cache"), "--scores", str(tiny / "mine.csv"), "--boot", "50", "--out", str(out))


def _read(path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))


def _row(claim_id, source, task, supported, ours, verdict, score, mine_pass, text):
    """One expected row: ``ours`` is (score, pass) of support, plain coverage and ROUGE-1 precision."""
    cells = [claim_id, source, task, str(supported)]
    for s, p in ours:
        cells += [s, str(p)]
    return [*cells, verdict, str(verdict == "yes"), reason_of(text, verdict), score, str(mine_pass), text]


ALL_ONE = [("1", True)] * 3  # tiny RAGTruth: every evidence holds its claim verbatim, each of ours scores 1


def test_ragtruth_frozen_claims_file_by_hand(tiny, double, capsys):
    _scores(tiny, rt_claims())
    out = tiny / "out"
    rc, printed, err = _cli(capsys, double.host, tiny, out, "ragtruth", "--frozen")
    assert rc == 0, err
    rows = _read(out / "ragtruth-frozen-claims.csv")
    assert rows[0] == HEADER
    # Floors (tuning part): ours score 1 on every tuning claim, so balanced accuracy is 0.5 at every floor of the
    # grid and the tie goes to the default 0.55: every frozen claim passes, the 3 hallucinated ones disagree.
    # mine: 0.65 (tests/test_frozen_scores.py); the judge: its verdict.  Frozen claims (human, verdict, score):
    # 904:0 T yes .99 | 904:1 F no .10 | 904:2 T no .65 | 905:0 T yes .40 | 905:1 F yes .65 | 906:0 T yes .20
    # 906:1 F no .50 | 906:2 T yes .80.  Disagreements: ours 904:1 905:1 906:1; judge 904:2 905:1;
    # mine (at 0.65, the boundary passing) 905:0 905:1 906:0.  Agreed by all: 904:0, 906:2 — last.
    assert rows[1:] == [
        _row("904:1", "11853", "QA", False, ALL_ONE, "no", "0.1", False, "It bakes for ninety minutes."),
        _row("904:2", "11853", "QA", True, ALL_ONE, "no", "0.65", True, "The oven is set to 180 degrees."),
        _row("905:0", "11893", "QA", True, ALL_ONE, "yes", "0.4", False, "The library lends e-books."),
        _row("905:1", "11893", "QA", False, ALL_ONE, "yes", "0.65", True, "Members may borrow thirty books at once."),
        _row("906:0", "11929", "Summary", True, ALL_ONE, "yes", "0.2", False, "The storm closed three schools."),
        _row("906:1", "11929", "Summary", False, ALL_ONE, "no", "0.5", False, "Power returned after two weeks."),
        _row("904:0", "11853", "QA", True, ALL_ONE, "yes", "0.99", True, "The recipe needs two eggs."),
        _row("906:2", "11929", "Summary", True, ALL_ONE, "yes", "0.8", True, "Roads reopened on Monday."),
    ]
    raw = (out / "ragtruth-frozen-claims.csv").read_bytes()
    assert b"\r" not in raw and raw.endswith(b"\n")
    assert (b'no,False,"not stated, see ""It bakes for ninety minutes.""",0.1,False,It bakes for ninety minutes.\n'
            in raw)
    assert (f"wrote {out / 'ragtruth-frozen.csv'} (the table, 15 rows) and {out / 'ragtruth-frozen-claims.csv'} "
            "(8 claims, the 6 where a scorer disagrees with the human label first)") in printed
    _table_is_the_printed_one(out / "ragtruth-frozen.csv", printed)


def _table_is_the_printed_one(path, printed):
    rows = _read(path)
    assert rows[0] == list(TABLE_COLUMNS)
    shown = table_rows(printed)
    heads = {c: c.replace("_hallucinated", "_h").replace("balanced_accuracy", "bal_acc") for c in TABLE_COLUMNS}
    assert len(rows) - 1 == len(shown)
    for cells, line in zip(rows[1:], shown, strict=True):
        row = dict(zip(TABLE_COLUMNS, cells, strict=True))
        assert row["dataset"] in ("RAGTruth", "BEGIN")
        assert {heads[c]: (row[c] or "—") for c in TABLE_COLUMNS[1:]} == line


def test_begin_frozen_claims_file_by_hand(tiny, double, capsys):
    _scores(tiny, begin_claims())
    out = tiny / "out"
    rc, printed, err = _cli(capsys, double.host, tiny, out, "begin")
    assert rc == 0, err
    rows = _read(out / "begin-frozen-claims.csv")
    assert rows[0] == HEADER
    # ROUGE-1 precision (claim tokens found in the knowledge snippet / claim tokens):
    #   tuning: t-1 5/5, t-2 "jazz began in chicago in 1950" 3/6, t-3 "it was shot in iceland" 4/5,
    #   t-4 "i loved the ending so much" 1/6: balanced accuracy 1 for floors 0.55-0.80, nearest default 0.55;
    #   frozen: f-1 "tea was first drunk in japan" 5/6, f-2 "green tea is the best tea" 1/6 (tea once), f-3 and
    #   f-4 1.  Support and plain coverage (content words covered): tuning 1, 0 / 0.5, 1, 0: floor 0.55 too;
    #   frozen f-1 tea first drunk of tea first drunk japan 3/4, f-2 tea of green tea best 1/3, f-3 and f-4 1.
    # Support on dialogue is the mean of those two (the rouge rule, docs/scorers.md): f-1 (3/4 + 5/6)/2 = 0.791667,
    # f-2 (1/3 + 1/6)/2 = 0.25, f-3 and f-4 1.
    # At 0.55 all of ours pass f-1 (not attributable: a disagreement) and flag f-2.  The judge says yes to f-2
    # (a disagreement); mine (floor 0.65) passes f-2 at 0.7 (a disagreement) and flags f-1 at 0.3.
    assert rows[1:] == [
        _row("begin-f-1", "sha1:00346a90e6467fc0", "wow", False,
             [("0.791667", True), ("0.75", True), ("0.833333", True)], "no", "0.3", False,
             "tea was first drunk in japan"),
        _row("begin-f-2", "sha1:00346a90e6467fc0", "wow", False,
             [("0.25", False), ("0.333333", False), ("0.166667", False)], "yes", "0.7", True,
             "green tea is the best tea"),
        _row("begin-f-3", "sha1:00435198a5685c6b", "cmu_dog", True, ALL_ONE, "yes", "0.95", True,
             "the actor won an oscar in 2001"),
        _row("begin-f-4", "sha1:00eb2a89f47a5e3c", "topicalchat", True, ALL_ONE, "yes", "0.9", True,
             "mars has two moons"),
    ]
    _table_is_the_printed_one(out / "begin-frozen.csv", printed)


def test_ragtruth_tuning_cv_claims_file_by_hand(tiny, double, capsys):
    _scores(tiny, rt_claims())
    out = tiny / "out"
    rc, printed, err = _cli(capsys, double.host, tiny, out, "ragtruth", "--tuning-cv", "--folds", "2")
    assert rc == 0, err
    assert sorted(p.name for p in out.iterdir()) == ["ragtruth-tuning-claims.csv", "ragtruth-tuning-cv.csv"]
    rows = _read(out / "ragtruth-tuning-claims.csv")
    assert rows[0] == HEADER
    # fold_of(source, 2, seed 0): 90001 and 90002 in fold 0, 90003 in fold 1 (sampling.fold_of).
    # mine, fold 0's floor from fold 1 (hallucinated .62, supported .64): no grid floor separates them, balanced
    # accuracy 0.5 everywhere, the default 0.55; fold 1's floor from fold 0 (supported .90 .80 .70,
    # hallucinated .30): balanced accuracy 1 for 0.35-0.70, nearest 0.55.  So mine passes all but 901:1 (.30);
    # 903:0 (hallucinated, .62) is a disagreement, as for ours (all pass) and the judge (yes); 901:1 for ours.
    assert [r[0] for r in rows[1:]] == ["901:1", "903:0", "901:0", "902:0", "902:1", "903:1"]
    assert rows[1] == _row("901:1", "90001", "QA", False, ALL_ONE, "no", "0.3", False,
                           "Entry costs forty euros for adults.")
    assert rows[2] == _row("903:0", "90003", "QA", False, ALL_ONE, "yes", "0.62", True,
                           "The train leaves from platform four.")
    assert rows[6] == _row("903:1", "90003", "QA", True, ALL_ONE, "yes", "0.64", True,
                           "Tickets can be bought on board.")
    assert printed.splitlines()[-1].endswith("(6 claims, the 2 where a scorer disagrees with the human label first)")
    _table_is_the_printed_one(out / "ragtruth-tuning-cv.csv", printed)


def test_a_rerun_from_the_cache_without_a_server_writes_the_same_bytes(tiny, capsys):
    _scores(tiny, rt_claims())
    with OllamaDouble(chat_reply=reasoned_reply(all_verdicts())) as d:
        host = d.host
        rc, first, err = _cli(capsys, host, tiny, tiny / "a", "ragtruth", "--frozen")
        assert rc == 0, err
    # the double is gone; the verdicts and the reasons come from the cache
    rc, second, err = _cli(capsys, host, tiny, tiny / "b", "ragtruth", "--frozen")
    assert (rc, err) == (0, "")
    assert second == first.replace(str(tiny / "a"), str(tiny / "b"))
    for name in ("ragtruth-frozen.csv", "ragtruth-frozen-claims.csv"):
        assert (tiny / "a" / name).read_bytes() == (tiny / "b" / name).read_bytes()
    assert "not stated, see " in (tiny / "b" / "ragtruth-frozen-claims.csv").read_text(encoding="utf-8")


def test_judge_claims_keeps_the_reasons_and_the_order_is_per_scorer(tiny, double):
    _scores(tiny, rt_claims())
    models = OllamaModels(double.host, timeout=5.0, cache=ModelCache(tiny / "c.db"))
    run = outside_run("ragtruth", OutsideScorers(judge=JUDGE, models=models, scores=tiny / "mine.csv"), n_boot=0)
    name, judge = run.scorers[3]
    assert name == f"LLM judge ({JUDGE})" and isinstance(judge, JudgeVerdicts) and judge.yes_no
    frozen = [c for c in rt_claims() if c["frozen"]]
    assert dict(judge.reasons) == {c["id"]: reason_of(c["text"], c["verdict"]) for c in frozen}
    assert dict(judge.scores) == {c["id"]: 1.0 if c["verdict"] == "yes" else 0.0 for c in frozen}
    # one scorer at a time: its own disagreements first, then by claim id
    judge_only = claim_rows(run.report, run.reported, [run.scorers[3]])
    assert judge_only[0] == ["claim_id", "source_id", "task_type", "human_supported", "judge_verdict", "judge_pass",
                             "judge_reason", "claim"]
    assert [r[0] for r in judge_only[1:]] == ["904:2", "905:1", "904:0", "904:1", "905:0", "906:0", "906:1", "906:2"]
    mine_only = claim_rows(run.report, run.reported, [run.scorers[4]])
    assert [r[0] for r in mine_only[1:]] == ["905:0", "905:1", "906:0", "904:0", "904:1", "904:2", "906:1", "906:2"]
    assert [r[4:6] for r in mine_only[1:4]] == [[0.4, False], [0.65, True], [0.2, False]]
    assert file_names(run.report) == ("ragtruth-frozen.csv", "ragtruth-frozen-claims.csv")


def test_out_that_is_a_file_is_one_error_before_any_call(tiny, double, capsys):
    taken = tiny / "taken"
    taken.write_text("")
    for argv in (["begin", "--judge", JUDGE, "--ollama-host", double.host, "--judge-cache", str(tiny / "c")],
                 ["begin"], ["ragtruth", "--frozen"], ["ragtruth", "--tuning-cv"]):
        rc, out, err = run_main(capsys, "calibrate", *argv, "--out", str(taken))
        assert (rc, out) == (1, "")
        assert err == f"error: --out {taken} is a file: name a folder for the table and the claims file\n"
    assert double.count() == 0 and taken.read_text() == ""


# --------------------------------------------------------------------------- the shared real data


def test_begin_out_on_the_real_data(tmp_path, capsys, shared_env):
    out = tmp_path / "out"
    rc, printed, err = run_main(capsys, "calibrate", "begin", "--boot", "0", "--out", str(out))
    assert rc == 0, err
    assert sorted(p.name for p in out.iterdir()) == ["begin-frozen-claims.csv", "begin-frozen.csv"]
    claims = _read(out / "begin-frozen-claims.csv")
    assert claims[0] == ["claim_id", "source_id", "task_type", "human_supported", *OURS, "claim"]
    assert len(claims) - 1 == 256  # the frozen part
    assert len({r[0] for r in claims[1:]}) == 256
    table = _read(out / "begin-frozen.csv")
    assert table[0] == list(TABLE_COLUMNS)
    assert len(table) - 1 == 12  # 3 scorers x (all + 3 corpora)
    _table_is_the_printed_one(out / "begin-frozen.csv", printed)
    # the disagreements come first: once a row where every scorer agrees is met, no disagreement follows
    agree = [all(r[k] == r[3] for k in (5, 7, 9)) for r in claims[1:]]
    assert agree.index(True) > 0 and all(agree[agree.index(True):])


def _recall_precision(rows, k):
    """Recall and precision of the hallucinated class from a claims file's human column and pass column ``k``."""
    tp = sum(r[3] == "False" and r[k] == "False" for r in rows)
    fn = sum(r[3] == "False" and r[k] == "True" for r in rows)
    fp = sum(r[3] == "True" and r[k] == "False" for r in rows)
    return f"{tp / (tp + fn):.3f}", f"{tp / (tp + fp):.3f}"


def test_ragtruth_tuning_cv_passes_reproduce_the_pooled_figures(tmp_path, capsys, shared_env):
    out = tmp_path / "out"
    rc, _, err = run_main(capsys, "calibrate", "ragtruth", "--tuning-cv", "--boot", "0", "--out", str(out))
    assert rc == 0, err
    claims = _read(out / "ragtruth-tuning-claims.csv")[1:]
    assert len(claims) == 1204 and all(r[k] in ("True", "False") for r in claims for k in (5, 7, 9))
    table = [dict(zip(TABLE_COLUMNS, r, strict=True)) for r in _read(out / "ragtruth-tuning-cv.csv")[1:]]
    for scorer, k in (("support", 5), ("plain coverage", 7), ("ROUGE-1 precision", 9)):
        row = next(r for r in table if r["scorer"] == scorer and r["task_type"] == "all")
        assert len(set(row["floor"].split())) > 1 or scorer != "support"  # the folds' floors differ
        assert _recall_precision(claims, k) == (row["recall_hallucinated"], row["precision_hallucinated"])


def test_judge_limit_writes_the_claims_of_the_subset_only(tiny, double, capsys):
    from playground.sampling import ranked

    first = ranked(["11853", "11893", "11929"], "judge-limit")[0]
    out = tiny / "out"
    rc, _, err = run_main(capsys, "calibrate", "ragtruth", "--frozen", "--judge", JUDGE, "--ollama-host", double.host,
                          "--judge-cache", str(tiny / "cache"), "--judge-limit", "1", "--boot", "0", "--out", str(out))
    assert rc == 0, err
    rows = _read(out / "ragtruth-frozen-claims.csv")
    expected = sorted(c["id"] for c in rt_claims() if c["source"] == first)
    assert sorted(r[0] for r in rows[1:]) == expected and {r[1] for r in rows[1:]} == {first}
    table = [dict(zip(TABLE_COLUMNS, r, strict=True)) for r in _read(out / "ragtruth-frozen.csv")[1:]]
    assert {r["n"] for r in table if r["task_type"] == "all"} == {str(len(expected))}


def test_a_folder_that_cannot_be_made_is_one_error_after_the_table(tiny, capsys):
    (tiny / "taken").write_text("")
    out = tiny / "taken" / "sub"
    rc, printed, err = run_main(capsys, "calibrate", "begin", "--boot", "0", "--out", str(out))
    assert rc == 1 and "scorer " in printed
    assert err.startswith(f"error: cannot write {out}: ") and len(err.splitlines()) == 1


def test_a_reason_that_a_spreadsheet_would_run_is_written_as_text(tiny, capsys):
    """The claims file is read in spreadsheets: a judge's reason starting with ``=`` gets a leading ``'``."""
    verdicts = all_verdicts()

    def reply(request):
        v = verdicts[claim_of(request)]
        return json.dumps({"claims": [{"claim": 1, "supported": v, "reason": '=HYPERLINK("http://x")'}],
                           "faithfulness": 1, "citation_accuracy": 1, "answer_relevance": 1})

    _scores(tiny, rt_claims())
    out = tiny / "out"
    with OllamaDouble(chat_reply=reply) as d:
        rc, _, err = _cli(capsys, d.host, tiny, out, "ragtruth", "--frozen")
    assert rc == 0, err
    rows = _read(out / "ragtruth-frozen-claims.csv")
    reasons = {r[rows[0].index("judge_reason")] for r in rows[1:]}
    assert reasons == {'\'=HYPERLINK("http://x")'}
