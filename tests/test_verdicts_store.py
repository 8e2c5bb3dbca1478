"""Issue 24.5/24.6 in the store: response verdicts, notes, failure-mode tags, the taxonomy, guidelines (schema 5)."""
from __future__ import annotations

from pathlib import Path

import pytest
from store_fixtures import claim, pg_server, raw_backend, store, store_url

from playground.store import CURRENT_VERSION, InvalidLabelError, open_store
from playground.store.schema import v4_ddl
from playground.verdicts import response_unit, validate_tag

FIXTURES = (pg_server, store, store_url)


def resp(i: int, text: str = "The answer.") -> object:
    return response_unit(f"GC-{i:04d}", f"GC-{i:04d}-R1", text)


# --- verdicts and notes ------------------------------------------------------------------------------------


def test_a_verdict_is_an_ordinary_label_with_history_and_undo(store):
    u = resp(1)
    assert (u.unit_kind, u.unit_id, u.dimensions) == ("response", "GC-0001-R1", ("pass",))
    store.set_label("ana", u, "pass", 0)
    store.set_label("ana", u, "pass", 2)
    assert store.set_label("ana", u, "pass", 2) is None
    assert [(x.action, x.old_value, x.new_value) for x in store.history(u.unit_id, "pass")] == [
        ("set", None, 0), ("set", 0, 2)]
    store.undo("ana")
    assert [(lb.annotator, lb.value) for lb in store.labels(unit_ids=[u.unit_id])] == [("ana", 0)]
    store.set_comment("ana", u, "  invents a 30 s timeout ")
    assert [c.text for c in store.comments(unit_ids=[u.unit_id])] == ["invents a 30 s timeout"]
    with pytest.raises(InvalidLabelError, match="dimension 'supported' is not labelled on response"):
        store.set_label("ana", u, "supported", 1)
    assert store.verify() == []


# --- tags -------------------------------------------------------------------------------------------------


def test_tag_name_rule_boundaries():
    assert validate_tag("a") == "a"
    assert validate_tag("a" * 40) == "a" * 40
    assert validate_tag("wrong-source_2") == "wrong-source_2"
    for bad in ("", "a" * 41, "Hallucination", "1abc", "-x", "tag name", "é", "a.b", None):
        with pytest.raises(ValueError, match="a tag name is 1 to 40 characters: lower-case letters a-z, digits, "
                                             "'-' and '_', starting with a letter"):
            validate_tag(bad)  # type: ignore[arg-type]


def test_tags_are_events_join_the_taxonomy_and_undo(store):
    u = resp(1)
    e = store.set_tags("ana", u, ["vague", "hallucination", "vague"])
    assert (e.action, e.dimension, e.note, e.guidelines_version) == ("tags", "tags", '["hallucination","vague"]', None)
    assert store.set_tags("ana", u, ["hallucination", "vague"]) is None  # the same set: nothing written
    assert [(m.name, m.created_by, m.merged_into) for m in store.taxonomy("golden")] == [
        ("hallucination", "ana", None), ("vague", "ana", None)]
    store.set_tags("ana", u, ["incomplete"])
    [t] = store.tags()
    assert (t.annotator, t.unit_id, t.tags, t.raw_tags, t.dataset) == (
        "ana", "GC-0001-R1", ("incomplete",), ("incomplete",), "golden")
    undo = store.undo("ana")
    assert (undo.action, undo.dimension, undo.note) == ("undo", "tags", '["hallucination","vague"]')
    assert store.tags()[0].tags == ("hallucination", "vague")
    store.undo("ana")
    assert store.tags() == [] and store.verify() == []
    with pytest.raises(InvalidLabelError, match="bad tag name 'Bad'"):
        store.set_tags("ana", u, ["ok", "Bad"])
    assert [m.name for m in store.taxonomy("golden")] == ["hallucination", "incomplete", "vague"]  # "ok" not added


