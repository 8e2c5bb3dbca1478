"""``playground guidelines``, ``playground tags`` and ``import --guidelines`` (issue 24.5/24.6): output, bad input."""
from __future__ import annotations

from pathlib import Path

from playground.cli import main
from playground.store import open_store

FIX = Path(__file__).resolve().parent / "fixtures"


def cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_guidelines_set_show_list(tmp_path, capsys):
    db, md = tmp_path / "l.db", tmp_path / "g.md"
    md.write_text("# Our rules\n\nFail invented numbers.\n", encoding="utf-8")
    assert cli(capsys, "guidelines", "set", "--dataset", "golden", md, "--author", "lea", "--db", db) == (
        0, "guidelines of golden: version 1 stored (36 bytes, by lea)\n", "")
    assert cli(capsys, "guidelines", "set", "--dataset", "golden", md, "--db", db) == (
        0, "guidelines of golden: unchanged, the same text as version 1\n", "")
    md.write_text("# v2\n", encoding="utf-8")
    assert cli(capsys, "guidelines", "set", "--dataset", "golden", md, "--db", db)[1].startswith(
        "guidelines of golden: version 2 stored")
    code, out, err = cli(capsys, "guidelines", "show", "--dataset", "golden", "--version", "1", "--db", db)
    assert (code, out) == (0, "# Our rules\n\nFail invented numbers.\n")
    assert err.startswith("guidelines of golden, version 1, by lea, ")
    code, out, _ = cli(capsys, "guidelines", "list", "--dataset", "golden", "--db", db)
    assert code == 0 and out.count("\n") == 2 and out.startswith("version 1: by lea, ") and "5 bytes" in out
    code, _, err = cli(capsys, "guidelines", "show", "--dataset", "golden", "--version", "9", "--db", db)
    assert code == 1 and err.startswith("error: dataset golden has no version 9")


def test_guidelines_bad_input_exits_2_and_writes_nothing(tmp_path, capsys):
    db, bad = tmp_path / "l.db", tmp_path / "bad.md"
    bad.write_bytes(b"# ok\n\xc3\x28")
    with open_store(db) as s:
        before = s.dump()
    code, out, err = cli(capsys, "guidelines", "set", "--dataset", "golden", bad, "--db", db)
    assert (code, out) == (2, "") and err == f"error: {bad}: not UTF-8 text (byte 5: b'\\xc3'); save the guidelines " \
                                             "as UTF-8 markdown\n"
    good = tmp_path / "g.md"
    good.write_text("# x\n")
    code, _, err = cli(capsys, "guidelines", "set", "--dataset", "nope", good, "--db", db)
    assert code == 2 and err.startswith("error: no dataset named 'nope' (known: golden); nothing was written")
    with open_store(db) as s:
        assert s.dump() == before


def test_tags_list_add_rename_merge(tmp_path, capsys):
    db = tmp_path / "l.db"
    from playground.golden import load_dataset
    from playground.verdicts import response_units

    a, b = response_units(load_dataset())[:2]
    with open_store(db) as s:
        s.set_tags("ana", a, ["halluc", "vague"])
        s.set_tags("ben", a, ["made-up"])
        s.set_tags("ben", b, ["made-up"])
    assert cli(capsys, "tags", "add", "--dataset", "golden", "hallucination", "--description", "invented facts",
               "--db", db) == (0, "tag hallucination is in the taxonomy of golden\n", "")
    assert cli(capsys, "tags", "merge", "--dataset", "golden", "halluc", "made-up", "--into", "hallucination",
               "--db", db)[:2] == (0, "merged halluc, made-up into hallucination in golden (tag events and notes "
                                      "unchanged)\n")
    assert cli(capsys, "tags", "rename", "--dataset", "golden", "vague", "hedging", "--by", "lea", "--db", db)[0] == 0
    with open_store(db) as s:  # verdicts: a fails (ana, ben), b passes (ben)
        s.set_label("ana", a, "pass", 0)
        s.set_label("ben", a, "pass", 0)
        s.set_label("ben", b, "pass", 1)
    code, out, _ = cli(capsys, "tags", "list", "--dataset", "golden", "--db", db)
    lines = out.splitlines()
    # pooled: a is hallucination (ana: halluc, ben: made-up) and hedging (ana: vague); b hallucination (ben): 2 of 2
    # judged; 2/2 -> Wilson [34.2%, 100.0%], 1/2 -> [9.5%, 90.5%]; pass 1 of 2 -> 50.0% [9.5%, 90.5%]
    assert code == 0 and lines[:4] == [
        "2 response(s) judged (pass or fail, any annotator); consensus pass 1 of 2 (ties left out): 50.0% "
        "[9.5%, 90.5%]",
        "tag                      responses of judged  95% Wilson       tag sets  description",
        "hallucination                    2    100.0%  [34.2%, 100.0%]         3  invented facts",
        "hedging                          1     50.0%  [9.5%, 90.5%]           1"]
    assert lines[4].startswith("halluc                   -> hallucination (by owner, ")
    assert lines[6].startswith("vague                    -> hedging (by lea, ") and len(lines) == 7


