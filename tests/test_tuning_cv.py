"""Tuning-only grouped cross-validation (``calibrate ragtruth --tuning-cv``, ``calibrate begin --tuning-cv``)."""
from __future__ import annotations

import json

import pytest
from real_data import run_main as _cli

from playground.calibrate.frozen import Item, tuning_cv
from playground.sampling import fold_of
from playground.stats import balanced_accuracy, cohens_kappa


def _sources_in_two_folds(n: int) -> tuple[list[str], list[str]]:
    """``n`` source ids of fold 0 and ``n`` of fold 1 under ``fold_of(s, 2, 0)``."""
    zero, one = [], []
    i = 0
    while len(zero) < n or len(one) < n:
        s = f"src{i}"
        (zero if fold_of(s, 2, 0) == 0 else one).append(s)
        i += 1
    return zero[:n], one[:n]


def test_floor_is_chosen_on_the_other_fold_and_predictions_pooled():
    z, o = _sources_in_two_folds(2)
    # fold 0: supported at 0.7, hallucinated at 0.5 -> any floor in (0.5, 0.7] separates it
    # fold 1: supported at 0.9, hallucinated at 0.65 -> any floor in (0.65, 0.9] separates it
    items = [Item("a", (), True, z[0], "QA"), Item("b", (), False, z[1], "QA"),
             Item("c", (), True, o[0], "Summary"), Item("d", (), False, o[1], "Summary")]
    scores = {"a": 0.7, "b": 0.5, "c": 0.9, "d": 0.65}
    rep = tuning_cv("T", items, [("s", lambda c, ctx: scores[c])], grid=[0.6, 0.7, 0.8], default=0.6,
                    folds=2, n_boot=0)
    s = rep.scorer("s")
    # fold 0 is predicted with the floor chosen on fold 1: 0.7 and 0.8 separate {0.9, 0.65}; 0.7 nearest 0.6
    # fold 1 with the floor chosen on fold 0: 0.6 and 0.7 separate {0.7, 0.5}; 0.6 is the default
    assert s.fold_floors == (0.7, 0.6)
    # held out: a 0.7 >= 0.7 passed (the boundary is supported), b 0.5 flagged, c 0.9 passed, d 0.65 passed
    overall = s.rows[0]
    human, pred = [1, 0, 1, 0], [1, 0, 1, 1]
    assert overall["n"] == 4 and overall["hallucinated"] == 2 and overall["sources"] == 4
    assert overall["recall_hallucinated"] == 0.5
    assert overall["precision_hallucinated"] == 1.0
    assert overall["balanced_accuracy"] == pytest.approx(balanced_accuracy(human, pred), abs=1e-4) == 0.75
    assert overall["kappa"] == pytest.approx(cohens_kappa(human, pred).kappa, abs=1e-4) == 0.5
    assert [r["task_type"] for r in s.rows] == ["all", "QA", "Summary"]
    assert rep.table()["floor"].iloc[0] == "0.7 0.6"
    assert (rep.n, rep.hallucinated, rep.sources, rep.folds) == (4, 2, 4, 2)


def test_parts_add_one_slice_row_each_after_the_task_types():
    z, o = _sources_in_two_folds(2)
    items = [Item("a", (), True, z[0], "QA"), Item("b", (), False, z[1], "QA"),
             Item("c", (), True, o[0], "QA"), Item("d", (), False, o[1], "QA")]
    scores = {"a": 0.9, "b": 0.1, "c": 0.9, "d": 0.1}
    rep = tuning_cv("T", items, [("s", lambda c, ctx: scores[c])], grid=[0.5], default=0.5, folds=2, n_boot=0,
                    parts=["file x", "file y", "file y", "file y"])
    rows = rep.scorer("s").rows
    assert [(r["task_type"], r["n"], r["hallucinated"]) for r in rows] == [
        ("all", 4, 2), ("QA", 4, 2), ("file x", 1, 0), ("file y", 3, 2)]
    assert rows[2]["balanced_accuracy"] is None  # one class only in that slice: undefined, not a number
    with pytest.raises(ValueError, match="parts has 1 labels for 4 items"):
        tuning_cv("T", items, [], grid=[0.5], default=0.5, folds=2, parts=["x"])


def test_a_fold_whose_training_part_has_one_class_says_so():
    z, o = _sources_in_two_folds(2)
    items = [Item("a", (), True, z[0], "QA"), Item("b", (), False, z[1], "QA"),
             Item("c", (), True, o[0], "QA"), Item("d", (), True, o[1], "QA")]
    rep = tuning_cv("T", items, [("s", lambda c, ctx: 0.5)], grid=[0.5], default=0.5, folds=2, n_boot=0)
    s = rep.scorer("s")
    assert s.fold_floors == (None, 0.5)
    assert s.reason == "fold 0: the tuning part has one class only (supported)"
    assert s.rows[0]["n"] == 2  # fold 0's items are left out, fold 1's are kept


def test_fewer_than_two_folds_is_an_error():
    with pytest.raises(ValueError, match="at least 2 folds"):
        tuning_cv("T", [], [], grid=[0.5], default=0.5, folds=1)