def test_rename_and_merge_resolve_without_rewriting_events(store):
    a, b = resp(1), resp(2)
    store.set_tags("ana", a, ["halluc"])
    store.set_tags("ben", b, ["made-up", "vague"])
    store.set_comment("ana", a, "the number is invented")
    events = store.events()
    store.rename_failure_mode("golden", "halluc", "hallucination", "owner")
    store.merge_failure_modes("golden", ["made-up"], "hallucination", "owner")
    assert store.events() == events  # no event, no note rewritten
    assert [(t.annotator, t.tags, t.raw_tags) for t in store.tags()] == [
        ("ana", ("hallucination",), ("halluc",)), ("ben", ("hallucination", "vague"), ("made-up", "vague"))]
    assert [(m.name, m.merged_into, m.merged_by) for m in store.taxonomy("golden")] == [
        ("halluc", "hallucination", "owner"), ("hallucination", None, None), ("made-up", "hallucination", "owner"),
        ("vague", None, None)]
    before = store.dump()
    for call, message in [
        (lambda: store.merge_failure_modes("golden", ["vague"], "missing", "o"),
         "no tag 'missing' in the taxonomy of dataset 'golden' to merge into"),
        (lambda: store.merge_failure_modes("golden", ["vague", "nope"], "hallucination", "o"), "no tag 'nope'"),
        (lambda: store.merge_failure_modes("golden", ["halluc"], "vague", "o"), "already merged into"),
        (lambda: store.merge_failure_modes("golden", ["vague"], "vague", "o"), "into itself"),
        (lambda: store.merge_failure_modes("golden", ["vague"], "Bad", "o"), "bad tag name 'Bad'"),
        (lambda: store.rename_failure_mode("golden", "vague", "hallucination", "o"), "already exists"),
        (lambda: store.rename_failure_mode("golden", "vague", "x" * 41, "o"), "bad tag name"),
        (lambda: store.add_failure_mode("nowhere", "x", "o"), "no dataset named 'nowhere'"),
        (lambda: store.add_failure_mode("golden", "halluc", "o"), "was merged into 'hallucination'"),
    ]:
        with pytest.raises(InvalidLabelError, match=message):
            call()
    assert store.dump() == before  # nothing written
    m = store.add_failure_mode("golden", "tone", "owner", "rude or curt")
    assert (m.name, m.description, m.created_by) == ("tone", "rude or curt", "owner")
    assert store.add_failure_mode("golden", "tone", "other") == m  # already there: as it is


# --- guidelines ---------------------------------------------------------------------------------------------


def test_guidelines_versions_and_the_version_each_event_records(store):
    u = resp(1)
    assert store.set_label("ana", u, "pass", 1).guidelines_version is None
    assert store.set_guidelines("golden", "# Rules\n\nPass only grounded answers.\n", "owner") == 1
    assert store.set_guidelines("golden", "# Rules\n\nPass only grounded answers.\n", "other") == 1  # same text
    assert store.set_label("ana", u, "pass", 0).guidelines_version == 1
    assert store.set_guidelines("golden", "# Rules v2\n", "owner") == 2
    assert store.set_comment("ana", u, "why").guidelines_version == 2
    assert store.set_tags("ana", u, ["vague"]).guidelines_version == 2
    assert store.set_label("ana", claim(1), "supported", 1).guidelines_version == 2  # a golden claim too
    g = store.guidelines("golden")
    assert (g.version, g.markdown, g.author) == (2, "# Rules v2\n", "owner")
    assert store.guidelines("golden", version=1).markdown == "# Rules\n\nPass only grounded answers.\n"
    assert store.guidelines("golden", version=3) is None and store.guidelines("other") is None
    assert [x.version for x in store.guidelines_history("golden")] == [1, 2]
    before = store.dump()
    for text, message in [("", "is empty"), ("  \n", "is empty"), ("a\x00b", "line 1: control character U\\+0000"),
                          ("x" * (256 * 1024 + 1), "262145 bytes, more than 262144")]:
        with pytest.raises(InvalidLabelError, match=message):
            store.set_guidelines("golden", text, "owner")
    with pytest.raises(InvalidLabelError, match="no dataset named 'nope'"):
        store.set_guidelines("nope", "# x", "owner")
    assert store.dump() == before
    assert store.set_guidelines("golden", "x" * (256 * 1024), "owner") == 3  # exactly 256 KiB is fine


