"""``--scores CSV`` (a user's own per-claim scores) and ``--write-ids FILE`` on ``calibrate ragtruth`` / ``begin``.

On the tiny data sets of tests/frozen_tiny.py: the floor is chosen on the tuning rows by hand, the frozen row's
figures computed by hand (hallucinated = positive; a score below the floor flags the claim), every CSV problem
named with its line.
"""
from __future__ import annotations

import csv
import json

import pytest
from frozen_tiny import begin_claims, rt_claims
from real_data import run_main

from playground.calibrate.outside_report import OutsideScorers, outside_report
from playground.calibrate.outside_scores import ScoresError, read_scores
from playground.calibrate.ragtruth import real_scorers


def _csv(path, rows, header=("claim_id", "score")):
    path.write_text("\n".join([",".join(header), *(",".join(map(str, r)) for r in rows)]) + "\n", encoding="utf-8")
    return path


def _figures(row):
    return (row["kappa"], row["balanced_accuracy"], row["recall_hallucinated"], row["precision_hallucinated"])


def test_floor_from_the_tuning_rows_and_the_frozen_row_by_hand(tiny):
    scores = _csv(tiny / "mine.csv", [(c["id"], c["score"]) for c in rt_claims()])
    rep = outside_report("ragtruth", OutsideScorers(scores=scores), n_boot=0)
    s = rep.scorer("mine")  # the row is named by the file stem
    # tuning: hallucinated 0.30, 0.62; supported 0.90, 0.80, 0.70, 0.64.  Balanced accuracy by floor: 0.5 up to
    # 0.30, 0.75 for 0.35-0.60, 0.875 at 0.65 and 0.70 (both hallucinated and 0.64 flagged), 0.75 at 0.75-0.80.
    # The tie 0.65 / 0.70 goes to the floor nearest the default 0.55: 0.65.
    assert s.floor == 0.65 and not s.yes_no
    # frozen at 0.65: hallucinated 0.10, 0.50 flagged (tp 2), 0.65 passes (fn 1: exactly the floor is supported);
    # supported 0.99, 0.65 (the boundary again), 0.80 pass (tn 3), 0.40 and 0.20 flagged (fp 2).
    # recall 2/3, precision 2/4, specificity 3/5, balanced accuracy 0.633333; p_o 5/8, p_e (4*3 + 4*5)/64 = 0.5,
    # kappa (0.625 - 0.5) / 0.5 = 0.25
    rows = {r["task_type"]: r for r in s.rows}
    assert _figures(rows["all"]) == (0.25, 0.6333, 0.6667, 0.5)
    # QA (904, 905): tp 1, fn 1, fp 1, tn 2: kappa (0.6 - 0.52) / 0.48
    assert _figures(rows["QA"]) == (0.1667, 0.5833, 0.5, 0.5)
    # Summary (906): 0.20 supported flagged (fp), 0.50 hallucinated flagged (tp), 0.80 supported passed (tn):
    # recall 1, precision 1/2, specificity 1/2; p_o 2/3, p_e (2*1 + 1*2)/9 = 4/9, kappa (2/9) / (5/9) = 0.4
    assert _figures(rows["Summary"]) == (0.4, 0.75, 1.0, 0.5)
    assert rep.table().query("scorer == 'mine'")["floor"].tolist() == [0.65, 0.65, 0.65]


def test_begin_scores_by_hand(tiny):
    scores = _csv(tiny / "b.csv", [(c["id"], c["score"]) for c in begin_claims()])
    rep = outside_report("begin", OutsideScorers(scores=scores, scores_name="HHEM"), n_boot=0)
    s = rep.scorer("HHEM")
    # tuning: supported 0.9, 0.8; not attributable 0.2, 0.6: balanced accuracy 1 for floors 0.65-0.80, nearest
    # 0.55 is 0.65.  Frozen: not attributable 0.3 flagged (tp), 0.7 passed (fn); attributable 0.95, 0.9 passed
    # (tn 2): recall 0.5, precision 1, balanced accuracy 0.75, kappa (0.75 - 0.5) / 0.5 = 0.5
    assert s.floor == 0.65
    assert _figures(s.rows[0]) == (0.5, 0.75, 0.5, 1.0)


def test_our_own_scores_given_back_reproduce_our_row(tiny):
    support = dict(real_scorers())["support"]
    from playground.calibrate.ragtruth import ragtruth_split

    tuning, frozen = ragtruth_split()
    path = _csv(tiny / "own.csv", [(r.example_id, repr(support(r.claim, r.context))) for r in (*tuning, *frozen)])
    rep = outside_report("ragtruth", OutsideScorers(scores=path), n_boot=100)
    assert rep.scorer("own").rows == rep.scorer("support").rows
    assert rep.scorer("own").floor == rep.scorer("support").floor


