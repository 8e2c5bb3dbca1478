"""Issue 42 item 6: a test at the boundary of each trust rule that a one-line change used to survive.

Each test names the mutant it kills.  Expected values are computed by hand from the rule as documented: a
judge's share of supported claims lands on exactly 1/2 or 2/4, a score exactly at the floor, a slice of exactly
29 and 30 labels.
"""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_calibrate_gate import IDENTITY, entry, record

from playground.calibrate.record import dumps_record, load_record, record_from_report
from playground.calibrate.repeats import stability, unit_stability
from playground.calibrate.score_gate import MIN_SLICE, below_bar, gate_scores
from playground.harness import score as S
from playground.harness.corrected import corrected_rate
from playground.harness.run import _claim_rows
from playground.harness.support_rules import DEFAULT_KIND
from playground.model import Case, Claim, Response

HALF, TWO_OF_FOUR = 1 / 2, 2 / 4  # a judge's share of supported claims: exactly the threshold 0.5


def _rows(path: Path, column: str, scores: list[float]) -> Path:
    path.write_text("".join(json.dumps({"user_input": f"Q{i}?", "response": "A.", column: s}) + "\n"
                            for i, s in enumerate(scores)), encoding="utf-8")
    return path


def test_the_gate_counts_a_score_exactly_at_the_threshold_as_a_pass(tmp_path):
    """Mutant ``s >= t`` → ``s > t`` in the gate's pass rate: 4 of 8 scores sit exactly on 0.5."""
    rec = load_record(record(tmp_path))  # threshold 0.5, TPR = TNR = 1: the corrected rate is the raw rate
    run = _rows(tmp_path / "run.jsonl", "faithfulness", [HALF, TWO_OF_FOUR, HALF, TWO_OF_FOUR, 0.25, 0.0, 0.25, 0.4999])
    rate = gate_scores(run, rec, identities={"faithfulness": IDENTITY}, n_boot=50).rates["faithfulness"]
    assert (rate.raw, rate.n, rate.estimate) == (0.5, 8, 0.5)  # 4 / 8 pass; with '>' it would be 0 / 8


def test_a_rerun_verdict_exactly_at_the_threshold_is_a_pass():
    """Mutant ``>= threshold`` → ``> threshold`` in :mod:`repeats` (both the flip rate and the per-sample counts).

    a: 1/2 then 1/4 → verdicts pass, fail: m = 1 of K = 2, flip 2·1·1/(2·1) = 1, stability 1/2;
    b: 2/4 twice → pass, pass: m = 2, flip 0, stability 1; c: 1/4 twice: m = 0, flip 0.
    flip rate (1 + 0 + 0)/3, one unstable sample; with '>' every verdict is a fail: flip rate 0."""
    runs = [{"a": {"j": HALF}, "b": {"j": TWO_OF_FOUR}, "c": {"j": 0.25}},
            {"a": {"j": 0.25}, "b": {"j": TWO_OF_FOUR}, "c": {"j": 0.25}}]
    assert stability(runs, ["j"], 0.5) == {"j": {"k": 2, "n_units": 3, "unstable_units": 1, "flip_rate": 1 / 3,
                                                 "mean_stability": (0.5 + 1 + 1) / 3}}
    assert unit_stability(runs, "j", 0.5) == {"a": (1, 2), "b": (2, 2), "c": (0, 2)}


def _report(seed: object) -> SimpleNamespace:
    return SimpleNamespace(sample_seed=seed, dataset="qa", who="consensus", human_threshold=0.5, metrics=[])


