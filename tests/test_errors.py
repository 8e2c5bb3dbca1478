"""Bad inputs get one error line each with their place, exit code 1, no traceback (issue 17 items 9 and 10)."""
from __future__ import annotations

import errno
import fcntl
import json
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from playground import safeyaml
from playground.cli import main
from playground.harness import run as run_module
from playground.harness.run import INCOMPLETE

REPO = Path(__file__).resolve().parent.parent


def _fails(capsys, argv: list[str]) -> list[str]:
    """Run the CLI, expect exit 1 and no traceback; return stderr's lines."""
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 1, captured
    assert "Traceback" not in captured.err and "Traceback" not in captured.out
    return captured.err.splitlines()


# --- corpus and golden set: what a folder can hold besides files -------------------------------


def test_symlinks_and_directories_in_the_data(mini_root, capsys):
    (mini_root / "corpus/acme/loop.md").symlink_to("loop.md")
    (mini_root / "corpus/acme/gone.md").symlink_to("nowhere.md")
    (mini_root / "corpus/globex/folder.md").mkdir()
    (mini_root / "golden/cases/folder.yaml").mkdir()
    (mini_root / "golden/responses/loop.yaml").symlink_to("loop.yaml")
    (mini_root / "golden/responses/gone.yaml").symlink_to("missing.yaml")
    err = _fails(capsys, ["data", "check", "--root", str(mini_root)])
    assert err == [
        "invalid golden set: 6 problem(s)",
        "  corpus/acme/gone.md: dangling symbolic link (its target nowhere.md does not exist)",
        "  corpus/acme/loop.md: symbolic link loop (following the link leads back to it)",
        "  corpus/globex/folder.md: is a directory, expected a file",
        "  golden/cases/folder.yaml: is a directory, expected a file",
        "  golden/responses/gone.yaml: dangling symbolic link (its target missing.yaml does not exist)",
        "  golden/responses/loop.yaml: symbolic link loop (following the link leads back to it)",
    ]


def test_non_utf8_golden_file_names_the_line(mini_root, capsys):
    path = mini_root / "golden/cases/cases.yaml"
    data = path.read_bytes()
    path.write_bytes(data + b"# caf\xe9\n")
    line = data.count(b"\n") + 1
    err = _fails(capsys, ["data", "check", "--root", str(mini_root)])
    assert (
        err[1]
        == f"  golden/cases/cases.yaml:{line}: not UTF-8 text (invalid continuation byte at byte {len(data) + 5})"
    )


# --- YAML alias bombs -------------------------------------------------------------------------