def test_on_the_shared_real_data_our_scores_given_back_reproduce_the_frozen_table(shared_env, tmp_path):
    from playground.calibrate.begin import begin_split
    from playground.calibrate.ragtruth import ragtruth_split

    plain = dict(real_scorers())["plain coverage"]
    for name, split in (("ragtruth", ragtruth_split), ("begin", begin_split)):
        tuning, frozen = split()
        path = _csv(tmp_path / f"{name}.csv", [(r.example_id, repr(plain(r.claim, r.context)))
                                               for r in (*tuning, *frozen)])
        rep = outside_report(name, OutsideScorers(scores=path), n_boot=200)
        assert rep.scorer(name).rows == rep.scorer("plain coverage").rows
        assert rep.scorer(name).floor == rep.scorer("plain coverage").floor


def test_cli_row_and_tuning_cv_needs_the_tuning_part_only(tiny, capsys):
    full = _csv(tiny / "full.csv", [(c["id"], c["score"]) for c in rt_claims()])
    rc, out, err = run_main(capsys, "calibrate", "ragtruth", "--frozen", "--scores", str(full), "--scores-name",
                            "HHEM-2.1", "--boot", "0")
    assert rc == 0, err
    assert f"HHEM-2.1: per-claim scores from {full}, floor chosen on the tuning part like ours" in out
    row = next(x for x in out.splitlines() if x.startswith("HHEM-2.1 ") and " all " in x).split()
    assert row[1:5] == ["all", "8", "3", "3"] and row[5] == "0.650" and row[6] == "0.250"
    tuning_only = _csv(tiny / "tuning.csv", [(c["id"], c["score"]) for c in rt_claims() if not c["frozen"]])
    rc, out, err = run_main(capsys, "calibrate", "ragtruth", "--tuning-cv", "--folds", "2", "--scores",
                            str(tuning_only), "--boot", "0")
    assert rc == 0, err
    assert any(x.startswith("tuning ") and " all " in x for x in out.splitlines())
    # the frozen report needs the frozen claims too
    rc, out, err = run_main(capsys, "calibrate", "ragtruth", "--frozen", "--scores", str(tuning_only))
    assert rc == 1 and out == ""
    assert err == (f"{tuning_only}: 1 problem(s)\n  line 0: no score for 8 claim(s) of the frozen part: 904:0, 904:1, "
                   "904:2, 905:0, 905:1, 906:0, 906:1, 906:2 (--write-ids FILE lists every claim to score)\n")


def test_every_problem_of_a_scores_csv_with_its_line(tiny, capsys):
    bad = tiny / "bad.csv"
    bad.write_text(
        "claim_id,claim,score\n"
        '901:0,"a claim on\ntwo lines",0.9\n'   # lines 2-3
        "901:1,x,abc\n"                          # line 4
        "902:0,x,0.8\n"                          # line 5
        "902:0,x,0.7\n"                          # line 6: duplicate
        "902:1,x,1.5\n"                          # line 7
        "999:0,x,0.5\n"                          # line 8: unknown
        ",x,0.5\n"                               # line 9
        "903:0,x,nan\n"                          # line 10
        "904:0,x,0.5\n904:1,x,0.5\n904:2,x,0.5\n905:0,x,0.5\n", encoding="utf-8")
    rc, out, err = run_main(capsys, "calibrate", "ragtruth", "--frozen", "--scores", str(bad))
    assert rc == 1 and out == ""
    assert err.splitlines() == [
        f"{bad}: 8 problem(s)",
        "  line 0: no score for 1 claim(s) of the tuning part: 903:1 (--write-ids FILE lists every claim to score)",
        "  line 0: no score for 4 claim(s) of the frozen part: 905:1, 906:0, 906:1, 906:2 (--write-ids FILE lists "
        "every claim to score)",
        "  line 4: score must be a number, got 'abc'",
        "  line 6: claim_id '902:0' is given twice (first on line 5)",
        "  line 7: score must be in [0, 1] (higher = more supported), got '1.5'",
        "  line 8: unknown claim_id '999:0': not a claim of RAGTruth's tuning or frozen part",
        "  line 9: empty claim_id",
        "  line 10: score must be finite, got 'nan'",
    ]


def test_a_bad_score_still_counts_its_id_as_given(tiny):
    bad = _csv(tiny / "b.csv", [("901:0", "x"), ("901:0", "0.5")])
    with pytest.raises(ScoresError) as exc:
        read_scores(bad, {"901:0": "tuning"}, {"901:0"})
    assert exc.value.problems == [(2, "score must be a number, got 'x'"),
                                  (3, "claim_id '901:0' is given twice (first on line 2)")]


