"""A session on a dataset of the label store is built per case on demand and shows what an eager one shows."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from playground.datasets import StoredPassages, open_dataset
from playground.importers.core import build_dataset
from playground.importers.load import import_dataset
from playground.store import UNSURE, Assignment, open_store
from playground.ui.harness_cache import CaseHarness, dataset_fingerprint
from playground.ui.session import LabelSession, session_for_dataset, unit_counts
from playground.ui.session_catalog import claim_dimensions

FIX = Path(__file__).resolve().parent / "fixtures"
WORDS = ("retry", "webhook", "invoice", "tenant", "region", "backup", "latency", "token", "quota", "plan")


@pytest.fixture(autouse=True)
def kept_in_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv("PLAYGROUND_CACHE", str(tmp_path / "cache"))


def write_samples(path: Path, n: int, twist: str = "") -> Path:
    """``n`` RAGAS samples: 1–3 contexts, 1–3 response sentences, a reference on every other one."""
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            w = [WORDS[(i + k) % len(WORDS)] for k in range(4)]
            row = {"user_input": f"How does the {w[0]} {w[1]} work for account {i}?",
                   "retrieved_contexts": [f"The {w[j]} {w[j + 1]} lasts {j + 2} days for account {i}."
                                          for j in range(1 + i % 3)],
                   "response": " ".join(f"The {w[j]} {w[j + 1]} lasts {j + 2 + i % 2} days{twist}."
                                        for j in range(1 + (i + 1) % 3))}
            if i % 2 == 0:
                row["reference"] = f"The {w[0]} {w[1]} lasts 2 days. Ask support about the {w[2]}."
            fh.write(json.dumps(row) + "\n")
    return path


@pytest.fixture
def imported(tmp_path):
    store = open_store(tmp_path / "labels.db")
    import_dataset(write_samples(tmp_path / "s.jsonl", 12), "ragas", "big", store)
    yield store
    store.close()


def eager(opened, store, **kw) -> LabelSession:
    """Every case built at start: the harness on every case (``compute_harness``), as before."""
    return LabelSession(opened.dataset, store, passages=dict(opened.passages), dataset_name=opened.name, **kw)


def label_some(store, opened, who="alice"):
    """Labels on three of the twelve cases: yes, no and unsure, on every kind of unit."""
    units = opened.catalog()
    cases = sorted(opened.dataset.cases)
    mine = [u for u in units.values() if u.case_id in (cases[3], cases[4], cases[9])]
    for i, unit in enumerate(mine):
        for d in unit.dimensions:
            store.set_label(who, unit, d, (1, 0, UNSURE)[i % 3])
    return {cases[3], cases[4], cases[9]}


def test_a_store_dataset_builds_only_the_cases_touched(imported):
    opened = open_dataset("big", imported)
    cases = sorted(opened.dataset.cases)
    touched = label_some(imported, opened)
    s = session_for_dataset(opened, imported)
    assert s.built_cases == [cases[0]]  # the case on screen
    s.set_annotator("alice")
    assert s.built_cases == sorted({cases[0]} | touched)  # and every case holding one of alice's labels
    s.go_to(cases[7])
    assert s.built_cases == sorted({cases[0], cases[7]} | touched)
    # the list's counts are counted, not built: 12 rows with the eager session's totals
    full = eager(opened, imported, annotator="alice")
    assert [(r.case_id, r.total_units, r.total_pairs, r.labelled_units) for r in s.cases()] == [
        (r.case_id, r.total_units, r.total_pairs, r.labelled_units) for r in full.cases()]
    assert len(s.built_cases) == 5 and len(s.catalog) == len(full.catalog) == len(opened.units())
    # a unit looked up by id builds its case; the verdict filter needs every case
    unit = next(u for u in opened.units() if u.case_id == cases[11])
    assert s.catalog[unit.unit_id] == unit and cases[11] in s.built_cases
    assert len(s.built_cases) == 6
    for kind in ("claim", "fact", "passage"):  # ids <response>:c0:..., <response>::F1, <case>::<passage>
        unit = next(u for u in opened.units() if u.unit_kind == kind and u.case_id not in s.built_cases)
        before = s.built_cases
        assert unit.unit_id in s.catalog and s.built_cases == sorted([*before, unit.case_id])
    assert "big:nothing::x" not in s.catalog and len(s.built_cases) == 9
    s.reveal_all = True  # the verdict filter is offered only with the harness shown
    s.set_filter(verdict="REVIEW")
    assert s.built_cases == cases


def test_lazy_gives_the_eager_session_on_every_unit(imported):
    opened = open_dataset("big", imported)
    label_some(imported, opened)
    label_some(imported, opened, "bob")
    a = eager(opened, imported, annotator="alice")
    b = session_for_dataset(opened, imported)
    b.set_annotator("alice")
    # scores, agreement, progress and the export before anything else is built
    assert b.scores() == a.scores()
    assert b.agreement()["faithfulness"].n_shared > 0
    assert b.export_rows("all") == a.export_rows("all") and len(a.export_rows("all")) > 0
    assert b.annotator_progress() == a.annotator_progress()
    assert b.next_unlabelled() == a.next_unlabelled()
    # every row but the verdicts of cases not built yet (empty until the verdict filter asks for them)
    assert [replace(r, verdicts=()) for r in b.cases()] == [replace(r, verdicts=()) for r in a.cases()]
    assert [r.verdicts for r in b.cases() if r.case_id in b.built_cases] == [
        r.verdicts for r in a.cases() if r.case_id in b.built_cases]
    # then every unit: the same units, automatic labels, scores, keys, decisions and views
    b.build_all()
    # the dataset's units, but a claim of a case without a reference asks only "supported" on the page
    asked = {uid: replace(u, dimensions=claim_dimensions(opened.dataset.cases[u.case_id]))
             if u.unit_kind == "claim" else u for uid, u in opened.catalog().items()}
    assert dict(b.catalog) == dict(a.catalog) == asked
    assert (b.auto, b.auto_score, b.key, b.decisions) == (a.auto, a.auto_score, a.key, a.decisions)
    for cid in a.case_ids:
        a.go_to(cid)
        b.go_to(cid)
        assert b.view_units() == a.view_units() and b.scores() == a.scores()
        assert b.case_row(cid) == a.case_row(cid)
        assert b.decision() == a.decision() and b.response_name(b.response_id) == a.response_name(a.response_id)
    # a toggle in each: the same change and the same scores
    claim = a.view_units("claim")[0].unit.unit_id
    assert a.set_label(claim, "supported", 0) is not None and b.set_label(claim, "supported", 0) is None
    b.refresh_case()
    assert b.scores() == a.scores()


def test_lazy_consensus_dashboard_matches(imported, tmp_path):
    opened = open_dataset("big", imported)
    label_some(imported, opened)
    label_some(imported, opened, "bob")
    unit = next(u for u in opened.units() if u.case_id == sorted(opened.dataset.cases)[4])
    imported.set_label("carol", unit, unit.dimensions[0], 0)
    ro = open_store(tmp_path / "labels.db", read_only=True)
    a = eager(opened, ro)
    b = session_for_dataset(opened, ro)
    assert b.annotator is None and b.scores() == a.scores() and b.ties == a.ties
    assert len(b.built_cases) == 4
    assert b.export_rows("consensus") == a.export_rows("consensus")
    ro.close()


def test_kept_results_are_read_and_a_new_revision_is_never_read_stale(imported, tmp_path):
    opened = open_dataset("big", imported)
    first = session_for_dataset(opened, imported)
    assert first.harness_source == "per case on demand, kept on disk: 0 read, 1 computed"
    again = session_for_dataset(open_dataset("big", imported), imported)
    assert again.harness_source == "per case on demand, kept on disk: 1 read, 0 computed"
    assert again.results == first.results
    # the same file with other response text, imported over it: another revision, nothing read
    import_dataset(write_samples(tmp_path / "t.jsonl", 12, " or more"), "ragas", "big", imported, replace=True)
    changed = open_dataset("big", imported)
    assert changed.revision != opened.revision
    fresh = session_for_dataset(changed, imported)
    assert fresh.harness_source == "per case on demand, kept on disk: 0 read, 1 computed"
    cid = fresh.case_ids[0]
    assert fresh.results[cid] != first.results[cid]
    assert fresh.results[cid] == eager(changed, imported).results[cid]
    from playground.harness.config import load_config

    config = load_config()
    assert dataset_fingerprint("big", changed.revision, config) != dataset_fingerprint("big", opened.revision, config)
    assert dataset_fingerprint("other", opened.revision, config) != dataset_fingerprint("big", opened.revision, config)


def test_a_damaged_or_misplaced_case_row_is_never_trusted(imported, tmp_path):
    from playground.harness.config import load_config

    opened = open_dataset("big", imported)
    config = load_config()
    key = dataset_fingerprint("big", opened.revision, config)
    harness = CaseHarness(opened.dataset, opened.passages, config, key)
    a, b = sorted(opened.dataset.cases)[:2]
    right = harness.result(a)
    harness.result(b)
    kept_b = harness.cases.get(b)
    assert kept_b is not None and harness.cases.path is not None
    assert harness.cases.path.name == "cases.sqlite" and oct(harness.cases.path.stat().st_mode & 0o777) == "0o600"
    assert harness.cases.put([(a, kept_b)])  # b's result under a's id: names the wrong case
    fresh = CaseHarness(opened.dataset, opened.passages, config, key)
    assert fresh.result(a) == right and (fresh.read, fresh.computed) == (0, 1)
    assert harness.cases.put([(a, "{not json")])
    fresh = CaseHarness(opened.dataset, opened.passages, config, key)
    assert fresh.result(a) == right and (fresh.read, fresh.computed) == (0, 1)
    assert CaseHarness(opened.dataset, opened.passages, config, key).result(a) == right  # rewritten, read


def test_every_case_of_a_revision_is_in_one_file(imported):
    from playground.harness.config import load_config

    opened = open_dataset("big", imported)
    config = load_config()
    harness = CaseHarness(opened.dataset, opened.passages, config, dataset_fingerprint("big", opened.revision, config))
    for case_id in sorted(opened.dataset.cases):
        harness.result(case_id)
    assert harness.files.folder is not None
    assert sorted(p.name for p in harness.files.folder.iterdir() if not p.name.startswith("cases.sqlite-")) == [
        "cases.sqlite"]
    assert (harness.read, harness.computed) == (0, 12)


def test_an_unwritable_cache_folder_still_computes(imported, tmp_path, monkeypatch):
    from playground.harness.config import load_config

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("PLAYGROUND_CACHE", str(blocker))
    opened = open_dataset("big", imported)
    config = load_config()
    harness = CaseHarness(opened.dataset, opened.passages, config, dataset_fingerprint("big", opened.revision, config))
    case_id = sorted(opened.dataset.cases)[0]
    assert harness.result(case_id) == harness.result(case_id) and (harness.read, harness.computed) == (0, 2)
    assert harness.describe() == "per case on demand, not kept (cache off): 0 read, 2 computed"


def test_cache_off_still_computes(imported, monkeypatch):
    monkeypatch.setenv("PLAYGROUND_CACHE", "off")
    s = session_for_dataset(open_dataset("big", imported), imported)
    assert s.harness_source == "per case on demand, not kept (cache off): 0 read, 1 computed"


@pytest.mark.parametrize("fixture, kind", [("ragas_single.jsonl", "ragas"), ("ragas_multi.jsonl", "ragas"),
                                           ("deepeval_goldens.json", "deepeval")])
def test_stored_passages_and_counts_are_what_build_dataset_and_the_units_give(tmp_path, fixture, kind):
    with open_store(tmp_path / "l.db") as store:
        import_dataset(FIX / fixture, kind, "d", store)
        stored = store.dataset("d")
        opened = open_dataset("d", store)
    assert stored is not None and isinstance(opened.passages, StoredPassages)
    dataset, passages = build_dataset(stored.payload, opened.dataset.root)
    assert dict(opened.passages) == passages and opened.dataset == dataset
    assert opened.units() == dataset.units(passages)
    expected: dict[str, list[int]] = {}
    for u in dataset.units(passages):
        c = expected.setdefault(u.case_id, [0, 0])
        c[0] += 1
        # the page asks a claim of a case without a reference only "supported" (claim_dimensions)
        c[1] += len(claim_dimensions(dataset.cases[u.case_id]) if u.unit_kind == "claim" else u.dimensions)
    assert unit_counts(opened.dataset, opened.passages) == {cid: expected.get(cid, [0, 0]) for cid in dataset.cases}
    with pytest.raises(KeyError):
        opened.passages["d:no such case"]


def test_undo_of_a_change_on_a_case_not_built_yet(imported):
    opened = open_dataset("big", imported)
    s = session_for_dataset(opened, imported, config=None)
    s.set_annotator("alice")
    far = sorted(opened.dataset.cases)[8]
    unit = next(u for u in opened.units() if u.case_id == far and u.unit_kind == "claim")
    other_tab = session_for_dataset(opened, imported)
    other_tab.set_annotator("alice")
    other_tab.set_label(unit.unit_id, "supported", 1)
    assert far not in s.built_cases
    change = s.undo()
    assert change is not None and (change.unit_id, change.case_id, change.new) == (unit.unit_id, far, None)
    assert far in s.built_cases and s.label(unit.unit_id, "supported") is None
    assert imported.labels(annotator="alice") == []


def test_a_harness_run_of_the_dataset_keeps_what_the_page_reads(imported, tmp_path):
    from playground.harness.config import load_config
    from playground.harness.run_dataset import run_dataset

    opened = open_dataset("big", imported)
    report = run_dataset(load_config(), opened, tmp_path / "run", progress=False)
    s = session_for_dataset(open_dataset("big", imported), imported)
    s.reveal_all = True
    s.set_filter(verdict="ACCEPT")  # every case's decision: all read, none scored
    assert s.harness is not None and (s.harness.read, s.harness.computed) == (12, 0)
    assert s.results == eager(opened, imported).results
    assert report["dataset"]["name"] == "big"
    other = load_config()
    other.data["scoring"] = {**other.data["scoring"], "correctness_floor": 0.99}
    run_dataset(other, opened, tmp_path / "run2", progress=False)  # another configuration: not the page's
    folders = sorted(p.name for p in (tmp_path / "cache").iterdir())
    assert folders == [f"dataset-{dataset_fingerprint('big', opened.revision, load_config())}"]


def test_the_case_list_follows_every_change(imported):
    s = session_for_dataset(open_dataset("big", imported), imported)
    s.set_annotator("alice")
    cid = s.case_ids[5]
    before = {r.case_id: r for r in s.cases()}
    assert before[cid].labelled_pairs == 0 and s.set_filter(status="partial") == []
    s.go_to(cid)
    unit = s.view_units("passage")[0].unit
    s.set_label(unit.unit_id, "relevant", 1)
    assert [r.case_id for r in s.cases()] == [cid]  # the filter's list, recomputed after the label
    s.set_filter()
    assert {r.case_id: r.labelled_pairs for r in s.cases()}[cid] == 1
    s.undo()
    assert {r.case_id: r.labelled_pairs for r in s.cases()}[cid] == 0 and s.set_filter(status="partial") == []


def test_a_queue_over_cases_not_built_yet_is_walked_as_in_an_eager_session(imported):
    opened = open_dataset("big", imported)
    units = opened.units()
    picked = [units[-1].unit_id, units[len(units) // 2].unit_id, units[3].unit_id, "big:gone::x"]
    imported.save_assignment(Assignment("q", "queue", "big", 1, 1, {"alice": tuple(picked)}))
    a = eager(opened, imported, annotator="alice")
    b = session_for_dataset(opened, imported)
    b.set_annotator("alice")
    assert b.use_queue() == a.use_queue() == "q"
    assert b.queue == a.queue and len(b.queue) == 3 and b.queue_units == a.queue_units == picked[:3]
    assert b.queue_progress() == a.queue_progress()
    assert b.next_unlabelled() == a.next_unlabelled() and b.next_case() == a.next_case()


def test_the_page_lists_a_window_of_a_big_dataset_around_the_case_on_screen(tmp_path):
    """250 cases: the page's list holds 200 of them, around the case on screen; the note says which."""
    from playground.ui.views import PlaygroundApp

    store = open_store(tmp_path / "labels.db")
    try:
        import_dataset(write_samples(tmp_path / "s.jsonl", 250), "ragas", "wide", store)
        session = session_for_dataset(open_dataset("wide", store), store)
        app = PlaygroundApp(session, annotator=None, chart=False)
        order = [r.case_id for r in session.cases()]
        assert len(order) == 250
        assert [cid for _, cid in app.case_list.options] == order[:200] and app.case_list.value == order[0]
        assert "250 of 250 cases shown (the list holds 1–200, around this case)" in app.list_note.value
        session.go_to(order[240])
        app.render_list()
        assert [cid for _, cid in app.case_list.options] == order[50:]   # 240 - 100 = 140 > 250 - 200: the end
        assert app.case_list.value == order[240]
        assert "(the list holds 51–250, around this case)" in app.list_note.value
        assert session.built_cases == sorted([order[0], order[240]])  # listing built only the two cases shown
    finally:
        store.close()
