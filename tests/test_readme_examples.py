"""Every ``playground ...`` command and every ``python`` block in the docs' fenced code blocks runs as written.

The docs are README.md and docs/*.md (:data:`DOCS`, in reading order: the
README, then the guides of :data:`ORDER`, then any other page by name).  The
commands are read at collection time (docs without any are a failure, not a
pass) and run in that order, each in a subprocess, from
one temporary copy of the repository — so examples that write (``--out
runs/default``) write there, and a later example can read what an earlier one
wrote, as a reader following the README would.  ``.venv/bin/playground`` and
``playground`` are both run as ``python -m playground`` with the copy first on
``PYTHONPATH``: the console script is ``playground.cli:main`` (asserted below),
the same entry point.  The label store (created first, as ``make serve``
would) and the user's data directory point into the temporary folder, and ``OLLAMA_HOST`` at the project's Ollama
protocol double, so the Ollama example runs too, without a model.

Not run, each for the reason given in :data:`SKIP` / :func:`skip_reason`:
``serve`` (a server does not exit; :func:`test_serve_example_answers` starts
the README's loopback ``serve`` example once and stops it when it answers) and
commands that need a PostgreSQL server, a running Phoenix (``--phoenix``:
tests/test_phoenix_live.py runs those against a real one) or a file the reader
supplies.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_fixtures import free_port, stop_server
from ollama_double import OllamaDouble
from test_ollama import replies

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
#: The guides in the order a reader follows them (a later page's example may read what an earlier one wrote).
ORDER = ("index.md", "annotator.md", "instructor.md", "reference.md", "engineer.md", "research-log.md",
         "benchmarks.md", "development.md", "design-history.md")
DOCS = [README, *[REPO / "docs" / n for n in ORDER if (REPO / "docs" / n).is_file()],
        *sorted(p for p in (REPO / "docs").glob("*.md") if p.name not in ORDER)]
PREFIXES = ("playground", ".venv/bin/playground")
#: Where the shared data lives beside the repository (``../shared``), or $PLAYGROUND_SHARED_DIR.
SHARED = Path(os.environ.get("PLAYGROUND_SHARED_DIR", REPO.parent / "shared"))
#: Exact commands not run, with the reason.
SKIP = {
    "calibrate external my-ragas-scores.csv --human key": "names a score file the reader brings (my-ragas-scores.csv)",
    "calibrate ragtruth --frozen --scores my-hhem-scores.csv --scores-name HHEM":
        "names a score file the reader brings (my-hhem-scores.csv; tests/test_frozen_scores.py runs --scores)",
    "harness run --dataset live --db labels.db --out runs/live --quiet":
        "scores the dataset `import traces --phoenix` pulled, which needs a running Phoenix "
        "(tests/test_phoenix_live.py runs the harness on a pulled dataset and pushes its scores)",
}
COMMAND_TIMEOUT = 600


def readme_commands(text: str) -> list[tuple[int, str]]:
    """(line number, command line) of every ``playground ...`` line in a fenced code block, in order.

    A line ending in ``\\`` goes on on the next line (as in a shell): the command is the lines joined, numbered
    by its first line.
    """
    found, fence, number = [], None, 0
    held: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        marker = re.match(r"^(`{3,}|~{3,})", stripped)
        if marker and not held:
            if fence is None:
                fence = marker.group(1)
            elif stripped.startswith(fence):
                fence = None
            continue
        if fence is None:
            continue
        if stripped.endswith("\\"):
            held.append(stripped[:-1].rstrip())
            continue
        first = number - len(held)
        stripped = " ".join([*held, stripped]) if held else stripped
        held = []
        try:
            words = shlex.split(stripped, comments=True)
        except ValueError:  # printed output with an odd quote; a command that does not parse is an error
            if re.match(r"^([A-Z_][A-Z0-9_]*=\S*\s+)*(\.venv/bin/)?playground\s", stripped):
                raise
            continue
        while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
            words = words[1:]  # VAR=value prefixes
        if words and words[0] in PREFIXES:
            found.append((first, stripped))
    return found


def heredoc_files(text: str) -> dict[str, str]:
    """``{file name: content}`` of every ``cat > FILE <<'TAG'`` … ``TAG`` in a code block (a file a guide has the
    reader write before a command reads it)."""
    found: dict[str, str] = {}
    for m in re.finditer(r"^cat > (\S+) <<'?(\w+)'?\n(.*?)^\2$", text, flags=re.M | re.S):
        found[m.group(1)] = m.group(3)
    return found


def expected_exit(command: str) -> int:
    """The exit code a guide says its command ends with (a trailing ``# exits N``), else 0."""
    m = re.search(r"#\s*exits (\d+)", command)
    return int(m.group(1)) if m else 0


def python_blocks(text: str) -> list[tuple[int, str]]:
    """(line number of the fence, code) of every fenced block marked ``python``, in order."""
    found, code, start, fence = [], [], 0, None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if fence is None:
            marker = re.match(r"^(`{3,}|~{3,})\s*python\s*$", stripped)
            if marker:
                fence, start, code = marker.group(1), number, []
            continue
        if stripped.startswith(fence) and stripped.strip("`~") == "":
            found.append((start, "\n".join(code) + "\n"))
            fence = None
        else:
            code.append(line)
    return found


def _place(path: Path, line: int) -> str:
    return f"{path.relative_to(REPO).as_posix()}:{line}"


def split_command(line: str) -> tuple[dict[str, str], list[str]]:
    """(environment assignments, arguments after the program) of one README command line."""
    words = shlex.split(line, comments=True)
    env = {}
    while re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    return env, words[1:]


def skip_reason(args: list[str]) -> str | None:
    joined = " ".join(args)
    if joined in SKIP:
        return SKIP[joined]
    if args and args[0] == "serve":
        return "serve does not exit: test_serve_example_answers starts the loopback example once"
    if any(a.startswith(("postgresql://", "postgres://")) for a in args):
        return "needs a PostgreSQL server (tests/test_store*.py run these commands on a throwaway cluster)"
    if "--phoenix" in args:
        return "needs a running Phoenix (tests/test_phoenix_live.py runs import/export traces --phoenix on a real one)"
    needs_shared = (args[:2] == ["calibrate", "ragtruth"] and len(args) == 2) or "../shared" in joined
    if needs_shared and not SHARED.is_dir():
        return f"needs the shared data beside the repository ({SHARED}); set PLAYGROUND_SHARED_DIR"
    return None


COMMANDS = [(_place(doc, n), c) for doc in DOCS for n, c in readme_commands(doc.read_text(encoding="utf-8"))]
PYTHON = [(_place(doc, n), code) for doc in DOCS for n, code in python_blocks(doc.read_text(encoding="utf-8"))]
#: Python blocks that talk to a tool the reader runs (Phoenix's server, Langfuse's): not run here.
ELSEWHERE = ("phoenix.client", "from langfuse import Langfuse")
PYTHON_NOT_RUN = [(n, code) for n, code in PYTHON if any(tool in code for tool in ELSEWHERE)]
PYTHON_RUN = [(n, code) for n, code in PYTHON if (n, code) not in PYTHON_NOT_RUN]
#: The commands not run here, each with its reason; every other command is a test of its own (so CI reports
#: no skipped test: what is not run is listed, and test_commands_not_run_are_accounted_for checks the list).
NOT_RUN = {(n, c): r for n, c in COMMANDS if (r := skip_reason(split_command(c)[1])) is not None}
RUN = [(n, c) for n, c in COMMANDS if (n, c) not in NOT_RUN]


def test_the_readme_has_commands_and_the_entry_point_is_the_cli():
    assert len(COMMANDS) >= 5, COMMANDS
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts == {"playground": "playground.cli:main"}


def test_command_extraction():
    text = ("x\n```\nplayground a b   # note\n  .venv/bin/playground c 'd e'\nmake serve\nX=1 playground f\n```\n"
            "playground no\n")
    assert readme_commands(text) == [
        (3, "playground a b   # note"),
        (4, ".venv/bin/playground c 'd e'"),
        (6, "X=1 playground f"),
    ]
    assert split_command("X=1 .venv/bin/playground c 'd e'  # why") == ({"X": "1"}, ["c", "d e"])
    assert skip_reason(["serve", "--port", "1"]) is not None and skip_reason(["harness", "run"]) is None
    text = "```\nplayground a \\\n  --b c\nrouge 'odd quote\n```\n"
    assert readme_commands(text) == [(2, "playground a --b c")]
    assert heredoc_files("```\ncat > x.csv <<'CSV'\na,b\n1,2\nCSV\n```\n") == {"x.csv": "a,b\n1,2\n"}
    assert expected_exit("playground harness gate x   # exits 1: a regression") == 1
    assert expected_exit("playground harness gate x") == 0
    text = "a\n```python\nimport x\n\nx.y()\n```\n```\nnot python\n```\n~~~python\nz = 1\n~~~\n"
    assert python_blocks(text) == [(2, "import x\n\nx.y()\n"), (10, "z = 1\n")]


def test_the_docs_are_read_in_order_and_have_python_examples():
    assert DOCS[0] == README and [p.name for p in DOCS[1:4]] == ["index.md", "annotator.md", "instructor.md"]
    assert {place.partition(":")[0] for place, _ in PYTHON} >= {"README.md", "docs/engineer.md"}


#: Labels two readers would have given in the playground (alice says yes throughout, bob alternates).
SEED_LABELS = """
import os
from playground.golden import load_dataset
from playground.store import open_store
from playground.units import dataset_units

with open_store(os.environ["PLAYGROUND_DB"], create=False) as store:
    for i, unit in enumerate(dataset_units(load_dataset())[:60]):
        for dimension in unit.dimensions:
            store.set_label("alice", unit, dimension, 1)
            store.set_label("bob", unit, dimension, i % 2)
"""


def _copy_repo(target: Path) -> Path:
    ignore = shutil.ignore_patterns(
        ".git",
        ".venv",
        "runs",
        "__pycache__",
        "*.egg-info",
        ".pytest_cache",
        "*.db",
        "*.db-wal",
        "*.db-shm",
        "build",
        "node_modules",
    )
    shutil.copytree(REPO, target, ignore=ignore, symlinks=True)
    return target


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory) -> Iterator[tuple[Path, dict[str, str]]]:
    """A copy of the repository (with ../shared beside it) and the environment every command runs in."""
    base = tmp_path_factory.mktemp("readme")
    repo = _copy_repo(base / "repo")
    if SHARED.is_dir():
        (base / "shared").symlink_to(SHARED.resolve())
    home = base / "home"
    home.mkdir()
    with OllamaDouble(chat_reply=replies) as double:
        env = {
            **os.environ,
            "PYTHONPATH": str(repo),
            "HOME": str(home),
            "XDG_DATA_HOME": str(home / ".local/share"),
            "PLAYGROUND_DB": str(base / "labels.db"),
            "OLLAMA_HOST": f"127.0.0.1:{double.port}",
        }
        env.pop("PLAYGROUND_READ_ONLY", None)
        # A reader who followed the README ran `make serve` first (`playground serve` creates the store) and
        # labelled in the browser: two annotators' labels on the first units, so the calibration examples have data.
        for doc in DOCS:
            for name, content in heredoc_files(doc.read_text(encoding="utf-8")).items():
                (repo / name).write_text(content, encoding="utf-8")
        for argv in (["-m", "playground", "labels", "init"], ["-c", SEED_LABELS]):
            subprocess.run([sys.executable, *argv], cwd=repo, env=env, check=True, capture_output=True,
                           timeout=COMMAND_TIMEOUT)
        yield repo, env