def test_a_record_is_uniform_random_only_with_a_sample_seed():
    """Mutant ``"uniform_random": seeded`` → ``True``: a record without --sample-seed must say False, and the gate
    then refuses its scorer (its first reason)."""
    unseeded = record_from_report(_report(None), {})
    assert unseeded["sample"]["seed"] is None and unseeded["sample"]["uniform_random"] is False
    assert unseeded["sample"]["rule"] == "every labelled sample (not a drawn sample)"
    seeded = record_from_report(_report(0), {})  # seed 0 is a seed (falsy, but given)
    assert seeded["sample"] == {"seed": "0", "uniform_random": True, "unit": "sample",
                                "rule": "longest labelled prefix of playground.sampling.ranked(case ids, seed)"}
    uniform = bool(unseeded["sample"]["uniform_random"])
    assert below_bar(entry(), uniform) == "its labels are not a drawn random sample (calibrate with --sample-seed)"


def test_the_gate_refuses_a_scorer_whose_record_is_not_a_drawn_sample(tmp_path):
    """Mutant ``uniform = bool(record["sample"]["uniform_random"])`` → ``True`` in the gate: the only shortfall of
    this record is its sample, so that must be the whole reason, and the gate checks nothing."""
    run = _rows(tmp_path / "run.jsonl", "faithfulness", [0.9] * 6 + [0.1] * 4)
    ident = {"faithfulness": IDENTITY}
    drawn = gate_scores(run, load_record(record(tmp_path)), identities=ident, n_boot=50)
    assert drawn.advisory == {} and drawn.gated == ["faithfulness"]
    result = gate_scores(run, load_record(record(tmp_path, uniform=False)), identities=ident, n_boot=50)
    assert result.advisory == {"faithfulness": "its labels are not a drawn random sample (calibrate with "
                                               "--sample-seed)"}
    assert result.gated == [] and result.verdict == "INCONCLUSIVE"


@pytest.mark.parametrize(("passed", "n", "flip", "k_eff", "n_eff"), [
    (60, 200, 0.25, 30, 100),  # N·(1 − 2·0.25) = 100 effective samples, p = 0.3 kept
    (40, 160, 0.1, 32, 128),   # 160·(1 − 2·0.1) = 128, p = 0.25 kept
])
def test_the_flip_rate_widens_the_run_to_n_times_one_minus_two_phi(passed, n, flip, k_eff, n_eff):
    """Mutants of ``N·(1 − 2φ)``: the run's p* is drawn from Beta(p·N_eff + ½, (1 − p)·N_eff + ½); with the same
    seed a run of N_eff samples and no flips draws the very same numbers, so the intervals are equal."""
    wide = corrected_rate(passed, n, (80, 90), (50, 60), seed=3, n_boot=400, flip_rate=flip)
    ref = corrected_rate(k_eff, n_eff, (80, 90), (50, 60), seed=3, n_boot=400)
    plain = corrected_rate(passed, n, (80, 90), (50, 60), seed=3, n_boot=400)
    assert (wide.low, wide.high) == pytest.approx((ref.low, ref.high), abs=1e-9)
    assert wide.high - wide.low > plain.high - plain.low


def _gate_context_precision(tmp_path: Path, db: Path, result: Path) -> None:
    """The gate on ``context_precision`` against the ``relevant`` labels, with a record of it (exit 0 asserted)."""
    from playground.cli import main

    body = json.loads(record(tmp_path).read_text())
    body["scorers"][0].update(column="context_precision", dimension="relevant",
                              identity={**IDENTITY, "name": "context_precision"})
    (tmp_path / "record.json").write_text(dumps_record(body))
    assert main(["harness", "gate", "--scores", str(result), "--record", str(tmp_path / "record.json"),
                 "--dataset", "qa", "--db", str(db), "--scorer-version", "ragas 0.4.3", "--boot", "50",
                 "--sample-seed", "2"]) == 0


def _case(case_type: str = "answerable") -> Case:
    return Case(case_id="c1", case_type=case_type, tenant="t", query="How long is the refund window?", history=(),
                expected_sources=(), reference_answer="The refund window is 30 days.", reference_facts=())


