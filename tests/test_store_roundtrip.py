"""Every label export reads back exactly (issue 40.3): export → import into a fresh store → export, byte for byte.

The CLI's ``labels export --format csv|jsonl|parquet`` and ``labels import`` on both backends; the time a label
was made survives the import (it is not re-stamped), and an imported label older than the current one is
reported, never dropped.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import store_fixtures as sf
from store_fixtures import drop_pg_schema, new_pg_schema

from playground.cli import main
from playground.store import UNSURE, LabelImportError, import_file, open_store

FIX = Path(__file__).resolve().parent / "fixtures"
pg_server = sf.pg_server
store_url = sf.store_url


def cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _fill(url: str) -> list:
    """The demo dataset and labels of every kind: 1/0/unsure, comments (one alone), tags, awkward names."""
    from playground.datasets import open_dataset
    from playground.importers.load import import_dataset
    from playground.verdicts import response_units

    with open_store(url) as s:
        import_dataset(FIX / "ragas_single.jsonl", "ragas", "demo", s)
        ds = open_dataset("demo", s)
        r = response_units(ds)
        claims = [u for u in ds.units() if u.unit_kind == "claim"]
        s.set_label("ana", r[0], "pass", 0)
        s.set_comment("ana", r[0], '=invented "30 s", then\nmore')
        s.set_tags("ana", r[0], ["hallucination", "vague"])
        s.set_label("-bob", r[1], "pass", UNSURE)
        s.set_comment("Zoë", r[1], "a comment alone")
        for i, unit in enumerate(claims[:3]):
            s.set_label("ana", unit, unit.dimensions[0], i % 2)
        return [r, claims]


def _fresh(url: str, tmp_path: Path, name: str) -> tuple[str, str | None]:
    """A second empty store beside ``url`` on the same backend: ``(url, pg schema or None)``."""
    if url.startswith("postgresql"):
        schema, other = new_pg_schema(url.split("?")[0])
        return other, schema
    return str(tmp_path / name), None


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_export_import_export_is_byte_identical(store_url, tmp_path, capsys, fmt):
    from playground.importers.load import import_dataset

    _fill(store_url)
    first, second = tmp_path / f"first.{fmt}", tmp_path / f"second.{fmt}"
    code, _, err = cli(capsys, "labels", "export", "--dataset", "demo", "--format", fmt, "--out", first,
                       "--db", store_url)
    assert code == 0, err
    target, schema = _fresh(store_url, tmp_path, "fresh.db")
    try:
        with open_store(target) as t:
            import_dataset(FIX / "ragas_single.jsonl", "ragas", "demo", t)
        code, out, err = cli(capsys, "labels", "import", first, "--db", target)
        assert code == 0 and "older than" not in out, err
        code, _, err = cli(capsys, "labels", "export", "--dataset", "demo", "--format", fmt, "--out", second,
                           "--db", target)
        assert code == 0, err
        assert second.read_bytes() == first.read_bytes()
        with open_store(store_url) as a, open_store(target) as b:
            # Annotator, value, time and comment of every label as they were made, not as imported.
            def state(s):
                return sorted((x.annotator, x.unit_id, x.dimension, x.value, x.updated_at)
                              for x in s.labels(include_unsure=True))

            assert state(b) == state(a) and len(state(a)) == 5
            # A comment alone is a row with its own time; one on labelled rows takes the first row's time
            # (the table has no column for it).
            assert [(c.annotator, c.text) for c in b.comments()] == [(c.annotator, c.text) for c in a.comments()]
            made, read = {c.annotator: c for c in a.comments()}, {c.annotator: c for c in b.comments()}
            assert read["Zoë"].updated_at == made["Zoë"].updated_at
            verdict = next(x for x in a.labels(annotator="ana") if x.dimension == "pass")
            assert read["ana"].updated_at == verdict.updated_at
            assert [(x.annotator, x.raw_tags, x.created_at) for x in b.tags()] == [
                (x.annotator, x.raw_tags, x.created_at) for x in a.tags()]
            assert b.verify() == []
    finally:
        if schema is not None:
            drop_pg_schema(store_url.split("?")[0], schema)


def _one_row_file(tmp_path: Path, unit, value: str, time: str, name: str = "one.csv") -> Path:
    path = tmp_path / name
    path.write_text("annotator,unit_kind,unit_id,dimension,value,time\n"
                    f"ana,{unit.unit_kind},{unit.unit_id},pass,{value},{time}\n", encoding="utf-8")
    return path


def test_a_given_time_is_kept_and_spelt_as_the_store_spells_times(tmp_path):
    url = str(tmp_path / "a.db")
    r, _claims = _fill(url)
    with open_store(url) as s:
        # Z, an offset and no offset at all (UTC): each is the same moment, spelt with microseconds and +00:00.
        for time, kept in (("2026-12-07T06:56:21Z", "2026-12-07T06:56:21.000000+00:00"),
                           ("2026-12-07T08:56:22+02:00", "2026-12-07T06:56:22.000000+00:00"),
                           ("2026-12-07 06:56:23.5", "2026-12-07T06:56:23.500000+00:00")):
            value = "1" if time.endswith("Z") or time.endswith("5") else "0"
            import_file(s, _one_row_file(tmp_path, r[0], value, time), {r[0].unit_id: r[0]})
            (label,) = s.labels(annotator="ana", unit_ids=[r[0].unit_id])
            assert label.updated_at == kept
            assert s.events(annotator="ana")[-1].created_at == kept


def test_a_row_without_time_gets_the_time_of_the_import(tmp_path):
    url = str(tmp_path / "a.db")
    r, _claims = _fill(url)
    with open_store(url) as s:
        before = s.labels(annotator="ana", unit_ids=[r[0].unit_id])[0].updated_at
        import_file(s, _one_row_file(tmp_path, r[0], "1", ""), {r[0].unit_id: r[0]})
        (label,) = s.labels(annotator="ana", unit_ids=[r[0].unit_id])
        assert label.value == 1 and label.updated_at > before
        assert label.updated_at == s.events(annotator="ana")[-1].created_at


@pytest.mark.parametrize("time", ["2026-12-07", "yesterday", "2026-13-07T06:56:21", "06:56:21", "2026-12-07T25:00"])
def test_a_bad_time_rejects_the_file_naming_the_row(tmp_path, time):
    url = str(tmp_path / "a.db")
    r, _claims = _fill(url)
    with open_store(url) as s:
        before = s.dump()
        with pytest.raises(LabelImportError) as info:
            import_file(s, _one_row_file(tmp_path, r[0], "1", time), {r[0].unit_id: r[0]})
        assert info.value.problems == [
            (1, f"time {time!r} is not an ISO 8601 date and time (like 2026-12-07T06:56:21.000000+00:00)")]
        assert s.dump() == before


def test_an_older_imported_label_becomes_current_and_the_newer_stays_in_the_history(tmp_path, capsys):
    url = str(tmp_path / "a.db")
    r, _claims = _fill(url)
    with open_store(url) as s:
        newer = s.labels(annotator="ana", unit_ids=[r[0].unit_id])[0]
    old = _one_row_file(tmp_path, r[0], "1", "2020-01-02T03:04:05+00:00")
    code, out, _ = cli(capsys, "labels", "import", old, "--db", url)
    assert code == 0
    assert out.endswith(": 1 changed, 0 already so; annotators: ana; 1 older than the label it replaced "
                        "(kept in the history; undo brings it back)\n")
    with open_store(url) as s:
        (now,) = s.labels(annotator="ana", unit_ids=[r[0].unit_id])
        assert (now.value, now.updated_at) == (1, "2020-01-02T03:04:05.000000+00:00")
        last = s.history(r[0].unit_id, "pass", annotator="ana")[-1]
        assert (last.action, last.old_value, last.new_value) == ("import", newer.value, 1)
        assert s.verify() == []
        s.undo("ana")
        (back,) = s.labels(annotator="ana", unit_ids=[r[0].unit_id])
        assert back.value == newer.value
    # A later time than the current label's is not counted; the same value again is no change at all.
    later = _one_row_file(tmp_path, r[0], "1", "2099-01-01T00:00:00+00:00", "later.csv")
    code, out, _ = cli(capsys, "labels", "import", later, "--db", url)
    assert code == 0 and out.endswith(": 1 changed, 0 already so; annotators: ana\n")
    code, out, _ = cli(capsys, "labels", "import", old, "--db", url)
    assert code == 0 and out.endswith(": 0 changed, 1 already so; annotators: ana\n")