def test_python_blocks_not_run_are_only_those_for_another_tool():
    # the two Phoenix client blocks of the traces guide (getting spans out, sending annotations back) and its
    # Langfuse block (sending the scores file to a Langfuse server), no other
    assert [n.partition(":")[0] for n, _ in PYTHON_NOT_RUN] == ["docs/label-your-traces.md"] * 3
    assert ["get_spans_dataframe" in code for _, code in PYTHON_NOT_RUN] == [True, False, False]
    assert ["log_document_annotations_dataframe" in code for _, code in PYTHON_NOT_RUN] == [False, True, False]
    assert ["scores.create" in code for _, code in PYTHON_NOT_RUN] == [False, False, True]
    assert len(PYTHON_RUN) >= 2


def test_commands_not_run_are_accounted_for():
    """Only `serve` (started once by test_serve_example_answers), PostgreSQL URLs (the store tests run them on a
    throwaway cluster) and the exact commands in SKIP are left out; with the shared data present, nothing else."""
    for (line, command), reason in NOT_RUN.items():
        _, args = split_command(command)
        known = (args[:1] == ["serve"] or " ".join(args) in SKIP or any(a.startswith("postgres") for a in args)
                 or "--phoenix" in args)
        assert known or (not SHARED.is_dir() and reason.startswith("needs the shared data")), (line, command)
    if os.environ.get("PLAYGROUND_REQUIRE_SHARED") == "1":
        assert SHARED.is_dir() and not any(r.startswith("needs the shared data") for r in NOT_RUN.values())
    assert len(RUN) >= 20