def test_guidelines_file_must_be_utf8(tmp_path):
    from playground.store.guidelines import read_guidelines_file

    good = tmp_path / "g.md"
    good.write_bytes("\ufeff# Règles\n".encode())
    assert read_guidelines_file(good) == "# Règles\n"
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"# Rules\n\xff\xfe")
    with pytest.raises(InvalidLabelError, match=r"bad.md: not UTF-8 text \(byte 8: b'\\xff'\)"):
        read_guidelines_file(bad)
    with pytest.raises(InvalidLabelError, match="cannot read the guidelines file"):
        read_guidelines_file(tmp_path / "missing.md")


# --- schema 5, migration, copy ------------------------------------------------------------------------------


def _v4_store(url: str) -> None:
    b = raw_backend(url)
    u = claim(1)
    ts = b.ts_in("2024-05-01T12:00:01.000000+00:00")

    def tx(cur):
        for stmt in v4_ddl(b.dialect):
            cur.execute(stmt)
        cur.execute("INSERT INTO annotators (annotator_id, name, created_at) VALUES (1, 'ann', ?)", (ts,))
        cur.execute("INSERT INTO events (event_id, batch_id, annotator_id, unit_kind, unit_id, case_id, dimension,"
                    " old_value, new_value, old_text_hash, text_hash, action, undoes, created_at, note) VALUES"
                    " (1, 1, 1, 'claim', ?, 'GC-0001', 'supported', NULL, 2, NULL, ?, 'set', NULL, ?, NULL)",
                    (u.unit_id, u.text_hash, ts))
        cur.execute("INSERT INTO events (event_id, batch_id, annotator_id, unit_kind, unit_id, case_id, dimension,"
                    " old_value, new_value, old_text_hash, text_hash, action, undoes, created_at, note) VALUES"
                    " (2, 2, 1, 'claim', ?, 'GC-0001', '', NULL, NULL, NULL, ?, 'comment', NULL, ?, 'hm')",
                    (u.unit_id, u.text_hash, ts))
        cur.execute("INSERT INTO labels (annotator_id, unit_id, dimension, unit_kind, case_id, value, text_hash,"
                    " updated_at, event_id) VALUES (1, ?, 'supported', 'claim', 'GC-0001', 2, ?, ?, 1)",
                    (u.unit_id, u.text_hash, ts))
        cur.execute("INSERT INTO comments (annotator_id, unit_id, unit_kind, case_id, text, updated_at, event_id)"
                    " VALUES (1, ?, 'claim', 'GC-0001', 'hm', ?, 2)", (u.unit_id, ts))
        cur.execute("INSERT INTO lessons (name, dataset, cases, responses, units, created_at) VALUES"
                    " ('w1', 'golden', '[]', '[]', '[\"x\"]', ?)", (ts,))
        b.reset_sequences(cur)

    b.write(tx)
    b.close()


def test_a_version_4_store_migrates_to_5_keeping_every_row(store_url):
    _v4_store(store_url)
    with open_store(store_url) as s:
        assert s.schema_version == CURRENT_VERSION == 5 and s.verify() == []
        dump = s.dump()
        assert dump["events"] == [
            (1, 1, 1, "claim", claim(1).unit_id, "GC-0001", "supported", None, 2, None, claim(1).text_hash, "set",
             None, "2024-05-01T12:00:01.000000+00:00", None, None),
            (2, 2, 1, "claim", claim(1).unit_id, "GC-0001", "", None, None, None, claim(1).text_hash, "comment",
             None, "2024-05-01T12:00:01.000000+00:00", "hm", None)]
        assert [c.text for c in s.comments()] == ["hm"] and [x.name for x in s.lessons()] == ["w1"]
        assert dump["tags"] == dump["failure_modes"] == dump["guidelines"] == []
        assert s.set_label("ann", resp(1), "pass", 1).event_id == 3  # ids continue; the new kinds are accepted
        assert s.set_tags("ann", resp(1), ["vague"]).event_id == 4
    if not store_url.startswith("postgresql"):
        assert Path(store_url + ".schema4.bak").is_file()
    with open_store(store_url) as s:  # reopening does not migrate again
        assert s.schema_version == 5 and len(s.events()) == 4 and s.verify() == []