def test_tags_bad_input_exits_2_and_writes_nothing(tmp_path, capsys):
    db = tmp_path / "l.db"
    with open_store(db) as s:
        s.add_failure_mode("golden", "vague", "owner")
        before = s.dump()
    for argv, message in [
        (("add", "Bad Tag"), "error: bad tag name 'Bad Tag': a tag name is 1 to 40 characters: lower-case letters "
                             "a-z, digits, '-' and '_', starting with a letter\n"),
        (("add", "a" * 41), "error: bad tag name '" + "a" * 41 + "'"),
        (("merge", "vague", "--into", "missing"), "error: no tag 'missing' in the taxonomy of dataset 'golden' to "
                                                  "merge into (tags in use: vague); nothing was written\n"),
        (("rename", "nope", "new"), "error: no tag 'nope' in the taxonomy of dataset 'golden' to rename"),
        (("add", "x", "--dataset", "nope"), "error: no dataset named 'nope'"),
    ]:
        args = ["tags", argv[0], *argv[1:]]
        if "--dataset" not in argv:
            args += ["--dataset", "golden"]
        code, out, err = cli(capsys, *args, "--db", db)
        assert (code, out) == (2, ""), argv
        assert err.startswith(message), (argv, err)
    for argv in (["merge", "vague"], ["rename", "vague"], ["add"]):  # argparse: usage and exit code 2
        try:
            main(["tags", *argv, "--dataset", "golden", "--db", str(db)])
        except SystemExit as exc:
            assert exc.code == 2
        else:
            raise AssertionError(argv)
    assert "the following arguments are required: --into" in capsys.readouterr().err
    with open_store(db) as s:
        assert s.dump() == before
    assert cli(capsys, "tags", "add", "--dataset", "golden", "a" * 40, "--db", db)[0] == 0  # 40 is fine


def test_import_with_guidelines_and_a_bad_guidelines_file(tmp_path, capsys):
    db, md = tmp_path / "l.db", tmp_path / "g.md"
    md.write_text("# Demo rules\n", encoding="utf-8")
    code, out, _ = cli(capsys, "import", "ragas", FIX / "ragas_single.jsonl", "--dataset", "demo", "--guidelines", md,
                       "--guidelines-author", "lea", "--db", db)
    assert code == 0 and "\n  guidelines: version 1 (`playground guidelines show --dataset demo`)\n" in out
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"\xff")
    code, out, err = cli(capsys, "import", "ragas", FIX / "ragas_single.jsonl", "--dataset", "other", "--guidelines",
                         bad, "--db", db)
    assert (code, out) == (2, "") and err == (f"error: {bad}: not UTF-8 text (byte 0: b'\\xff'); save the guidelines "
                                              "as UTF-8 markdown\nnothing was imported\n")
    with open_store(db) as s:
        assert s.dataset_names() == ["demo"] and s.guidelines("demo").author == "lea"