def test_ragtruth_tuning_cv_reads_the_tuning_part_only(capsys, shared_env, monkeypatch):
    from playground.calibrate import splits

    frozen = splits.frozen_sources("ragtruth")
    seen: set[str] = set()
    real = tuning_cv

    def spy(dataset, items, *a, **kw):
        seen.update(i.source for i in items)
        return real(dataset, items, *a, **kw)

    monkeypatch.setattr("playground.calibrate.frozen.tuning_cv", spy)
    rc, out, err = _cli(capsys, "calibrate", "ragtruth", "--tuning-cv", "--boot", "20")
    assert rc == 0, err
    assert "RAGTruth, tuning part only (1204 claims, 113 hallucinated (9.4%), 78 sources)" in out
    assert seen and not (seen & frozen)
    # the per-file slices: claims.jsonl's 334 claims and the other 870 tuning claims
    assert "file claims.jsonl             334   63" in out
    assert "file validation-sample.jsonl  870   50" in out
    for name in ("support", "plain coverage", "ROUGE-1 precision"):
        assert name in out


def test_begin_tuning_cv_counts(capsys, shared_env):
    rc, out, err = _cli(capsys, "calibrate", "begin", "--tuning-cv", "--boot", "20")
    assert rc == 0, err
    assert "BEGIN, tuning part only (357 responses, 236 hallucinated (66.1%), 257 sources)" in out


@pytest.mark.parametrize("argv", [["ragtruth", "--tuning-cv", "--frozen"],
                                  ["ragtruth", "--tuning-cv", "--save-floors", "f.json"],
                                  ["begin", "--tuning-cv", "--save-floors", "f.json"]])
def test_tuning_cv_refuses_options_it_cannot_honour(capsys, shared_env, argv):
    rc, _out, err = _cli(capsys, "calibrate", *argv)
    assert rc == 1
    assert err.startswith("error: ") and "Traceback" not in err


def test_save_floors_without_frozen_runs_the_calibration_once(tmp_path, capsys, shared_env, monkeypatch):
    import playground.calibrate as C

    calls = []
    real = C.calibrate_ragtruth

    def counted(*a, **kw):
        calls.append(1)
        return real(*a, **kw)

    monkeypatch.setattr(C, "calibrate_ragtruth", counted)
    floors = tmp_path / "floors.json"
    rc, out, err = _cli(capsys, "calibrate", "ragtruth", "--boot", "20", "--save-floors", str(floors))
    assert rc == 0, err
    assert len(calls) == 1
    doc = json.loads(floors.read_text(encoding="utf-8"))
    best = next(ln for ln in out.splitlines() if ln.startswith("support scorer: default floor"))
    assert f"best floor in-sample by balanced accuracy {doc['floors']['faithfulness']:g}," in best


# --------------------------------------------------------------------------- per kind of text (tuning_kinds)


def test_roc_auc_equals_sklearn_and_counts_ties_one_half():
    import numpy as np
    from sklearn.metrics import roc_auc_score

    from playground.calibrate.tuning_kinds import roc_auc

    # by hand: supported {0.9, 0.5}, hallucinated {0.5, 0.1}: pairs (0.9>0.5) (0.9>0.1) (0.5=0.5: 1/2) (0.5>0.1)
    assert roc_auc([0.9, 0.5, 0.5, 0.1], [True, True, False, False]) == 3.5 / 4
    rng = np.random.default_rng(0)
    for _ in range(5):
        s = np.round(rng.random(60), 1)  # many ties
        y = rng.random(60) < 0.4
        assert roc_auc(s, y.tolist()) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert roc_auc([0.1, 0.2], [True, True]) is None


@pytest.mark.slow
def test_goals_and_kind_ablation_read_the_tuning_part_only(capsys, shared_env, monkeypatch):
    from playground.calibrate import splits, tuning_kinds

    frozen = splits.frozen_sources("ragtruth") | splits.frozen_sources("begin")
    seen: set[str] = set()
    real = tuning_kinds.kind_items

    def spy(part="tuning"):
        out = real(part)
        for _, items in out.values():
            seen.update(i.source for i in items)
        return out

    monkeypatch.setattr(tuning_kinds, "kind_items", spy)
    rc, out, err = _cli(capsys, "calibrate", "goals")
    assert rc == 0, err
    assert seen and not (seen & frozen)
    lines = {line.split("  ")[0].strip(): line for line in out.splitlines()}
    # n and hallucinated per data set: the tuning part's counts (RAGTruth 1,204 claims, 113 hallucinated)
    assert lines["RAGTruth QA"].split()[4:6] == ["583", "62"]
    assert lines["RAGTruth Summary"].split()[4:6] == ["621", "51"]
    assert lines["BEGIN"].split()[3:5] == ["357", "236"]
    rc, out, err = _cli(capsys, "calibrate", "ablation", "--tuning-cv")
    assert rc == 0, err
    assert seen and not (seen & frozen)
    assert "RAGTruth QA       qa        with speaker" in out and "BEGIN             dialogue  without speaker" in out
