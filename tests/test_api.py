"""The library on plain data (``import playground as pg``): one call per question, checked by hand.

Expected values are hand-computed counts, or intervals from statsmodels (the reference implementation of the
Wilson interval); the API must give what the core computes from the same labels, whichever form they come in.
"""
from __future__ import annotations

import doctest
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

import playground as pg
from playground.model import Label

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
NOTEBOOK = REPO / "notebooks" / "library.ipynb"

#: Three supported of five claims, one relevant of two passages, nothing on correctness or coverage.
LABELS = [
    {"unit_id": "c1", "dimension": "supported", "value": 1},
    {"unit_id": "c2", "dimension": "supported", "value": 1},
    {"unit_id": "c3", "dimension": "supported", "value": 0},
    {"unit_id": "c4", "dimension": "faithfulness", "value": 1},  # the evaluation name of the same dimension
    {"unit_id": "c5", "dimension": "supported", "value": 0},
    {"unit_id": "p1", "dimension": "relevant", "value": 1},
    {"unit_id": "p2", "dimension": "context_relevance", "value": 0},
]


def test_the_package_lists_its_api_and_loads_it_lazily():
    assert set(pg.__all__) >= {"rates", "diagnose", "agreement", "calibrate", "load_dataset", "score",
                               "Rates", "Calibration", "REPO_ROOT", "__version__"}
    assert all(hasattr(pg, name) for name in pg.__all__)
    probe = ("import sys, json, playground; "
             "print(json.dumps(sorted(m for m in ('pandas', 'playground.api', 'playground.calibrate', 'numpy')"
             " if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == []  # `import playground` loads none of them
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        pg.nope  # noqa: B018


def test_rates_from_dicts_frames_and_labels_agree_with_the_wilson_reference():
    r = pg.rates(LABELS)
    assert list(r) == ["context_relevance", "faithfulness", "correctness", "coverage"]
    f = r["faithfulness"]
    assert (f.successes, f.n, f.rate) == (3, 5, 0.6)
    low, high = proportion_confint(3, 5, alpha=0.05, method="wilson")
    assert f.low == pytest.approx(low, abs=1e-12) and f.high == pytest.approx(high, abs=1e-12)
    assert (r["context_relevance"].successes, r["context_relevance"].n) == (1, 2)
    assert r["correctness"].n == 0 and r["correctness"].rate is None
    assert pg.rates(pd.DataFrame(LABELS)) == r
    objects = [Label("a", "claim", x["unit_id"], pg.api.TO_LABEL[x["dimension"]], x["value"]) for x in LABELS]
    assert pg.rates(objects) == r
    frame = r.to_frame()
    assert list(frame["n"]) == [2, 5, 0, 0] and list(frame["successes"]) == [1, 3, 0, 0]
    assert r.summary().splitlines()[1] == "faithfulness        60.0%  (95% CI 23.1%-88.2%), 3 of 5"
    assert r.summary().splitlines()[2].endswith("no data")


def test_rates_refuse_bad_records_naming_the_record():
    with pytest.raises(ValueError, match=r"record 2: unknown dimension 'helpful'"):
        pg.rates([LABELS[0], {"unit_id": "x", "dimension": "helpful", "value": 1}])
    with pytest.raises(ValueError, match=r"record 1: no 'value'"):
        pg.rates([{"unit_id": "x", "dimension": "supported"}])
    with pytest.raises(ValueError, match="two labels for unit 'c1'"):
        pg.rates([LABELS[0], LABELS[0]])


def test_diagnose_takes_labels_or_rates():
    by_labels = pg.diagnose(LABELS)
    assert by_labels.summary() == pg.diagnose(pg.rates(LABELS)).summary()
    assert [f.dimension for f in by_labels.failures] == ["faithfulness"]  # 0.6 < 0.70
    assert by_labels.borderline == ["context_relevance"]  # 0.5 >= 0.50, interval below
    assert by_labels.no_data == ["correctness", "coverage"]
    assert [f.dimension for f in pg.diagnose(LABELS, {"faithfulness": 0.6}).failures] == []


def test_agreement_on_mappings_and_on_records():
    a = pg.agreement({"u1": 1, "u2": 0, "u3": 1, "u5": 0}, {"u1": 1, "u2": 1, "u4": 0, "u5": 0})
    assert (a.n_shared, a.only_a, a.only_b) == (3, 1, 1)
    assert a.confusion == ((1, 1), (0, 1))  # rows human (0, 1), columns automatic
    assert a.disagreements == [("u2", 0, 1)]
    human = [{"unit_id": "c1", "dimension": "supported", "value": 1},
             {"unit_id": "c1", "dimension": "correct", "value": 0},
             {"unit_id": "c2", "dimension": "supported", "value": 0}]
    auto = [{"unit_id": "c1", "dimension": "supported", "score": 0.9, "label": 1},
            {"unit_id": "c1", "dimension": "correct", "score": 0.8, "label": 1},
            {"unit_id": "c2", "dimension": "supported", "score": 0.1, "label": 0}]
    both = pg.agreement(human, auto)
    assert both.n_shared == 3 and both.disagreements == [(("c1", "correct"), 0, 1)]
    one = pg.agreement(human, auto, dimension="faithfulness")
    assert one.n_shared == 2 and one.percent == 1.0


def test_load_dataset_reads_a_file_without_a_store(tmp_path, monkeypatch):
    from playground.importers.load import prepare_units

    monkeypatch.setenv("PLAYGROUND_DB", str(tmp_path / "never.db"))
    ds = pg.load_dataset(FIXTURES / "ragas_single.jsonl", name="demo")
    _, units = prepare_units(FIXTURES / "ragas_single.jsonl", "ragas", "demo")
    assert [u.unit_id for u in ds.units()] == [u.unit_id for u in units] and len(units) == 14
    labelled = set(pd.read_csv(FIXTURES / "ragas_single.labels.csv")["unit_id"])
    assert labelled <= {u.unit_id for u in ds.units()}  # the hand-made labels name these very units
    assert pg.load_dataset(FIXTURES / "ragas_single.jsonl").name == "ragas-single"
    assert not (tmp_path / "never.db").exists()
    with pytest.raises(FileNotFoundError, match=r"nope\.jsonl: no such file"):
        pg.load_dataset(tmp_path / "nope.jsonl")


def test_load_dataset_by_name_from_a_store(tmp_path):
    from playground.datasets import DatasetNotFound
    from playground.importers.load import import_dataset
    from playground.store import open_store

    db = tmp_path / "labels.db"
    with open_store(db) as store:
        import_dataset(FIXTURES / "ragas_single.jsonl", "ragas", "demo", store)
    assert len(pg.load_dataset("demo", store=str(db)).units()) == 14
    with pytest.raises(DatasetNotFound, match="no dataset named 'other'"):
        pg.load_dataset("other", store=str(db))


SCORES = [  # supported: 0.9 0.8 0.4 0.2 -> labels 1 1 0 0 at 0.5; human 1 0 0 0
    {"unit_id": "c1", "dimension": "supported", "score": 0.9},
    {"unit_id": "c2", "dimension": "faithfulness", "score": 0.8},
    {"unit_id": "c3", "dimension": "supported", "score": 0.4},
    {"unit_id": "c4", "dimension": "supported", "score": 0.2},
]
HUMAN = [{"unit_id": f"c{i}", "dimension": "supported", "value": v} for i, v in zip((1, 2, 3, 4), (1, 0, 0, 0),
                                                                                        strict=True)]


def test_calibrate_results_object():
    cal = pg.calibrate(SCORES, HUMAN, folds=2)
    row = cal.to_frame().iloc[0]
    assert (row["dimension"], row["n"]) == ("supported", 4)
    assert (row["h0a0"], row["h0a1"], row["h1a0"], row["h1a1"]) == (2, 1, 0, 1)
    # kappa by hand: p_o = 3/4; p_e = (3/4)(2/4) + (1/4)(2/4) = 1/2; (0.75 - 0.5) / 0.5
    assert row["kappa"] == 0.5 and row["threshold"] == 0.5
    assert cal.summary().splitlines()[0] == "scorer against human"
    assert "supported n=4" in cal.summary()
    strict = pg.calibrate(SCORES, HUMAN, thresholds={"faithfulness": 0.85}, folds=2).to_frame().iloc[0]
    assert (strict["h0a0"], strict["h0a1"], strict["h1a0"], strict["h1a1"]) == (3, 0, 0, 1)
    assert {"comparison", "thresholds", "ppi", "sweep_supported"} <= set(cal.tables())


def test_calibrate_plot_draws_one_panel_per_dimension():
    import matplotlib

    matplotlib.use("Agg")
    fig = pg.calibrate(SCORES, HUMAN, folds=2).plot()
    assert [ax.get_title() for ax in fig.axes] == ["supported"]
    assert pg.rates(LABELS).plot().get_xlim() == (0.0, 1.0)


def test_calibrate_is_the_package_and_the_function():
    from playground import calibrate as C

    assert C is pg.calibrate and callable(C) and C.compare.__module__ == "playground.calibrate.comparison"


def test_the_module_examples_run():
    import playground.api

    result = doctest.testmod(playground.api, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert (result.attempted, result.failed) == (7, 0)  # every ">>>" example of playground.api ran


def test_score_and_calibrate_on_a_ragas_file():
    ds = pg.load_dataset(FIXTURES / "ragas_single.jsonl", name="demo")
    scores = pg.score(ds)
    # supported: the shipped floor of qa text (harness.score.DEFAULT_SUPPORT_FLOORS), issue 26
    assert scores.attrs["thresholds"] == {"supported": 0.55, "correct": 0.7, "relevant": 0.5, "covered": 0.5}
    assert len(scores) == 19 and set(scores["dimension"]) == {"relevant", "supported", "correct", "covered"}
    human = pd.read_csv(FIXTURES / "ragas_single.labels.csv")
    a = pg.agreement(human, scores)
    assert (a.n_shared, a.only_a, a.only_b) == (17, 0, 2)
    assert pg.calibrate(scores, human).to_frame()["n"].tolist() == [6, 5, 3, 3]


def test_notebook_is_short_and_stripped():
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    lines = [ln for c in code for ln in "".join(c["source"]).splitlines() if ln.strip()]
    assert len(lines) < 15 and "import playground as pg" in lines
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code)


@pytest.mark.slow
def test_notebook_executes(tmp_path, monkeypatch):
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.setenv("PLAYGROUND_DB", str(tmp_path / "never.db"))
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel's inline backend draws the figure
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.get("name") == "stdout")
    assert text.startswith("14 units; 17 labels\n") and "supported n=5" in text
    assert any("image/png" in o.get("data", {}) for o in outputs)
    assert not (tmp_path / "never.db").exists()