def test_header_and_encoding_problems(tiny):
    with pytest.raises(ScoresError) as exc:
        read_scores(_csv(tiny / "h.csv", [("901:0", 0.5)], header=("id", "value")), {}, {"901:0"})
    assert exc.value.problems == [(1, "missing column 'claim_id' (the header must name claim_id and score)"),
                                  (1, "missing column 'score' (the header must name claim_id and score)")]
    raw = tiny / "latin1.csv"
    raw.write_bytes(b"claim_id,score\n901:0,0.5\n\xe9,0.1\n")
    with pytest.raises(ScoresError) as exc:
        read_scores(raw, {}, {"901:0"})
    assert exc.value.problems[0][0] == 3 and "not UTF-8" in exc.value.problems[0][1]
    with pytest.raises(ScoresError) as exc:
        read_scores(_csv(tiny / "wide.csv", [("901:0", 0.5, 7)]), {}, {"901:0"})
    assert exc.value.problems == [(2, "3 fields, more than the header's 2")]


def test_boundary_scores_zero_and_one_are_accepted(tiny):
    got = read_scores(_csv(tiny / "z.csv", [("a", 0), ("b", 1), ("c", "0.0"), ("d", "1.0")]), {"a": "tuning"},
                      {"a", "b", "c", "d"})
    assert got == {"a": 0.0, "b": 1.0, "c": 0.0, "d": 1.0}


def test_a_scores_name_of_ours_is_refused(tiny, capsys):
    full = _csv(tiny / "support.csv", [(c["id"], c["score"]) for c in rt_claims()])
    rc, out, err = run_main(capsys, "calibrate", "ragtruth", "--frozen", "--scores", str(full))
    assert (rc, out) == (1, "")
    assert err == "error: the scorer name 'support' is taken by one of ours: choose another (--scores-name)\n"


def test_write_ids_then_score_the_exported_file(tiny, capsys):
    out_csv = tiny / "to-score.csv"
    rc, out, err = run_main(capsys, "calibrate", "ragtruth", "--write-ids", str(out_csv))
    assert rc == 0, err
    assert out == (f"wrote {out_csv}: 14 RAGTruth claims to score (6 tuning, 8 frozen); give their scores back with "
                   "--scores CSV (columns claim_id, score)\n")
    with out_csv.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["claim_id", "part", "task_type", "claim", "context", "question"]
    assert [r["claim_id"] for r in rows] == [c["id"] for c in rt_claims() if not c["frozen"]] + [
        c["id"] for c in rt_claims() if c["frozen"]]
    assert rows[0] == {"claim_id": "901:0", "part": "tuning", "task_type": "QA",
                       "claim": "The museum opens at nine in the morning.",
                       "context": "Evidence for The museum opens at nine in the morning.\n\nAnother passage.",
                       "question": ""}
    assert "label" not in rows[0] and "hallucinated" not in json.dumps(rows)
    # the exported file with a score column added is a valid --scores file
    by_id = {c["id"]: c["score"] for c in rt_claims()}
    scored = tiny / "scored.csv"
    with scored.open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=[*rows[0], "score"])
        w.writeheader()
        for r in rows:
            w.writerow({**r, "score": by_id[r["claim_id"]]})
    rc, out, err = run_main(capsys, "calibrate", "ragtruth", "--frozen", "--scores", str(scored), "--boot", "0")
    assert rc == 0, err
    assert next(x for x in out.splitlines() if x.startswith("scored ") and " all " in x).split()[5:7] == [
        "0.650", "0.250"]


def test_write_ids_jsonl_for_begin(tiny, capsys):
    path = tiny / "begin.jsonl"
    rc, _, err = run_main(capsys, "calibrate", "begin", "--write-ids", str(path))
    assert rc == 0, err
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert [x["part"] for x in lines] == ["tuning"] * 4 + ["frozen"] * 4
    assert lines[4] == {"claim_id": "begin-f-1", "part": "frozen", "task_type": "wow",
                        "claim": "tea was first drunk in japan", "context": ["Tea was first drunk in China."],
                        "question": "Do you like tea?"}


def test_write_ids_goes_alone(tiny, capsys):
    rc, out, err = run_main(capsys, "calibrate", "begin", "--write-ids", str(tiny / "x.csv"), "--scores",
                            str(tiny / "y.csv"))
    assert (rc, out) == (1, "")
    assert err == "error: --write-ids writes the claims to score and exits: run it without --judge and --scores\n"
    assert not (tiny / "x.csv").exists()