def test_help_texts_name_the_rules(capsys):
    for argv in (["guidelines", "set", "--help"], ["tags", "merge", "--help"], ["import", "ragas", "--help"]):
        try:
            main(argv)
        except SystemExit as exc:
            assert exc.code == 0
    out = capsys.readouterr().out
    assert "UTF-8 text, at most 256 KiB" in out and "1 to 40 characters" in out and "--guidelines FILE.md" in out


def test_labels_export_carries_verdicts_notes_and_tags_and_labels_import_reads_them(tmp_path, capsys):
    from playground.datasets import open_dataset
    from playground.importers.load import import_dataset
    from playground.verdicts import response_units

    db, out = tmp_path / "a.db", tmp_path / "labels.csv"
    with open_store(db) as s:
        import_dataset(FIX / "ragas_single.jsonl", "ragas", "demo", s)
        r = response_units(open_dataset("demo", s))
        s.set_label("ana", r[0], "pass", 0)
        s.set_comment("ana", r[0], "=invented \"30 s\"")
        s.set_tags("ana", r[0], ["hallucination", "vague"])
        s.set_tags("ben", r[1], ["tone"])  # a tag set without a verdict
        s.set_label("ben", r[1], "pass", 2)
    code, _, err = cli(capsys, "labels", "export", "--dataset", "demo", "--out", out, "--db", db)
    assert code == 0 and err == "exported 4 row(s) to " + str(out) + "\n"
    import csv

    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert [(x["annotator"], x["unit_kind"], x["dimension"], x["value"], x["comment"]) for x in rows] == [
        ("ana", "response", "pass", "0", "'=invented \"30 s\""),
        ("ana", "response", "tags", "hallucination vague", "'=invented \"30 s\""),
        ("ben", "response", "pass", "unsure", ""), ("ben", "response", "tags", "tone", "")]
    assert rows[0]["text"] == r[0].text and rows[0]["unit_id"] == r[0].unit_id
    code, got, _ = cli(capsys, "labels", "stats", "--dataset", "demo", "--db", db)
    assert code == 0 and "stale labels: 0 (text changed: 0, unit gone: 0)" in got  # verdicts are no orphans
    # pooled: only response 1 is judged (ana: fail; ben's unsure is no verdict): 0 of 1, Wilson [0, 0.7935]
    assert got.splitlines()[-1] == ("verdicts: 0 of 1 judged response(s) pass (0.0% [0.0%, 79.3%]); failure modes: "
                                    "hallucination 1/1, vague 1/1 (all of them: `playground tags list --dataset demo`)")
    with open_store(tmp_path / "b.db") as s:
        import_dataset(FIX / "ragas_single.jsonl", "ragas", "demo", s)
    code, got, _ = cli(capsys, "labels", "import", out, "--db", tmp_path / "b.db")
    assert code == 0 and got.startswith("imported 2 row(s) from ") and ": 5 changed, 0 already so" in got
    with open_store(tmp_path / "b.db") as s:
        assert [(t.annotator, t.raw_tags) for t in s.tags()] == [("ana", ("hallucination", "vague")),
                                                                 ("ben", ("tone",))]
        assert [(lb.annotator, lb.value) for lb in s.labels(include_unsure=True)] == [("ana", 0), ("ben", 2)]
        assert [c.text for c in s.comments()] == ["=invented \"30 s\""] and s.verify() == []
    bad = tmp_path / "bad.csv"
    bad.write_text(out.read_text().replace("hallucination vague", "Hallucination"))
    with open_store(tmp_path / "b.db") as s:
        before = s.dump()
    code, _, err = cli(capsys, "labels", "import", bad, "--db", tmp_path / "b.db")
    assert code == 1 and "rejected, nothing was written: 1 problem(s)\n  row 2: bad tag name 'Hallucination'" in err
    with open_store(tmp_path / "b.db") as s:
        assert s.dump() == before