def test_the_harness_labels_a_claim_at_exactly_the_floor_supported_and_correct():
    """Mutants ``sup >= floor`` / ``corr >= cfloor`` → ``>``: a support of exactly 0.70 (2 of 415 shipped claims)
    is supported (label 1); one just under is not.  Correctness is the claim's own score, used as the floor."""
    text = "The refund window is 30 days."
    response = Response(response_id="r1", case_id="c1", variant="v", text=text)
    claims = [Claim("r1", 0, text, 0, len(text)), Claim("r1", 1, text, 0, len(text))]
    corr = S.correctness(text, _case().reference_answer, [], kind=DEFAULT_KIND)
    assert corr > 0
    config = {"scoring.support_floor": 0.70, "scoring.correctness_floor": corr, "scoring.kind": DEFAULT_KIND}
    rows = _claim_rows(_case(), response, claims, [0.70, 0.6999], config)  # type: ignore[arg-type]
    assert [(r["support"], r["supported"]) for r in rows] == [(0.7, 1), (0.6999, 0)]
    assert [r["correct"] for r in rows] == [1, 1]  # correctness exactly at the floor
    above = _claim_rows(_case(), response, claims[:1], [0.70],
                        {**config, "scoring.correctness_floor": corr + 1e-9})  # type: ignore[arg-type]
    assert above[0]["correct"] == 0


@pytest.mark.parametrize(("labelled", "ppi"), [(29, False), (30, True)])
def test_the_ppi_slice_needs_exactly_thirty_labels(tmp_path, capsys, labelled, ppi):
    """Mutants of ``len(cs.sample) < MIN_SLICE`` (``<=``, 29, 31): a labelled prefix of 29 gives the Rogan–Gladen
    correction, one of exactly 30 the PPI++ estimate (its line is marked ``(PPI++)``)."""
    from calibration_data import case_ids, label_samples, make_labelled

    from playground.sampling import ranked

    assert MIN_SLICE == 30
    db, result, human, _scores = make_labelled(tmp_path, 60, label_every=0)
    cases = case_ids(db, "qa")
    label_samples(db, "qa", {c: human[cases.index(c)] for c in ranked(cases, "2")[:labelled]})
    _gate_context_precision(tmp_path, db, result)
    (line,) = [x for x in capsys.readouterr().out.splitlines() if x.startswith("context_precision")]
    assert line.startswith("context_precision (PPI++)") is ppi


def test_the_pages_queue_and_view_progress_count_a_unit_only_with_every_dimension(tmp_path):
    """Mutants of ``Navigation.queue_progress`` / ``view_progress`` (ui/session_navigation.py), not of
    ``assign.queue_progress``: a claim with one of its two dimensions answered is a labelled pair, not a labelled
    unit.  The lesson of GC-0036: 5 passages (relevant), 3 responses of 2 claims (supported, correct) and 2 facts
    (covered): 17 units, 5 + 12 + 6 = 23 pairs; one view (passages + R1) holds 9 units and 5 + 4 + 2 = 11 pairs."""
    from playground.datasets import open_dataset
    from playground.golden import load_dataset
    from playground.lessons import make_lesson
    from playground.store import open_store
    from playground.ui.session import LabelSession, compute_harness

    dataset = load_dataset()
    hits, results = compute_harness(dataset)
    with open_store(tmp_path / "l.db") as s:
        s.save_lesson(make_lesson("week-1", open_dataset(None), ["GC-0036"]))
    page = LabelSession(dataset, open_store(tmp_path / "l.db"), annotator="ana", harness_results=results, hits=hits)
    try:
        assert page.queue_progress() is None  # no queue yet
        assert page.use_queue() == "week-1"
        units = page.queue_units
        passage, r1_claim, r2_claim = units[0], units[5], units[9]
        assert (r1_claim.startswith("GC-0036-R1:c0"), r2_claim.startswith("GC-0036-R2:c0")) == (True, True)
        page.set_label(passage, "relevant", 0)  # a "no" is an answer
        page.set_label(r1_claim, "supported", 1)  # one of two dimensions
        page.set_label(r2_claim, "supported", 1)
        page.set_label(r2_claim, "correct", 0)
        q = page.queue_progress()
        assert (q.case_id, q.labelled_units, q.total_units, q.labelled_pairs, q.total_pairs) == ("", 2, 17, 4, 23)
        page.go_to("GC-0036", "GC-0036-R1")
        v = page.view_progress()
        assert (v.case_id, v.labelled_units, v.total_units, v.labelled_pairs, v.total_pairs) == (
            "GC-0036", 1, 9, 2, 11)
        other = page.view_progress("GC-0036", "GC-0036-R2")  # a view not on screen
        assert (other.labelled_units, other.total_units, other.labelled_pairs, other.total_pairs) == (2, 9, 3, 11)
    finally:
        page.store.close()