@pytest.mark.slow
@pytest.mark.parametrize(("line", "command"), RUN, ids=[n for n, _ in RUN])
def test_readme_command_runs(sandbox, line, command):
    repo, env = sandbox
    extra, args = split_command(command)
    proc = subprocess.run(
        [sys.executable, "-m", "playground", *args],
        cwd=repo,
        env={**env, **extra},
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    want = expected_exit(command)
    assert proc.returncode == want, f"{line}: {command}\nexit {proc.returncode}\n{proc.stderr[-3000:]}"
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize(("line", "code"), PYTHON_RUN, ids=[n for n, _ in PYTHON_RUN])
def test_python_example_runs(sandbox, line, code):
    """Each ``python`` block runs whole in a fresh interpreter from the repository copy (its asserts checked)."""
    repo, env = sandbox
    proc = subprocess.run([sys.executable, "-c", code], cwd=repo, env={**env, "MPLBACKEND": "Agg"},
                          capture_output=True, text=True, timeout=COMMAND_TIMEOUT, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"{line}\n{code}\nexit {proc.returncode}\n{proc.stderr[-3000:]}"


def _serve_example() -> tuple[int, str] | None:
    for line, command in COMMANDS:
        _, args = split_command(command)
        host = args[args.index("--host") + 1] if "--host" in args else "127.0.0.1"
        if args[:1] == ["serve"] and host in ("127.0.0.1", "localhost") and not any("postgres" in a for a in args):
            return line, command
    return None


@pytest.mark.slow
def test_serve_example_answers(sandbox):
    example = _serve_example()
    assert example is not None, "the docs have no loopback `playground serve` example in a code block"
    line, command = example
    repo, env = sandbox
    _, args = split_command(command)
    port = free_port()
    if "--port" in args:
        args[args.index("--port") + 1] = str(port)  # the README's port may be taken on this machine
    else:
        args += ["--port", str(port)]
    log = repo.parent / "serve.log"
    with open(log, "wb") as fh:
        proc = subprocess.Popen(
            [sys.executable, "-m", "playground", *args],
            cwd=repo,
            env=env,
            stdout=fh,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 120
        status = None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                # any HTTP answer will do, and a path that is not a page starts no kernel (a GET of / would)
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/favicon.ico", timeout=2) as response:
                    status = response.status
            except urllib.error.HTTPError as answer:
                status = answer.code
            except OSError:
                time.sleep(0.3)
                continue
            break
        assert status is not None and status < 500, (
            f"{line}: {command}\nstatus {status}\n{log.read_text(errors='replace')[-3000:]}"
        )
        assert proc.poll() is None, "the server exited after answering"
    finally:
        stop_server(proc)
    assert proc.returncode is not None
