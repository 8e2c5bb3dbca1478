"""The labelling page scores an imported dataset's claims with the rules of the dataset's kind of text (issue 26)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from playground.datasets import open_dataset
from playground.harness.config import load_config
from playground.harness.run_dataset import run_dataset
from playground.importers.load import import_dataset
from playground.store import open_store
from playground.ui.session import session_for_dataset

#: One dialogue turn: "I" is content no passage holds for dialogue (the speaker rule), not for qa.
#: Content tokens: I, think, store, sells, jeans (dialogue: 3 of 5 present = 0.6), averaged with ROUGE-1
#: precision (i think the store sells jeans: 4 of 6) by the rouge rule: 19/30, the page's 6 decimals 0.633333;
#: qa drops the speaker items and has no rouge rule: think, store, sells, jeans (3 of 4 = 0.75).
ROW = {"user_input": "Do they sell jeans?", "retrieved_contexts": ["The store sells jeans."],
       "response": "I think the store sells jeans."}


@pytest.fixture(autouse=True)
def kept_in_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv("PLAYGROUND_CACHE", str(tmp_path / "cache"))


def _import(tmp_path: Path, text_kind: str):
    (tmp_path / "d.jsonl").write_text(json.dumps(ROW) + "\n", encoding="utf-8")
    store = open_store(tmp_path / "labels.db")
    import_dataset(tmp_path / "d.jsonl", "ragas", "turns", store, text_kind=text_kind)
    opened = open_dataset("turns", store)
    (claim,) = [u for u in opened.catalog().values() if u.unit_kind == "claim"]
    return store, opened, claim


def _page(store):
    session = session_for_dataset(open_dataset("turns", store), store)
    session.reveal_all = True
    return session


@pytest.mark.parametrize(("text_kind", "score", "label"), [("dialogue", 0.633333, 0), ("qa", 0.75, 1)])
def test_the_page_scores_claims_with_the_datasets_kind(tmp_path, text_kind, score, label):
    """dialogue: 19/30 below its shipped floor 0.75, not supported; qa: 0.75 at or above 0.55, supported."""
    store, _, claim = _import(tmp_path, text_kind)
    try:
        session = _page(store)
        session.build_case(claim.case_id)
        assert session.text_kind == text_kind
        assert session.auto_detail(claim.unit_id, "supported") == {"label": label, "score": score, "key": None}
        assert round(session.evidence(claim.unit_id).score, 6) == score
    finally:
        store.close()


def test_a_run_on_a_dialogue_dataset_keeps_what_the_page_reads(tmp_path):
    store, opened, claim = _import(tmp_path, "dialogue")
    try:
        run_dataset(load_config(), opened, tmp_path / "run", progress=False)  # before the page ever opens
        page = _page(store)
        page.build_case(claim.case_id)
        assert page.harness is not None and (page.harness.read, page.harness.computed) == (1, 0)
        assert page.auto_detail(claim.unit_id, "supported")["score"] == 0.633333
    finally:
        store.close()


def test_with_text_kind_sets_the_kind_and_its_floor_only_where_the_configuration_keeps_the_shipped_one():
    from playground.harness import score as S
    from playground.harness.run_dataset import with_text_kind

    base = load_config()
    assert with_text_kind(base, {}).data == base.data  # qa: the default configuration as it is
    dialogue = with_text_kind(base, {"text_kind": "dialogue"})
    floor = S.DEFAULT_SUPPORT_FLOORS["dialogue"]
    assert (dialogue["scoring.kind"], dialogue["scoring.support_floor"]) == ("dialogue", floor)
    own = load_config()
    own.data["scoring"] = {**own.data["scoring"], "support_floor": 0.6}  # set by the configuration: kept
    assert with_text_kind(own, {"text_kind": "dialogue"})["scoring.support_floor"] == 0.6
