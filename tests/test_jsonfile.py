"""``load_json_object``: one reader for the JSON object files (baseline, harness report), every message exact."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from playground.cli import main
from playground.errors import DataError, json_type, load_json_object

KEYS = ("config", "metrics")
HEAD = "cannot read a harness report: 1 problem(s)\n  "


def error_of(path: Path, required: tuple[str, ...] = KEYS, **kw: str) -> str:
    with pytest.raises(DataError) as info:
        load_json_object(path, "a harness report", required, **kw)
    return info.value.report()


def file_with(tmp_path: Path, content: str | bytes) -> Path:
    path = tmp_path / "report.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def test_an_object_with_every_key_comes_back_as_parsed(tmp_path):
    path = file_with(tmp_path, '{"config": {"name": "t"}, "metrics": [], "extra": null}')
    assert load_json_object(path, "a harness report", KEYS) == {"config": {"name": "t"}, "metrics": [], "extra": None}
    assert load_json_object(file_with(tmp_path, "{}"), "anything") == {}  # nothing required: {} is enough


def test_missing_file_and_a_folder_in_its_place(tmp_path):
    absent = tmp_path / "absent.json"
    assert error_of(absent) == f"{HEAD}{absent}: file not found"
    folder = tmp_path / "folder.json"
    folder.mkdir()
    assert error_of(folder) == f"{HEAD}{folder}: is a directory, expected a file"


def test_not_utf8_names_line_and_byte(tmp_path):
    # bytes: {0 \n1 "2 a3 "4 :5 space6 "7 c8 a9 f10, then é in Latin-1 (0xE9) at byte 11 on line 2
    path = file_with(tmp_path, b'{\n"a": "caf\xe9"}')
    assert error_of(path) == (
        f"{HEAD}{path}:2: not UTF-8 text (invalid continuation byte at byte 11)"
    )


@pytest.mark.parametrize("content", ["", "\n", " \t\n\n"])
def test_empty_file_is_said_so_not_a_json_error(tmp_path, content):
    path = file_with(tmp_path, content)
    assert error_of(path) == (
        f"{HEAD}{path}: empty file, expected a harness report (a JSON object)"
    )


@pytest.mark.parametrize(
    ("content", "line", "why"),
    [
        ('{"metrics": {"recall', 1, "Unterminated string starting at, column 14"),
        ('{"config": 1,\n "metrics": }', 2, "Expecting value, column 13"),
        ('{"config": 1, "metrics": 2} x', 1, "Extra data, column 29"),
    ],
)
def test_invalid_json_names_line_and_column(tmp_path, content, line, why):
    path = file_with(tmp_path, content)
    assert error_of(path) == f"{HEAD}{path}:{line}: truncated or not JSON ({why})"


@pytest.mark.parametrize(
    ("content", "kind"),
    [("[]", "array"), ('[{"config": 1, "metrics": 2}]', "array"), ('"config"', "string"), ("0", "number"),
     ("false", "boolean"), ("null", "null")],
)
def test_json_that_is_not_an_object(tmp_path, content, kind):
    path = file_with(tmp_path, content)
    assert error_of(path) == (
        f"{HEAD}{path}: not a harness report: a JSON {kind}, expected an object"
    )


def test_missing_keys_are_listed_all_at_once_in_the_order_required(tmp_path):
    one = file_with(tmp_path, '{"config": {}}')  # one key of two: exactly the missing one
    assert error_of(one) == f"{HEAD}{one}: not a harness report (missing 'metrics')"
    both = file_with(tmp_path, "{}")
    assert error_of(both, ("metrics", "config")) == (
        f"{HEAD}{both}: not a harness report (missing 'metrics', 'config')"
    )


def test_summary_shown_name_and_hint(tmp_path):
    path = file_with(tmp_path, "[]")
    assert error_of(path, summary="not a finished run", shown="RUN/report.json", hint="rerun the harness") == (
        "not a finished run: 1 problem(s)\n"
        "  RUN/report.json: not a harness report: a JSON array, expected an object — rerun the harness"
    )


def test_json_type_names():
    assert [json_type(json.loads(t)) for t in ("{}", "[]", '""', "1", "1.5", "true", "null")] == [
        "object", "array", "string", "number", "number", "boolean", "null",
    ]


# --- the two callers, through the command line ----------------------------------------------------------------


def stderr_lines(capsys, argv: list[str]) -> list[str]:
    assert main(argv) == 1
    return capsys.readouterr().err.splitlines()


def test_gate_on_report_files_that_are_not_reports(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    report = run / "report.json"
    report.write_text("[]")
    assert stderr_lines(capsys, ["harness", "gate", str(run)]) == [
        "not a finished harness run: 1 problem(s)",
        f"  {report}: not a harness report: a JSON array, expected an object — rerun the harness",
    ]
    report.write_text('{"config": {}, "metrics": {}}')
    assert stderr_lines(capsys, ["harness", "compare", str(run), str(run)]) == [
        "not a finished harness run: 1 problem(s)",
        f"  {report}: not a harness report (missing 'assertions', 'config_fingerprint') — rerun the harness",
    ]
    report.write_text("")
    assert stderr_lines(capsys, ["harness", "baseline", str(run), "--out", str(tmp_path / "b.json")]) == [
        "not a finished harness run: 1 problem(s)",
        f"  {report}: empty file, expected a harness report (a JSON object) — rerun the harness",
    ]
    assert not (tmp_path / "b.json").exists()


@pytest.fixture
def finished_run(tmp_path) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    report = {"config": {"name": "t", "gate": {"max_relative_drop": 0.05}}, "config_fingerprint": "f",
              "data_fingerprint": "d", "metrics": {"overall": {"mrr": 0.5}, "by_case_type": {}},
              "assertions": {"gated_failures": 0, "gated": {}}}
    (run / "report.json").write_text(json.dumps(report))
    return run


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{}", "not a baseline (missing 'metrics')"),
        ('{"metrics": []}', "not a baseline ('metrics' is a JSON array, expected an object)"),
        ("[]", "not a baseline: a JSON array, expected an object"),
        ("  \n", "empty file, expected a baseline (a JSON object)"),
    ],
)
def test_gate_on_baselines_that_are_not_baselines(finished_run, tmp_path, capsys, content, message):
    baseline = tmp_path / "baseline.json"
    baseline.write_text(content)
    assert stderr_lines(capsys, ["harness", "gate", str(finished_run), "--baseline", str(baseline)]) == [
        "unreadable baseline: 1 problem(s)",
        f"  {baseline}: {message}",
    ]


def test_gate_passes_on_a_real_baseline_and_notes_a_missing_one(finished_run, tmp_path, capsys):
    baseline = tmp_path / "baseline.json"
    baseline.write_text('{"metrics": {"mrr": 0.5}}')
    assert main(["harness", "gate", str(finished_run), "--baseline", str(baseline)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "gate: PASS"
    assert main(["harness", "gate", str(finished_run), "--baseline", str(tmp_path / "none.json")]) == 0
    assert capsys.readouterr().err == f"notice: no baseline at {tmp_path / 'none.json'}\n"