def _span(trace: str, span: str, parent: str | None, kind: str, start: int, **attrs: object) -> str:
    """One span in Phoenix's span JSON (nested attributes)."""
    return json.dumps({"name": kind.lower(), "context": {"trace_id": trace, "span_id": span}, "parent_id": parent,
                       "span_kind": kind, "start_time": f"2026-01-01T00:00:{start:02d}+00:00",
                       "end_time": f"2026-01-01T00:00:{start + 1:02d}+00:00",
                       "attributes": {"openinference": {"span": {"kind": kind}}, **attrs}})


def _docs(*ids: str) -> list[dict]:
    return [{"document": {"id": i, "content": f"Passage {i} text.", "score": 0.5}} for i in ids]


TRACE, ROOT = "1" * 32, "a" * 16
RET_A, RET_B, RERANK_X, RERANK_Y = "b" * 16, "c" * 16, "d" * 16, "e" * 16


def test_document_position_is_the_place_in_its_own_retriever_spans_list(tmp_path):
    """Mutants of the document position with two retriever spans: passages come in span start order, and each
    keeps its 0-based place in *its own* span's list (B's first document is position 0, not 2)."""
    from playground.datasets import open_dataset
    from playground.importers.trace_export import trace_annotations
    from playground.importers.traces import import_traces
    from playground.store import open_store

    spans = tmp_path / "spans.jsonl"
    spans.write_text("\n".join([  # B is written first but starts later
        _span(TRACE, RET_B, ROOT, "RETRIEVER", 3, retrieval={"documents": _docs("d3")}),
        _span(TRACE, ROOT, None, "CHAIN", 1, input={"value": "Q?"}, output={"value": "A."}),
        _span(TRACE, RET_A, ROOT, "RETRIEVER", 2, retrieval={"documents": _docs("d1", "d2")}),
    ]) + "\n", encoding="utf-8")
    with open_store(tmp_path / "l.db") as store:
        import_traces(spans, "rag", store)
        opened = open_dataset("rag", store)
        (sample,) = opened.payload["samples"]
        assert sample["context_ids"] == ["d1", "d2", "d3"]
        assert sample["extra"]["documents"] == [[RET_A, 0, 0.5], [RET_A, 1, 0.5], [RET_B, 0, 0.5]]
        passages = [u for u in opened.units() if u.unit_kind == "passage"]
        assert [u.text for u in passages] == ["Passage d1 text.", "Passage d2 text.", "Passage d3 text."]
        for unit, value in zip(passages, (1, 0, 1), strict=True):
            store.set_label("ana", unit, "relevant", value)
        rows = trace_annotations(opened, store, "ana").documents
    assert [(r["span_id"], r["document_position"], r["label"], r["_doc_id"]) for r in rows] == [
        (RET_A, 0, "relevant", "d1"), (RET_A, 1, "irrelevant", "d2"), (RET_B, 0, "relevant", "d3")]