def _bomb(levels: int = 9, width: int = 9) -> str:
    """The classic 'billion laughs': each anchor is a list of ``width`` aliases of the previous one."""
    lines = ["a0: &a0 [" + ", ".join(['"lol"'] * width) + "]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def test_alias_bomb_in_a_golden_file_fails_fast(mini_root, capsys):
    text = _bomb() + "cases: [*a9]\n"
    assert len(text.encode()) < 1024
    (mini_root / "golden/cases/bomb.yaml").write_text(text)
    start = time.perf_counter()
    err = _fails(capsys, ["data", "check", "--root", str(mini_root)])
    assert time.perf_counter() - start < 5  # not a benchmark: the unbounded load ran out of memory
    # written: the root mapping, 11 keys, 10 sequences, the 9 strings of a0 and the 'cases' list = 32 nodes
    assert err == [
        "invalid golden set: 1 problem(s)",
        "  golden/cases/bomb.yaml:1: malformed YAML: aliases expand 32 written nodes to "
        f"{_expanded():,} (at most 10,000 more are allowed)",
    ]


def _expanded() -> int:
    # level i sequence expands to 1 + 9 * size(i-1), level 0 to 1 + 9 strings
    size = [10]
    for _ in range(9):
        size.append(1 + 9 * size[-1])
    keys = 11  # a0..a9 and cases
    return 1 + keys + sum(size) + (1 + size[9])


def test_alias_bomb_in_a_corpus_front_matter_and_a_config(mini_root, tmp_path, capsys):
    article = mini_root / "corpus/acme/retries.md"
    body = article.read_text()
    article.write_text("---\n" + _bomb() + body.split("---\n", 1)[1])
    err = _fails(capsys, ["data", "check", "--root", str(mini_root)])
    assert err[1].startswith("  corpus/acme/retries.md:2: malformed YAML front matter: aliases expand ")
    config = tmp_path / "bomb.yaml"
    config.write_text(_bomb() + "description: *a9\n")
    err = _fails(capsys, ["harness", "run", "--config", str(config), "--out", str(tmp_path / "o")])
    assert err[1].startswith(f"  {config}:1: malformed YAML: aliases expand ")
    assert not (tmp_path / "o").exists()


def test_alias_bound_and_recursion():
    # base is a list of 99 scalars (100 nodes); each alias of it adds 100 nodes, an alias of a scalar 1
    exact = "base: &b [" + ", ".join(["1"] * 99) + "]\none: &o x\nuse: [" + ", ".join(["*b"] * 100) + "]\n"
    # written: root 1 + 3 keys + base 100 + 'x' 1 + use list 1 = 106; aliases add 100 x 100 = 10,000: at the bound
    written, expanded = safeyaml.expansion(safeyaml.BoundedLoader(exact).get_single_node())
    assert (written, expanded) == (106, 106 + 10_000)
    assert safeyaml.load(exact)["use"][99] == [1] * 99
    with pytest.raises(safeyaml.AliasLimitError, match="aliases expand 107 written nodes to 10,108 "):
        safeyaml.load(exact + "more: *o\n")  # one node beyond the bound (the key is written, the alias is not)
    with pytest.raises(safeyaml.AliasLimitError, match="recursive alias"):
        safeyaml.load("a: &a [1, *a]\n")


def test_duplicate_keys_are_refused_everywhere(mini_root, tmp_path, capsys):
    """PyYAML keeps the last of two equal keys silently; the project's loader names both lines."""
    cases = mini_root / "golden/cases/cases.yaml"
    text = cases.read_text()
    cases.write_text(text.replace("    notes: One source.\n", "    notes: One source.\n    query: Again?\n", 1))
    article = mini_root / "corpus/acme/retries.md"
    article.write_text(article.read_text().replace("version: 2\n", "version: 2\nversion: 3\n", 1))
    err = _fails(capsys, ["data", "check", "--root", str(mini_root)])
    assert err[:3] == [
        "invalid golden set: 5 problem(s)",
        "  corpus/acme/retries.md:6: malformed YAML front matter: duplicate key 'version' (first on line 5)",
        "  golden/cases/cases.yaml:17: malformed YAML: duplicate key 'query' (first on line 5)",
    ]
    # the cases file is refused whole, so its responses are reported as pointing at unknown cases
    assert all("unknown case_id" in line for line in err[3:]) and len(err[3:]) == 3
    config = tmp_path / "twice.yaml"
    config.write_text("retrieval: {k: 5, k: 3}\n")
    err = _fails(capsys, ["harness", "run", "--config", str(config), "--out", str(tmp_path / "o")])
    assert err == ["invalid configuration: 1 problem(s)",
                   f"  {config}:1: malformed YAML: duplicate key 'k' (first on line 1)"]
    assert safeyaml.load("base: &b {p: 1}\nd:\n  <<: *b\n  q: 2\n")["d"] == {"p": 1, "q": 2}  # merge keys stay


# --- harness run: --config and --out ----------------------------------------------------------


def test_config_naming_a_directory_or_non_utf8_file(tmp_path, capsys):
    err = _fails(capsys, ["harness", "run", "--config", str(tmp_path), "--out", str(tmp_path / "o")])
    assert err == ["invalid configuration: 1 problem(s)", f"  {tmp_path}: is a directory, expected a file"]
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes(b"name: x\ndescription: caf\xe9\n")
    err = _fails(capsys, ["harness", "run", "--config", str(bad), "--out", str(tmp_path / "o")])
    assert err == [
        "invalid configuration: 1 problem(s)",
        f"  {bad}:2: not UTF-8 text (invalid continuation byte at byte 24)",
    ]
    err = _fails(capsys, ["harness", "run", "--config", str(tmp_path / "none.yaml"), "--out", str(tmp_path / "o")])
    assert err == ["invalid configuration: 1 problem(s)", f"  {tmp_path / 'none.yaml'}: configuration file not found"]
    assert not (tmp_path / "o").exists()


def test_out_naming_a_file(mini_root, tmp_path, capsys):
    target = tmp_path / "report.txt"
    target.write_text("keep me")
    err = _fails(capsys, ["harness", "run", "--out", str(target), "--root", str(mini_root)])
    assert err == [f"error: --out {target} is a file, not a folder — choose a new or empty folder"]
    err = _fails(capsys, ["harness", "run", "--out", str(target / "run"), "--root", str(mini_root)])
    assert err == [f"error: --out {target / 'run'}: {target} is a file, not a folder"]
    assert target.read_text() == "keep me"


@pytest.mark.slow
def test_disk_full_under_out(mini_root, tmp_path, capsys, monkeypatch):
    real = run_module._atomic_write
    calls = []

    def full_after_four(path, text):
        calls.append(path.name)
        if len(calls) > 4:  # run.json, INCOMPLETE, config.yaml, the first checkpoint; then the disk is full
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        real(path, text)

    monkeypatch.setattr(run_module, "_atomic_write", full_after_four)
    out = tmp_path / "run"
    err = _fails(capsys, ["harness", "run", "--out", str(out), "--root", str(mini_root), "--quiet"])
    assert err == [
        f"error: cannot write the run to {out} ({out}/checkpoints/GC-0002.json): No space left on device",
        f"finished cases are kept in {out}/checkpoints; free space and rerun with --resume",
    ]
    assert (out / INCOMPLETE).is_file() and not (out / "report.json").exists()
    monkeypatch.setattr(run_module, "_atomic_write", real)
    assert main(["harness", "run", "--out", str(out), "--root", str(mini_root), "--resume", "--quiet"]) == 0
    assert not (out / INCOMPLETE).exists() and (out / "report.json").is_file()


def test_empty_checkpoint_on_resume(mini_root, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["harness", "run", "--out", str(out), "--root", str(mini_root), "--quiet"]) == 0
    capsys.readouterr()
    empty = out / "checkpoints" / "GC-0001.json"
    empty.write_text("")
    err = _fails(capsys, ["harness", "run", "--out", str(out), "--root", str(mini_root), "--resume"])
    assert err == [f"error: cannot resume: unreadable checkpoint {empty} (empty) — delete it and rerun with --resume"]
    empty.unlink()
    assert main(["harness", "run", "--out", str(out), "--root", str(mini_root), "--resume", "--quiet"]) == 0


# --- gate and compare on folders that are not finished runs -------------------------------------


@pytest.fixture
def finished_run(mini_root, tmp_path, capsys) -> Path:
    out = tmp_path / "done"
    assert main(["harness", "run", "--out", str(out), "--root", str(mini_root), "--quiet"]) == 0
    capsys.readouterr()
    return out


@pytest.mark.parametrize("command", ["gate", "compare", "baseline"])
def test_folder_without_report(finished_run, tmp_path, capsys, command):
    empty = tmp_path / "empty"
    empty.mkdir()
    argv = ["harness", command, str(empty)] + ([str(finished_run)] if command == "compare" else [])
    err = _fails(capsys, argv)
    assert err == [
        "not a finished harness run: 1 problem(s)",
        f"  {empty}/report.json: missing: is this a harness run folder (playground harness run --out)?",
    ]
    (finished_run / "report.json").unlink()
    argv = ["harness", command, str(finished_run)] + ([str(finished_run)] if command == "compare" else [])
    err = _fails(capsys, argv)
    assert err[1] == f"  {finished_run}/report.json: missing: the run did not finish — rerun it with --resume"
    err = _fails(capsys, ["harness", command, str(tmp_path / "nope")] + ([str(empty)] if command == "compare" else []))
    assert err[1] == f"  {tmp_path / 'nope'}/report.json: no run folder {tmp_path / 'nope'}"


def test_truncated_report_and_baseline(finished_run, tmp_path, capsys):
    report = finished_run / "report.json"
    text = report.read_text()
    report.write_text(text[:200])
    err = _fails(capsys, ["harness", "gate", str(finished_run)])
    assert err[0] == "not a finished harness run: 1 problem(s)"
    assert (
        err[1].startswith(f"  {report}:") and "truncated or not JSON" in err[1] and err[1].endswith("rerun the harness")
    )
    report.write_text(text)
    baseline = tmp_path / "baseline.json"
    baseline.write_text('{"metrics": {"recall')
    err = _fails(capsys, ["harness", "gate", str(finished_run), "--baseline", str(baseline)])
    assert err == [
        "unreadable baseline: 1 problem(s)",
        f"  {baseline}:1: truncated or not JSON (Unterminated string starting at, column 14)",
    ]


# --- RAGTruth files that are not UTF-8 ----------------------------------------------------------


def test_non_utf8_ragtruth_names_file_and_line(tmp_path, capsys):
    path = tmp_path / "claims.jsonl"
    path.write_bytes(b'{"id": 1}\n{"claim": "caf\xe9"}\n')
    code = main(["import", "ragtruth", str(path), "--db", str(tmp_path / "labels.db")])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert f"{path}: 1 problem(s)\n  line 2: not UTF-8 text (invalid continuation byte at byte 24)" in err


# --- progress bars only on a terminal ------------------------------------------------------------


def _run_with_stderr(stderr, mini_root: Path, out: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-m", "playground", "harness", "run", "--out", str(out), "--root", str(mini_root)],
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        env=env,
    )


@pytest.mark.slow
def test_progress_bar_only_on_a_terminal(mini_root, tmp_path):
    proc = _run_with_stderr(subprocess.PIPE, mini_root, tmp_path / "pipe")
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0
    assert b"\r" not in err and b"case/s" not in err and b"harness default" not in err
    leader, follower = pty.openpty()
    # a real terminal's size: tqdm draws nothing in a 0-column window
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    proc = _run_with_stderr(follower, mini_root, tmp_path / "tty")
    os.close(follower)
    seen = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        if not ready:
            break
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    assert proc.wait(timeout=120) == 0
    assert b"harness default: 100%" in seen and b"2/2" in seen


def test_reports_hold_no_marker_after_success(finished_run):
    assert not (finished_run / INCOMPLETE).exists()
    assert json.loads((finished_run / "report.json").read_text())["counts"]["cases"] == 2


# --- the judge's reply ----------------------------------------------------------------------------


def test_judge_reply_that_is_not_json_names_the_json_error_and_its_position():
    """json.JSONDecodeError carries .msg and .pos (a plain ValueError does not: catching that crashed)."""
    from playground.harness.judge import JudgementInvalid, parse_judgement

    with pytest.raises(JudgementInvalid) as info:
        parse_judgement("```json\n{'faithfulness': 1}\n```")
    # inside the fence the text is "{'faithfulness': 1}": a property name must be in double quotes, at char 1
    assert str(info.value) == ("not JSON (Expecting property name enclosed in double quotes at char 1; "
                               "reply began \"```json {'faithfulness': 1} ```\")")
    with pytest.raises(JudgementInvalid, match=r"^not JSON \(Expecting value at char 0; reply began ''\)$"):
        parse_judgement("")