def test_a_copy_keeps_tags_taxonomy_and_guidelines(tmp_path):
    with open_store(tmp_path / "a.db") as a, open_store(tmp_path / "b.db") as b:
        a.set_guidelines("golden", "# G", "owner")
        a.set_tags("ana", resp(1), ["halluc"])
        a.rename_failure_mode("golden", "halluc", "hallucination", "owner")
        counts = b.copy_from(a)
        assert (counts["tags"], counts["failure_modes"], counts["guidelines"]) == (1, 2, 1)
        assert b.dump() == a.dump() and b.tags() == a.tags() and b.verify() == []


# --- counts ----------------------------------------------------------------------------------------------------


def test_failure_mode_table_and_pass_rate_exact(store):
    from statsmodels.stats.proportion import proportion_confint

    from playground.verdicts import FailureModeRow, failure_mode_table, pass_rate

    units = [resp(i) for i in range(1, 6)]
    # ana: 1 pass, 2-4 fail, 5 unsure (not judged); ben: 1 fail, 2 fail
    for i, v in enumerate([1, 0, 0, 0, 2]):
        store.set_label("ana", units[i], "pass", v)
    store.set_label("ben", units[0], "pass", 0)
    store.set_label("ben", units[1], "pass", 0)
    store.set_tags("ana", units[1], ["hallucination"])
    store.set_tags("ana", units[2], ["hallucination", "vague"])
    store.set_tags("ana", units[4], ["vague"])  # unsure verdict: not judged, not counted
    store.set_tags("ben", units[0], ["tone"])
    store.set_tags("ben", units[3], ["hallucination"])  # ben did not judge 4; ana did: pooled counts it

    def wilson(k, n):
        lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
        return lo, hi

    assert tuple(pass_rate(store, units, "ana")) == pytest.approx((1, 4, *wilson(1, 4)), abs=1e-12)
    assert tuple(pass_rate(store, units, "ben"))[:2] == (0, 2)
    # pooled: 1 is a tie (ana pass, ben fail): not judged; 2, 3, 4 fail
    assert tuple(pass_rate(store, units)) == pytest.approx((0, 3, *wilson(0, 3)), abs=1e-12)
    store.adjudicate(units[0], "pass", 1, "cy")
    assert tuple(pass_rate(store, units))[:2] == (1, 4)
    ana = failure_mode_table(store, units, "ana")
    assert [(r.name, r.responses_tagged, r.responses_judged) for r in ana] == [
        ("hallucination", 2, 4), ("vague", 1, 4), ("tone", 0, 4)]
    lo, hi = wilson(2, 4)
    assert (ana[0].rate, ana[0].low, ana[0].high) == pytest.approx((0.5, lo, hi), abs=1e-12)
    pooled = failure_mode_table(store, units)
    assert [(r.name, r.responses_tagged, r.responses_judged) for r in pooled] == [
        ("hallucination", 3, 4), ("tone", 1, 4), ("vague", 1, 4)]
    assert isinstance(pooled[0], FailureModeRow)
    assert (pooled[0].rate, pooled[0].low, pooled[0].high) == pytest.approx((0.75, *wilson(3, 4)), abs=1e-12)
    # a merge is followed by the counts: tone merged into vague
    store.merge_failure_modes("golden", ["tone"], "vague", "owner")
    assert [(r.name, r.responses_tagged) for r in failure_mode_table(store, units)] == [
        ("hallucination", 3), ("vague", 2)]
    # a response whose text changed: its verdicts and tags are stale and drop out
    changed = [response_unit(u.case_id, u.response_id, "New text.") if u.unit_id == "GC-0003-R1" else u
               for u in units]
    assert [(r.name, r.responses_tagged, r.responses_judged) for r in failure_mode_table(store, changed, "ana")] == [
        ("hallucination", 1, 3), ("vague", 0, 3)]
    assert tuple(pass_rate(store, [])) == (0, 0, None, None)


def test_bulk_writes_record_each_units_guidelines_version(store):
    store.set_guidelines("golden", "# G\n", "owner")
    store.write_rows([("ana", resp(1), "pass", 1), ("ana", claim(1), "supported", 0)], comments=[("ana", resp(1), "n")])
    assert [(e.dimension, e.guidelines_version) for e in store.events()] == [("pass", 1), ("supported", 1), ("", 1)]
    other = response_unit("demo:x", "demo:x/R", "A.")  # a dataset without guidelines (not even stored)
    store.write_rows([("ana", other, "pass", 0)])
    assert store.events()[-1].guidelines_version is None