def test_the_passages_are_the_last_rerankers_output(tmp_path):
    """Mutants of "the last reranker": with two RERANKER spans the passages are the output of the one that
    started last (Y: d1 only), not the first's (X: d3, d1) nor the retriever's three."""
    from playground.errors import Problem
    from playground.importers.traces import read_traces

    spans = tmp_path / "spans.jsonl"
    spans.write_text("\n".join([  # Y is written before X but starts after it
        _span(TRACE, ROOT, None, "CHAIN", 1, input={"value": "Q?"}, output={"value": "A."}),
        _span(TRACE, RERANK_Y, ROOT, "RERANKER", 4, reranker={"output_documents": _docs("d1")}),
        _span(TRACE, RET_A, ROOT, "RETRIEVER", 2, retrieval={"documents": _docs("d1", "d2", "d3")}),
        _span(TRACE, RERANK_X, ROOT, "RERANKER", 3, reranker={"output_documents": _docs("d3", "d1")}),
    ]) + "\n", encoding="utf-8")
    problems: list[Problem] = []
    (sample,) = read_traces(spans, problems).samples
    assert problems == []
    assert (sample.contexts, sample.context_ids) == (("Passage d1 text.",), ("d1",))
    assert sample.extra["documents"] == [[RERANK_Y, 0, 0.5]]


def _floor_data(n_cases: int, yes: int = 10, no: int = 10) -> tuple[dict, dict, dict]:
    """``yes`` units scoring exactly 0.70 labelled yes, ``no`` units scoring 0.30 labelled no, spread round-robin
    over ``n_cases`` cases: (scores, cases, labels)."""
    units = [f"y{i}" for i in range(yes)] + [f"n{i}" for i in range(no)]
    scores = {u: 0.70 if u[0] == "y" else 0.30 for u in units}
    cases = {u: f"case-{i % n_cases}" for i, u in enumerate(units)}
    return scores, cases, {u: int(u[0] == "y") for u in units}


def test_floors_from_labels_need_two_cases():
    """Mutants of ``n_cases < 2``: 10 of each class in exactly one case is the default; in two it is calibrated."""
    from playground.harness.dataset_floors import calibrate_floor

    one = calibrate_floor("support_floor", *_floor_data(1), kind="qa", default=0.7)
    assert (one.source, one.floor, one.cases) == ("default", 0.7, 1)
    assert one.note.endswith("calibrating needs at least 10 of each class in at least 2 cases")
    two = calibrate_floor("support_floor", *_floor_data(2), kind="qa", default=0.5)
    # every floor of (0.30, 0.70] separates the classes; the tie goes to the one nearest the default 0.5
    assert (two.source, two.floor, two.cases, two.positives, two.negatives) == ("labels", 0.5, 2, 10, 10)
    nine = calibrate_floor("support_floor", *_floor_data(2, yes=9), kind="qa", default=0.5)
    assert nine.source == "default"


def test_a_held_out_score_exactly_at_the_fold_floor_is_predicted_yes():
    """Mutant ``scores[test] >= f`` → ``>`` in the cross-validation: with the default 0.7 every fold chooses 0.70,
    and every held-out "yes" scores exactly 0.70, so the held-out prediction is perfect: kappa 1, balanced
    accuracy 1 (with '>' every yes would be predicted no: kappa 0, balanced accuracy 0.5)."""
    from playground.harness.dataset_floors import calibrate_floor

    got = calibrate_floor("support_floor", *_floor_data(10), kind="qa", default=0.7)
    assert (got.source, got.floor) == ("labels", 0.7)
    assert all(f in (0.7, None) for f in got.fold_floors) and 0.7 in got.fold_floors
    assert (got.cv_kappa, got.cv_balanced_accuracy) == (1.0, 1.0)


