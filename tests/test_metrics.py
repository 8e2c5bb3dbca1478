"""Tests of playground.metrics: hand-computed expectations, edge cases, properties.

Wilson intervals below use z = 1.959964 (z^2 = 3.841459).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from playground.metrics import (
    CAUSES,
    COMPOSITE_LABEL,
    DEFAULT_THRESHOLDS,
    DIMENSION_ORDER,
    DimensionRate,
    RateCounter,
    agreement,
    composite,
    diagnose,
    hit_at_k,
    multi_rater,
    ndcg_at_k,
    precision_at_k,
    rate_from_counts,
    rates_by_group,
    rates_from_labels,
    recall_at_k,
    reciprocal_rank,
    retrieval_scores,
    retrieval_summary,
)
from playground.model import Label

approx = pytest.approx
KIND = {"relevant": "passage", "supported": "claim", "correct": "claim", "covered": "fact"}


def lab(unit_id, dimension, value, annotator="ann"):
    return Label(annotator, KIND[dimension], unit_id, dimension, value)


def labels_with(counts):
    """Labels giving ``{label_dimension: (successes, n)}``; unit ids ``<dim><i>``."""
    out = []
    for dim, (s, n) in counts.items():
        out += [lab(f"{dim}{i}", dim, int(i < s)) for i in range(n)]
    return out


# --------------------------------------------------------------------------- rates


def test_dimension_order():
    assert DIMENSION_ORDER == ("context_relevance", "faithfulness", "correctness", "coverage")


def test_rates_from_labels_hand_computed():
    labels = labels_with({"relevant": (3, 10), "supported": (0, 4), "covered": (5, 5)})
    r = rates_from_labels(labels)
    assert list(r) == list(DIMENSION_ORDER)
    # context relevance 3/10 = .3, Wilson (.107791, .603222)
    cr = r["context_relevance"]
    assert (cr.successes, cr.n, cr.rate) == (3, 10, 0.3)
    assert (cr.low, cr.high) == approx((0.107791, 0.603222), abs=1e-5)
    # faithfulness 0/4: centre = (z^2/8)/(1 + z^2/4) = .480182/1.960365 = .244945 = half
    f = r["faithfulness"]
    assert f.rate == 0.0 and f.low == 0.0 and f.high == approx(0.489891, abs=1e-5)
    # correctness: no labels -> no data, not 0%
    c = r["correctness"]
    assert not c.has_data and c.n == 0 and c.rate is None and c.low is None and c.high is None
    # coverage 5/5: (1 - .434482, 1) where 0/5 upper = 2*(z^2/10)/(1 + z^2/5) = .434482
    cov = r["coverage"]
    assert cov.rate == 1.0 and cov.high == 1.0 and cov.low == approx(0.565518, abs=1e-5)


def test_supported_and_correct_are_separate():
    # one claim, supported by the context but wrong against the reference
    r = rates_from_labels([lab("c1", "supported", 1), lab("c1", "correct", 0)])
    assert r["faithfulness"].rate == 1.0 and r["correctness"].rate == 0.0


def test_rates_from_labels_empty():
    r = rates_from_labels([])
    assert list(r) == list(DIMENSION_ORDER) and not any(x.has_data for x in r.values())


def test_rates_from_labels_validation():
    with pytest.raises(ValueError, match="unknown label dimension 'faithfulness'"):
        rates_from_labels([Label("a", "claim", "u", "faithfulness", 1)])
    with pytest.raises(ValueError, match="must be 0 or 1, got 2"):
        rates_from_labels([lab("u", "supported", 2)])
    with pytest.raises(ValueError, match="two labels for unit 'u'"):
        rates_from_labels([lab("u", "supported", 1), lab("u", "supported", 0, "other")])


def test_rates_from_labels_duck_typed():
    @dataclass
    class L:
        dimension: str
        value: int

    r = rates_from_labels([L("relevant", 1), L("relevant", 0), L("relevant", 1)])
    assert (r["context_relevance"].successes, r["context_relevance"].n) == (2, 3)


def test_rate_from_counts_validation():
    with pytest.raises(ValueError, match="unknown dimension"):
        rate_from_counts("relevance", 1, 2)
    with pytest.raises(ValueError):
        rate_from_counts("coverage", 3, 2)


def test_rates_by_group_sorted():
    case_of = {"b1": "case-b", "b2": "case-b", "a1": "case-a"}
    labels = [lab("b1", "relevant", 1), lab("b2", "relevant", 0), lab("a1", "supported", 1)]
    by = rates_by_group(labels, lambda x: case_of[x.unit_id])
    assert list(by) == ["case-a", "case-b"]
    assert by["case-b"]["context_relevance"].rate == 0.5
    assert not by["case-b"]["faithfulness"].has_data
    assert by["case-a"]["faithfulness"].rate == 1.0
    # pooled = counts over the selection (micro-average): relevance 1/2, faithfulness 1/1
    pooled = rates_from_labels(labels)
    assert pooled["context_relevance"].rate == 0.5 and pooled["faithfulness"].rate == 1.0


label_strategy = st.lists(
    st.tuples(st.integers(0, 30), st.sampled_from(["relevant", "supported", "correct", "covered"]),
              st.integers(0, 1)),
    max_size=80, unique_by=lambda t: (t[0], t[1]))


@settings(max_examples=150, deadline=None)
@given(label_strategy)
def test_rates_in_unit_interval_and_interval_contains_rate(rows):
    r = rates_from_labels([lab(f"u{u}", d, v) for u, d, v in rows])
    for d, x in r.items():
        assert x.dimension == d
        if x.has_data:
            assert 0.0 <= x.low <= x.rate <= x.high <= 1.0
        else:
            assert x.rate is None and x.low is None and x.high is None


# --------------------------------------------------------------------------- RateCounter


def test_rate_counter_set_change_remove():
    rc = RateCounter({"u1": "c1", "u2": "c1", "u3": "c2"})
    rc.set("u1", "relevant", 1)
    rc.set("u2", "relevant", 0)
    rc.set("u3", "relevant", 1)
    assert rc.counts()["context_relevance"] == (2, 3)
    rc.set("u2", "relevant", 1)  # change
    assert rc.counts()["context_relevance"] == (3, 3)
    assert rc.counts("c1")["context_relevance"] == (2, 2)
    rc.set("u1", "relevant", None)  # remove
    assert rc.counts()["context_relevance"] == (2, 2) and len(rc) == 2
    assert rc.get("u1", "relevant") is None and rc.get("u2", "relevant") == 1
    rc.set("u1", "relevant", None)  # removing twice is a no-op
    assert rc.rates("c1")["context_relevance"].rate == 1.0
    assert rc.groups() == ["c1", "c2"]
    rc.set("u3", "relevant", None)
    assert rc.groups() == ["c1"]
    assert not rc.rates("c2")["context_relevance"].has_data  # emptied group: no data
    assert not rc.rates("never-labelled")["coverage"].has_data


def test_rate_counter_errors():
    rc = RateCounter({"u1": "c1"})
    with pytest.raises(ValueError, match="has no group"):
        rc.set("zz", "relevant", 1)
    with pytest.raises(ValueError, match="unknown label dimension"):
        rc.set("u1", "relevance", 1)
    with pytest.raises(ValueError, match="0 or 1"):
        rc.set("u1", "relevant", 3)
    with pytest.raises(ValueError, match="no grouping"):
        RateCounter().rates(group="c1")


def test_rate_counter_callable_grouping():
    rc = RateCounter(lambda unit_id: unit_id.split(":")[0])
    rc.set("c1:p1", "relevant", 1)
    rc.set("c2:p1", "relevant", 0)
    assert rc.rates("c1")["context_relevance"].rate == 1.0
    assert rc.rates_by_group().keys() == {"c1", "c2"}


ops_strategy = st.lists(
    st.tuples(st.integers(0, 12), st.sampled_from(["relevant", "supported", "correct", "covered"]),
              st.sampled_from([0, 1, None])),
    max_size=120)


@settings(max_examples=150, deadline=None)
@given(ops_strategy)
def test_rate_counter_matches_full_recount(ops):
    group_of = {f"u{i}": f"c{i % 3}" for i in range(13)}
    rc = RateCounter(group_of)
    state = {}
    for u, d, v in ops:
        rc.set(f"u{u}", d, v)
        if v is None:
            state.pop((f"u{u}", d), None)
        else:
            state[(f"u{u}", d)] = v
    labels = [lab(u, d, v) for (u, d), v in sorted(state.items())]
    assert rc.rates() == rates_from_labels(labels)
    by = rates_by_group(labels, lambda x: group_of[x.unit_id])
    assert rc.rates_by_group() == by
    assert RateCounter.from_labels(labels, group_of).rates() == rc.rates()


# --------------------------------------------------------------------------- composite


def rates_of(**kw):
    """Rates from ``dimension=(successes, n)``; missing dimensions have no data."""
    return {d: rate_from_counts(d, *kw.get(d, (0, 0))) for d in DIMENSION_ORDER}


def test_composite_hand_computed():
    r = rates_of(context_relevance=(8, 10), faithfulness=(9, 20), coverage=(13, 20))
    c = composite(r, {"context_relevance": 1, "faithfulness": 2, "correctness": 1, "coverage": 1})
    # correctness has no data: weights 1, 2, 1 over the rest -> .25, .5, .25
    # value = .25*.80 + .5*.45 + .25*.65 = .2 + .225 + .1625 = .5875
    assert c.value == approx(0.5875)
    assert c.weights_used == approx({"context_relevance": 0.25, "faithfulness": 0.5,
                                     "coverage": 0.25})
    assert c.dropped == ["correctness"] and c.zero_weight == []
    assert not c.gated and c.gate_failures == []
    assert c.label == COMPOSITE_LABEL == "weighted composite (not a standard score)"


def test_composite_gates():
    r = rates_of(context_relevance=(8, 10), faithfulness=(9, 20), coverage=(13, 20))
    c = composite(r, {"faithfulness": 1, "coverage": 1},
                  gates={"faithfulness": 0.95, "coverage": 0.6, "correctness": 0.5})
    assert c.value == approx(0.55)  # (.45 + .65)/2
    assert c.zero_weight == ["context_relevance", "correctness"]
    assert c.gated
    assert c.gate_failures == ["faithfulness 0.45 < gate 0.95",
                               "correctness has no data (gate 0.50 cannot be checked)"]
    # a rate exactly at the floor passes
    assert not composite(r, {"coverage": 1}, gates={"coverage": 0.65}).gated


def test_composite_gate_message_shows_enough_digits():
    r = rates_of(faithfulness=(949, 1000))
    c = composite(r, {"faithfulness": 1}, gates={"faithfulness": 0.95})
    assert c.gate_failures == ["faithfulness 0.949 < gate 0.950"]


def test_composite_no_data():
    c = composite(rates_of(), {"faithfulness": 1})
    assert c.value is None and c.weights_used == {} and c.dropped == ["faithfulness"]
    assert c.reason == "no weighted dimension has data"
    # data exists, but only on a zero-weight dimension
    c = composite(rates_of(coverage=(1, 2)), {"faithfulness": 1})
    assert c.value is None


@pytest.mark.parametrize("weights,match", [
    ({"faithfulness": -1}, "between"),
    ({"faithfulness": float("nan")}, "finite"),
    ({"faithfulness": float("inf")}, "finite"),
    ({"faithfulness": "1"}, "finite"),
    ({"faithfulness": 0, "coverage": 0}, "at least one weight"),
    ({}, "at least one weight"),
    ({"relevance": 1}, "unknown dimension 'relevance'"),
])
def test_composite_rejects_bad_weights(weights, match):
    with pytest.raises(ValueError, match=match):
        composite(rates_of(faithfulness=(1, 2)), weights)


def test_composite_rejects_bad_gates():
    with pytest.raises(ValueError, match="gate of faithfulness"):
        composite(rates_of(), {"faithfulness": 1}, gates={"faithfulness": 1.5})
    with pytest.raises(ValueError, match="unknown dimension"):
        composite(rates_of(), {"faithfulness": 1}, gates={"faith": 0.5})


counts = st.integers(0, 50).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n)))


@settings(max_examples=200, deadline=None)
@given(st.tuples(counts, counts, counts, counts),
       st.tuples(*[st.floats(0, 10, allow_nan=False)] * 4))
def test_composite_within_min_max_of_rates(cs, ws):
    r = {d: rate_from_counts(d, *c) for d, c in zip(DIMENSION_ORDER, cs, strict=True)}
    w = dict(zip(DIMENSION_ORDER, ws, strict=True))
    if not any(v > 0 for v in ws):
        with pytest.raises(ValueError):
            composite(r, w)
        return
    c = composite(r, w)
    with_data = [x.rate for x in r.values() if x.has_data]
    if c.value is None:
        assert not c.weights_used
    else:
        assert min(with_data) <= c.value <= max(with_data)
        assert sum(c.weights_used.values()) == approx(1.0)


# --------------------------------------------------------------------------- diagnosis


def test_diagnose_hand_computed():
    # context relevance 8/10 = .80: Wilson centre .716739, half .226579 -> (.4902, .9433):
    #   passes .50, but the interval reaches below it (borderline)
    # faithfulness 9/20 = .45: centre .458057, half .199857 -> (.2582, .6579) < .70: fails
    # coverage 13/20 = .65: centre .625832, half .192977 -> (.4329, .8188): fails,
    #   but .8188 >= .70 -> uncertain
    r = rates_of(context_relevance=(8, 10), faithfulness=(9, 20), coverage=(13, 20))
    d = diagnose(r)
    assert [f.dimension for f in d.failures] == ["faithfulness", "coverage"]
    f, c = d.failures
    assert (f.rate, f.threshold, f.cause, f.uncertain) == (0.45, 0.70, "unsupported generation",
                                                          False)
    assert (f.low, f.high) == approx((0.2582, 0.6579), abs=1e-4)
    assert (c.cause, c.uncertain) == ("missing reference facts", True)
    assert d.no_data == ["correctness"] and d.borderline == ["context_relevance"]
    assert not d.healthy and not d.complete
    assert d.summary() == (
        "2 dimensions fail: faithfulness 45% (95% CI 26%-66%) < 70% — unsupported generation; "
        "coverage 65% (95% CI 43%-82%) < 70% — missing reference facts "
        "(interval still crosses the threshold: more labels needed). "
        "Passing, but the interval reaches below the threshold: "
        "context relevance 80% (95% CI 49%-94%) >= 50%. "
        "No data: correctness.")


def test_diagnose_reports_every_failure_in_order():
    r = rates_of(context_relevance=(0, 40), faithfulness=(0, 40), correctness=(0, 40),
                 coverage=(0, 40))
    d = diagnose(r)
    assert [f.dimension for f in d.failures] == list(DIMENSION_ORDER)
    assert [f.cause for f in d.failures] == [CAUSES[x] for x in DIMENSION_ORDER] == [
        "poor evidence retrieval", "unsupported generation", "incorrect answer",
        "missing reference facts"]
    assert not any(f.uncertain for f in d.failures)
    assert d.summary().startswith("4 dimensions fail: context relevance 0% (95% CI 0%-9%) < 50%")


def test_diagnose_healthy_and_no_data():
    d = diagnose(rates_of(faithfulness=(40, 40)))
    assert d.healthy and d.failures == [] and d.no_data == [
        "context_relevance", "correctness", "coverage"]
    assert d.summary() == ("The one dimension with data meets its threshold. "
                           "No data: context relevance, correctness, coverage.")
    d = diagnose(rates_of(faithfulness=(40, 40), coverage=(40, 40)))
    assert d.summary() == ("All 2 dimensions with data meet their thresholds. "
                           "No data: context relevance, correctness.")
    d = diagnose(rates_of())
    assert not d.healthy and d.failures == []
    assert d.summary() == "No labelled units yet: no dimension can be diagnosed."
    assert diagnose({}).no_data == list(DIMENSION_ORDER)


def test_diagnose_thresholds():
    r = rates_of(context_relevance=(6, 10))
    assert diagnose(r).failures == []
    d = diagnose(r, thresholds={"context_relevance": 0.65})
    assert [f.dimension for f in d.failures] == ["context_relevance"]
    assert d.thresholds == {**DEFAULT_THRESHOLDS, "context_relevance": 0.65}
    with pytest.raises(ValueError, match="unknown dimension"):
        diagnose(r, thresholds={"relevance": 0.5})
    with pytest.raises(ValueError):
        diagnose(r, thresholds={"coverage": 70})


def test_diagnose_summary_distinguishes_close_values():
    # 139/200 = .695 < .70 must not print as "70% < 70%"
    d = diagnose(rates_of(faithfulness=(139, 200)))
    assert "faithfulness 69.5% (95% CI" in d.summary() and "< 70.0%" in d.summary()


# --------------------------------------------------------------------------- retrieval

RET = ["x", "a", "b", "a", "y"]  # "a" repeated: counted once, at rank 2
REL = {"a", "b", "c"}


def test_retrieval_hand_computed_k3():
    # distinct ranking x, a, b, y; top-3 = x, a, b: 2 of 3 relevant found
    assert recall_at_k(RET, REL, 3) == 2 / 3
    assert precision_at_k(RET, REL, 3) == 2 / 3
    assert hit_at_k(RET, REL, 3) == 1.0
    # DCG = 1/log2(3) + 1/log2(4) = .630930 + .5 = 1.130930
    # IDCG (3 ideal hits) = 1 + .630930 + .5 = 2.130930 -> nDCG = .530721
    assert ndcg_at_k(RET, REL, 3) == approx(0.530721, abs=1e-6)
    assert reciprocal_rank(RET, REL) == 0.5


def test_precision_divides_by_k_as_trec_eval():
    # the example: retrieved [a], relevant {a, b}, k = 5 -> 1/5 (not 1/min(5, 1) = 1)
    assert precision_at_k(["a"], ["a", "b"], 5) == 0.2
    # k = 5 > 4 distinct retrieved: 2 relevant / 5
    assert precision_at_k(RET, REL, 5) == 0.4
    assert precision_at_k(["a", "a", "b"], ["a"], 3) == 1 / 3  # distinct [a, b]: 1 / 3


def test_retrieval_hand_computed_other_k():
    assert recall_at_k(RET, REL, 5) == 2 / 3
    # k = 1: only "x"
    assert (recall_at_k(RET, REL, 1), precision_at_k(RET, REL, 1), hit_at_k(RET, REL, 1),
            ndcg_at_k(RET, REL, 1)) == (0.0, 0.0, 0.0, 0.0)
    # relevant {a, b}, retrieved [x, a, b], k = 2: DCG = 1/log2(3) = .630930
    # IDCG over min(2, 2) = 1 + .630930 -> nDCG = .386853
    assert ndcg_at_k(["x", "a", "b"], ["a", "b"], 2) == approx(0.386853, abs=1e-6)


def test_ndcg_ideal_gain_is_capped_at_k():
    # one relevant at rank 1, k = 10: IDCG over min(10, 1) = 1 ideal hit -> nDCG = 1
    assert ndcg_at_k(["a", "x"], ["a"], 10) == 1.0
    # three relevant, k = 2, both top ranks relevant: IDCG over min(2, 3) = 2 -> exactly 1
    # (uncapped, IDCG would be 2.130930 and nDCG 0.765361)
    assert ndcg_at_k(["a", "b", "x"], ["a", "b", "c"], 2) == 1.0
    # exactly at the cap: k = |relevant| = 2
    assert ndcg_at_k(["b", "a"], ["a", "b"], 2) == 1.0


def test_retrieval_duplicates_counted_once():
    # [a, a, b] -> distinct [a, b]; top-2 holds b
    assert recall_at_k(["a", "a", "b"], ["b"], 2) == 1.0
    assert reciprocal_rank(["a", "a", "b"], ["b"]) == 0.5


def test_retrieval_nothing_relevant_is_undefined():
    # out of scope / cross-tenant: trec_eval leaves the query out; so do we
    for retrieved in (["x", "y"], []):
        assert recall_at_k(retrieved, [], 3) is None
        assert precision_at_k(retrieved, [], 3) is None
        assert hit_at_k(retrieved, [], 3) is None
        assert ndcg_at_k(retrieved, [], 3) is None
        assert reciprocal_rank(retrieved, []) is None


def test_retrieval_nothing_retrieved():
    assert recall_at_k([], ["a"], 3) == 0.0
    assert precision_at_k([], ["a"], 3) == 0.0
    assert hit_at_k([], ["a"], 3) == 0.0
    assert ndcg_at_k([], ["a"], 3) == 0.0
    assert reciprocal_rank([], ["a"]) == 0.0


@pytest.mark.parametrize("k", [0, -1, 2.0, True, None])
def test_retrieval_rejects_bad_k(k):
    with pytest.raises(ValueError, match="k must be"):
        recall_at_k(["a"], ["a"], k)
    with pytest.raises(ValueError, match="k must be"):
        precision_at_k(["a"], ["a"], k)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 9), max_size=12), st.sets(st.integers(0, 9), min_size=1, max_size=5),
       st.integers(1, 12))
def test_retrieval_properties(retrieved, relevant, k):
    vals = [recall_at_k(retrieved, relevant, k), precision_at_k(retrieved, relevant, k),
            hit_at_k(retrieved, relevant, k), ndcg_at_k(retrieved, relevant, k),
            reciprocal_rank(retrieved, relevant)]
    assert all(v is not None and 0.0 <= v <= 1.0 + 1e-12 for v in vals)
    assert recall_at_k(retrieved, relevant, k) <= recall_at_k(retrieved, relevant, k + 1)
    assert (hit_at_k(retrieved, relevant, k) > 0) == (recall_at_k(retrieved, relevant, k) > 0)


def test_retrieval_summary():
    s = retrieval_summary([
        ("c2", "normal", ["x", "a"], ["a"]),          # recall 1, precision .5, rr .5
        ("c1", "normal", ["a", "b"], ["a", "b"]),     # all 1
        ("c3", "out_of_scope", ["x"], []),            # undefined: left out of every mean
    ], k=2)
    assert [r.case_id for r in s.rows] == ["c1", "c2", "c3"]
    c2 = s.rows[1]
    # c2: nDCG = (1/log2 3) / 1 = .630930
    assert (c2.recall, c2.precision, c2.hit, c2.reciprocal_rank) == (1.0, 0.5, 1.0, 0.5)
    assert c2.ndcg == approx(0.630930, abs=1e-6)
    assert s.rows[2].recall is None and s.rows[2].precision is None
    assert list(s.by_case_type) == ["normal", "out_of_scope"]
    assert s.n_by_case_type == {"normal": 2, "out_of_scope": 1}
    assert s.n_with_expected_by_case_type == {"normal": 2, "out_of_scope": 0}
    # normal: precision (1 + .5)/2 = .75, rr .75, nDCG (1 + .630930)/2 = .815465
    assert s.by_case_type["normal"]["precision"] == 0.75
    assert s.by_case_type["normal"]["ndcg"] == approx(0.815465, abs=1e-6)
    assert s.by_case_type["out_of_scope"] == dict.fromkeys(("recall", "precision", "hit", "ndcg", "reciprocal_rank"))
    # overall over the 2 cases that expect a source: the out-of-scope case does not count as 1.0
    assert s.overall["precision"] == 0.75 and s.overall["reciprocal_rank"] == 0.75
    assert (s.n_cases, s.n_with_expected, s.n_without_relevant) == (3, 2, 1)
    assert s.as_rows()[0]["case_id"] == "c1"
    assert retrieval_scores("c", "normal", ["a"], ["a"], 1).n_retrieved == 1


def test_retrieval_summary_edge_cases():
    s = retrieval_summary([], k=3)
    assert s.rows == [] and s.overall["recall"] is None and s.by_case_type == {}
    with pytest.raises(ValueError, match="appears twice"):
        retrieval_summary([("c", "normal", [], []), ("c", "normal", [], [])], k=3)


# --------------------------------------------------------------------------- retrieval against trec_eval

_TREC = {"recall": "recall_{k}", "precision": "P_{k}", "hit": "success_{k}", "ndcg": "ndcg_cut_{k}",
         "reciprocal_rank": "recip_rank"}


def _trec_eval_means(cases, k):
    """Mean of each metric over the queries trec_eval scores (via pytrec_eval)."""
    import pytrec_eval

    qrels = {cid: dict.fromkeys(relevant, 1) for cid, _, _, relevant in cases if relevant}
    run = {}
    for cid, _, retrieved, relevant in cases:
        ranked = list(dict.fromkeys(retrieved))
        if relevant and ranked:
            # strictly decreasing scores so trec_eval keeps our order (no tie-breaking by doc id)
            run[cid] = {doc: float(len(ranked) - i) for i, doc in enumerate(ranked)}
    measures = {m.format(k=k) for m in _TREC.values()}
    per_query = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    # trec_eval scores a judged query with an empty ranking as 0 on every measure (-c)
    return {name: sum(per_query.get(cid, {}).get(m.format(k=k), 0.0) for cid in qrels) / len(qrels)
            for name, m in _TREC.items()}


def _random_cases(seed, n=60, docs=15):
    from playground.sampling import ranked, uniform

    cases = []
    for i in range(n):
        pool = ranked([f"d{j}" for j in range(docs)], f"{seed}/{i}")
        n_ret = 1 + int(uniform(seed, f"{i}/ret") * 10)
        n_rel = int(uniform(seed, f"{i}/rel") * 4)  # 0 .. 3: a quarter of cases have no relevant id
        rel_pool = ranked([f"d{j}" for j in range(docs)], f"{seed}/{i}/relset")
        cases.append((f"q{i}", "t", pool[:n_ret], rel_pool[:n_rel]))
    return cases


@pytest.mark.parametrize("seed,k", [(1, 5), (2, 3), (3, 10), (4, 1)])
def test_rank_metrics_equal_trec_eval_on_seeded_random_rankings(seed, k):
    cases = _random_cases(seed)
    ours = retrieval_summary(cases, k).overall
    theirs = _trec_eval_means(cases, k)
    assert ours == approx(theirs, abs=1e-9)


def test_rank_metrics_equal_trec_eval_on_the_shipped_run(tmp_path):
    import json

    from playground.cli import main

    out = tmp_path / "run"
    assert main(["harness", "run", "--out", str(out), "--quiet"]) == 0
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    results = [json.loads(line) for line in (out / "cases.jsonl").read_text(encoding="utf-8").splitlines()]
    cases = [(c["case_id"], c["case_type"], c["retrieval"]["retrieved"], c["expected_sources"]) for c in results]
    k = report["config"]["retrieval"]["k"]
    theirs = _trec_eval_means(cases, k)
    overall = report["metrics"]["overall"]
    names = {"recall": "recall_at_k", "precision": "precision_at_k", "hit": "hit_at_k", "ndcg": "ndcg_at_k",
             "reciprocal_rank": "mrr"}
    assert {m: overall[names[m]] for m in _TREC} == approx(theirs, abs=1e-6)
    assert report["counts"]["cases_without_relevant_source"] == 22
    assert sum(1 for c in cases if c[3]) == 44


# --------------------------------------------------------------------------- agreement


def test_agreement_hand_computed():
    a = {"u1": 1, "u2": 0, "u3": 1, "u4": 0, "u5": 1}
    b = {"u2": 0, "u3": 0, "u4": 0, "u5": 1, "u6": 1}
    g = agreement(a, b)
    # shared u2..u5: a = 0,1,0,1; b = 0,0,0,1 -> table ((2,0),(1,1))
    # p_o = 3/4; p_e = (2*3 + 2*1)/16 = .5; kappa = (.75 - .5)/.5 = .5
    assert (g.n_shared, g.only_a, g.only_b) == (4, 1, 1)
    assert g.percent == 0.75 and g.confusion == ((2, 0), (1, 1))
    assert g.kappa.kappa == approx(0.5)
    assert g.disagreements == [("u3", 1, 0)]
    assert g.pabak == approx(0.5)
    # MCC = (1*2 - 0*1) / sqrt(1 * 2 * 2 * 3) = 2/sqrt(12) = .577350
    assert g.mcc == approx(0.577350, abs=1e-6)


def test_agreement_no_overlap_and_single_unit():
    g = agreement({"u1": 1}, {"u2": 1})
    assert g.n_shared == 0 and g.percent is None and not g.kappa.defined
    assert g.kappa.reason == "no units" and g.disagreements == [] and g.pabak is None
    g = agreement({"u1": 1}, {"u1": 1})
    assert g.n_shared == 1 and g.percent == 1.0 and not g.kappa.defined
    g = agreement({}, {})
    assert g.n_shared == 0


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.integers(0, 20), st.integers(0, 1)),
       st.dictionaries(st.integers(0, 20), st.integers(0, 1)))
def test_agreement_symmetric(a, b):
    g1, g2 = agreement(a, b), agreement(b, a)
    assert g1.n_shared == g2.n_shared and g1.percent == g2.percent
    assert g1.kappa.defined == g2.kappa.defined
    if g1.kappa.defined:
        assert g1.kappa.kappa == approx(g2.kappa.kappa, abs=1e-12)
    assert [u for u, _, _ in g1.disagreements] == [u for u, _, _ in g2.disagreements]


def test_multi_rater_hand_computed():
    m = multi_rater({
        "bob": {"1": 1, "2": 1, "3": 1, "4": 0},
        "ann": {"1": 1, "2": 0, "3": 1},
        "cat": {"2": 0, "4": 0},
    })
    assert m.annotators == ["ann", "bob", "cat"] and m.units == ["1", "2", "3", "4"]
    assert [(p.annotator_a, p.annotator_b) for p in m.pairwise] == [
        ("ann", "bob"), ("ann", "cat"), ("bob", "cat")]
    # ann-bob on 1,2,3: a = 1,0,1, b = 1,1,1 (constant) -> kappa 0 by construction
    assert m.pairwise[0].agreement.kappa.kappa == 0.0
    # ann-cat share only unit 2 (both 0) -> undefined
    assert not m.pairwise[1].agreement.kappa.defined
    # units [1,1], [0,1,0], [1,1], [0,0]: Fleiss-Cuzick .46 (hand-computed in test_stats);
    # Krippendorff: 1 - 8*1/(4*5) = .6
    assert m.fleiss.value == approx(0.46, abs=1e-12)
    assert m.krippendorff.value == approx(0.6)


def test_multi_rater_degenerate():
    m = multi_rater({"ann": {"1": 1, "2": 0}})
    assert m.pairwise == [] and not m.fleiss.defined and not m.krippendorff.defined
    m = multi_rater({})
    assert m.units == [] and not m.fleiss.defined and not m.krippendorff.defined
    m = multi_rater({"ann": {"1": 1}, "bob": {"1": 1}})  # one unit, one class
    assert not m.fleiss.defined and not m.krippendorff.defined
    assert not m.pairwise[0].agreement.kappa.defined


def test_dimension_rate_is_frozen():
    r = rate_from_counts("coverage", 1, 2)
    assert isinstance(r, DimensionRate) and r.has_data
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.rate = 0.0  # type: ignore[misc]
    assert math.isclose(r.rate, 0.5)


# --------------------------------------------------------------------------- diagnosis boundaries


def test_diagnosis_exactly_at_the_thresholds_passes():
    # 7/10 = 0.70 exactly (faithfulness, correctness, coverage) and 5/10 = 0.50 (context relevance): no failure
    rates = {"context_relevance": rate_from_counts("context_relevance", 5, 10),
             "faithfulness": rate_from_counts("faithfulness", 7, 10),
             "correctness": rate_from_counts("correctness", 70, 100),
             "coverage": rate_from_counts("coverage", 7, 10)}
    d = diagnose(rates)
    assert d.failures == [] and d.healthy
    # passing, but every Wilson interval reaches below its threshold: all four borderline
    assert d.borderline == ["context_relevance", "faithfulness", "correctness", "coverage"]


@pytest.mark.parametrize("dimension,successes,n", [
    ("context_relevance", 49, 100), ("faithfulness", 69, 100), ("correctness", 699, 1000), ("coverage", 6999, 10000)])
def test_diagnosis_just_below_the_threshold_fails(dimension, successes, n):
    d = diagnose({dimension: rate_from_counts(dimension, successes, n)})
    assert [f.dimension for f in d.failures] == [dimension]
    assert d.failures[0].uncertain  # the interval still reaches the threshold


def test_diagnosis_uncertain_exactly_when_the_upper_bound_reaches_the_threshold():
    # 1/10 context relevance: Wilson (0.0179, 0.4042) < 0.50 -> a certain failure
    d = diagnose({"context_relevance": rate_from_counts("context_relevance", 1, 10)})
    assert not d.failures[0].uncertain
    # threshold set to the upper bound itself: high >= threshold -> uncertain
    r = rate_from_counts("context_relevance", 1, 10)
    assert diagnose({"context_relevance": r}, {"context_relevance": r.high}).failures[0].uncertain
    assert not diagnose({"context_relevance": r}, {"context_relevance": r.high + 1e-9}).failures[0].uncertain