def test_the_consensus_label_wins_over_the_majority_and_a_tie_is_left_out():
    """Mutants of :func:`human_labels`: the adjudicated ``consensus`` label wins over a 2–0 majority; a 1–1 tie is
    left out; the harness's own label never counts; another dimension is ignored."""
    from playground.harness.dataset_floors import human_labels

    def lb(who: str, unit: str, value: int, dim: str = "supported") -> SimpleNamespace:
        return SimpleNamespace(annotator=who, unit_id=unit, value=value, dimension=dim)

    labels = [lb("consensus", "u1", 0), lb("ana", "u1", 1), lb("bo", "u1", 1),  # consensus written first
              lb("ana", "u2", 1), lb("bo", "u2", 0),  # a tie
              lb("ana", "u3", 0), lb("bo", "u3", 0), lb("cy", "u3", 1),  # majority no
              lb("harness", "u4", 1), lb("ana", "u4", 0, "correct"),  # nothing that counts
              lb("ana", "u5", 1), lb("bo", "u5", 0), lb("consensus", "u5", 1)]  # a tie adjudicated
    assert human_labels(labels, "supported") == {"u1": 0, "u3": 0, "u5": 1}


def test_tags_of_an_old_text_stay_stale_after_a_re_verdict(tmp_path):
    """Mutants dropping the text-hash check on tags (``failure_mode_table``, ``verdict_summary``): ana failed the
    response and tagged it; its text changed and she failed it again without tagging.  It is judged (1 of 1) and
    tagged with nothing: the old tags belong to a text that is gone."""
    from playground.store import open_store
    from playground.verdicts import failure_mode_table, response_unit, verdict_summary

    old = response_unit("GC-0001", "GC-0001-R1", "The old answer.")
    new = response_unit("GC-0001", "GC-0001-R1", "The new answer.")
    assert old.unit_id == new.unit_id and old.text_hash != new.text_hash
    with open_store(tmp_path / "l.db") as store:
        store.set_label("ana", old, "pass", 0)
        store.set_tags("ana", old, ["hallucination"])
        store.set_label("ana", new, "pass", 0)  # the re-verdict, on the new text
        for who in ("ana", None):
            rows = failure_mode_table(store, [new], who)
            assert [(r.name, r.responses_tagged, r.responses_judged) for r in rows] == [("hallucination", 0, 1)]
            assert verdict_summary(store, [new], who) == {"GC-0001-R1": (0, 1, ())}
        assert [(r.name, r.responses_tagged) for r in failure_mode_table(store, [old], "ana")] == [
            ("hallucination", 0)]  # and on the old text the verdict is stale: not judged, so not tagged


def test_an_old_instructor_cookie_is_refused_on_a_server_without_that_key():
    """Mutants of ``role_of(user) not in self.role_keys`` in ``RoleIdentityProvider.user_from_cookie``: a login
    cookie made where an instructor key existed opens nothing on a server started with the class key alone; a
    student cookie still works there."""
    from playground.serving import auth

    try:
        auth.take_keys({"PLAYGROUND_SERVE_TOKEN": "s-key", "PLAYGROUND_INSTRUCTOR_TOKEN": "i-key"})
        before = auth.RoleIdentityProvider()
        instructor = before.user_to_cookie(before._user("instructor"))
        student = before.user_to_cookie(before._user("student"))
        assert auth.role_of(before.user_from_cookie(instructor)) == "instructor"
        auth.take_keys({"PLAYGROUND_SERVE_TOKEN": "s-key"})  # restarted without the instructor key
        after = auth.RoleIdentityProvider()
        assert after.auth_enabled and set(after.role_keys) == {"student"}
        assert after.user_from_cookie(instructor) is None
        assert auth.role_of(after.user_from_cookie(student)) == "student"
    finally:
        auth.take_keys({})


def test_a_lesson_of_another_dataset_is_refused_by_name_and_never_followed_as_the_newest(tmp_path):
    """Mutants of ``lesson.dataset != dataset`` (``lesson_for_page``) and of the dataset filter of
    ``latest_lesson``: ``?lesson=`` naming another dataset's lesson is an error listing only this dataset's
    lessons; without a name the newest lesson *of this dataset* is followed, even when another's is newer."""
    import dataclasses

    from playground.datasets import open_dataset
    from playground.lessons import LessonError, lesson_for_page, make_lesson
    from playground.store import open_store

    with open_store(tmp_path / "l.db") as store:
        golden = make_lesson("week-1", open_dataset(None), ["GC-0036"])
        store.save_lesson(golden)
        store.save_lesson(dataclasses.replace(golden, name="alpha-1", dataset="alpha"))  # saved later
        assert sorted((x.name, x.dataset) for x in store.lessons()) == [("alpha-1", "alpha"), ("week-1", "golden")]
        with pytest.raises(LessonError) as err:
            lesson_for_page(store, "golden", "alpha-1")
        assert str(err.value) == "no lesson named 'alpha-1' for the dataset golden (known: week-1)"
        with pytest.raises(LessonError) as err:
            lesson_for_page(store, "beta", "week-1")
        assert str(err.value) == "no lesson named 'week-1' for the dataset beta (known: none)"
        assert lesson_for_page(store, "golden", "week-1").name == "week-1"
        assert lesson_for_page(store, "golden").name == "week-1"
        assert lesson_for_page(store, "alpha").name == "alpha-1"
        assert lesson_for_page(store, "beta") is None


def test_the_slices_verdict_counts_a_score_exactly_at_the_threshold_as_a_pass(tmp_path, capsys):
    """Mutant ``v >= threshold`` → ``>`` in the PPI++ slice's verdicts: 20 of 60 samples score exactly 1/2, the
    rest 0.1; the run's raw pass rate is 20/60 = 0.333 (with '>' it would be 0.000)."""
    from calibration_data import case_ids, label_samples, make_labelled, write_rows

    from playground.sampling import ranked

    db, result, human, _scores = make_labelled(tmp_path, 60, label_every=0)
    cases = case_ids(db, "qa")
    label_samples(db, "qa", {c: human[cases.index(c)] for c in ranked(cases, "2")[:30]})
    rows = [json.loads(line) for line in result.read_text().splitlines()]
    write_rows(result, [{**r, "context_precision": HALF if i < 20 else 0.1} for i, r in enumerate(rows)])
    _gate_context_precision(tmp_path, db, result)
    (line,) = [x for x in capsys.readouterr().out.splitlines() if x.startswith("context_precision (PPI++)")]
    assert line.split()[2] == "0.333"


def test_a_ragtruth_floor_rule_takes_precision_and_recall_exactly_at_their_bars():
    """``choose_by_rule`` (calibrate/floor_rules.py): precision exactly 0.30 qualifies (the highest qualifying
    floor wins), recall exactly 0.55 is enough.  Hand-counted, rule ``mixture`` (every claim):

    * 3 hallucinated claims at 0.1, 7 supported at 0.3, 5 supported at 0.9; grid {0.2, 0.5}: at 0.2 the 3 are
      flagged alone (precision 1, recall 1), at 0.5 also the 7: precision 3/10 = 0.30 → floor 0.5;
    * 11 of 20 hallucinated at 0.1, 1 at exactly 0.5 (not flagged: score < floor), 8 at 0.9, 5 supported at
      0.9; grid {0.5}: recall 11/20 = 0.55, precision 1."""
    from playground.calibrate.floor_rules import MIN_RECALL, TARGET_PRECISION, choose_by_rule

    assert (MIN_RECALL, TARGET_PRECISION) == (0.55, 0.30)
    scores = [0.1] * 3 + [0.3] * 7 + [0.9] * 5
    supported = [False] * 3 + [True] * 12
    got = choose_by_rule("mixture", scores, supported, [True] * 15, [0.2, 0.5])
    assert (got.floor, got.recall, got.precision) == (0.5, 1.0, 0.3)
    scores = [0.1] * 11 + [0.5] + [0.9] * 8 + [0.9] * 5  # the claim at exactly 0.5 is not flagged (score < floor)
    supported = [False] * 20 + [True] * 5
    got = choose_by_rule("mixture", scores, supported, [True] * 25, [0.5])
    assert (got.floor, got.recall, got.precision) == (0.5, 0.55, 1.0)
