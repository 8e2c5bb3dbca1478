"""The docs are tests: every command and ``python`` block of README.md and docs/*.md runs as written, and every
output a page shows is what the command prints now.

The pages (:data:`DOCS`) are read in reading order: the README, then the guides of :data:`ORDER`, then any
other page by name.  What is a command, what is printed output and how a block that cannot run here is marked
are the rules of :mod:`docs_walk`.  Every command runs with ``bash -c`` exactly as the page writes it, in that
order, from a temporary copy of the repository per page (the reader's clone) with ``../shared`` beside it, a fresh
label store, ``.venv/bin/playground`` and ``.venv/bin/python`` there (the project's entry point,
``playground.cli:main``, and this interpreter), and ``OLLAMA_HOST`` at the project's Ollama protocol double.
A command's printed output is compared, line by line and figure by figure, with the output block the page shows
after it (:func:`docs_walk.stale_lines`); a stale figure fails naming the page and line.

A documented ``serve`` is started where the walk meets it (on a free port instead of the one written, the only
change), the link it gives out is opened in Chromium (the page, or the room with ``--read-only``) and must render
its widgets, and the server is stopped.  Commands marked ``# not run by the docs test: WHY`` are listed with
their reason (:func:`test_commands_not_run_are_listed`).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_fixtures import CHROMIUM, CHROMIUM_ARGS, PAGE_TIMEOUT_MS, free_port, need_chromium, stop_server
from docs_walk import (
    Block,
    Command,
    blocks_of,
    commands_of,
    expected_exit,
    line_pattern,
    outputs_of,
    python_blocks,
    stale_lines,
)
from ollama_double import OllamaDouble
from test_ollama import replies

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
#: The guides in the order a reader follows them (a later page's example may read what an earlier one wrote).
ORDER = ("index.md", "annotator.md", "instructor.md", "reference.md", "engineer.md", "research-log.md",
         "benchmarks.md", "development.md", "design-history.md")
DOCS = [README, *[REPO / "docs" / n for n in ORDER if (REPO / "docs" / n).is_file()],
        *sorted(p for p in (REPO / "docs").glob("*.md") if p.name not in ORDER)]
#: Where the shared data lives beside the repository (``../shared``), or $PLAYGROUND_SHARED_DIR.
SHARED = Path(os.environ.get("PLAYGROUND_SHARED_DIR", REPO.parent / "shared"))
COMMAND_TIMEOUT = 600


def _place(path: Path, line: int) -> str:
    return f"{path.relative_to(REPO).as_posix()}:{line}"


def _is_serve(command: Command) -> bool:
    return re.search(r"(^|\s)(\.venv/bin/)?playground\s+serve(\s|$)", command.text) is not None


BLOCKS: dict[Path, list[Block]] = {doc: blocks_of(doc, doc.read_text(encoding="utf-8")) for doc in DOCS}
COMMANDS: list[Command] = [c for doc in DOCS for i, b in enumerate(BLOCKS[doc]) for c in commands_of(b, i)]
NOT_RUN = [c for c in COMMANDS if c.not_run]
SERVES = [c for c in COMMANDS if not c.not_run and _is_serve(c)]
RUN = [c for c in COMMANDS if not c.not_run]
#: How long a documented ``serve`` may take to give out its link and render a page (a cold machine, 2 cores).
SERVE_TIMEOUT = 180.0
#: (page, command block index) -> the printed output the page promises for it, with its lines' numbers.
PROMISED: dict[tuple[Path, int], list[tuple[int, str]]] = {}
for _doc in DOCS:
    for _index, _fence, _lines in outputs_of(BLOCKS[_doc]):
        PROMISED.setdefault((_doc, _index), []).extend(_lines)
#: Python blocks that talk to a tool the reader runs (Phoenix's server, Langfuse's): not run here.
ELSEWHERE = ("phoenix.client", "from langfuse import Langfuse")
PYTHON = [b for doc in DOCS for b in python_blocks(BLOCKS[doc])]
PYTHON_NOT_RUN = [b for b in PYTHON if any(tool in "\n".join(b.lines) for tool in ELSEWHERE)]
PYTHON_RUN = [b for b in PYTHON if b not in PYTHON_NOT_RUN]
#: Printed output seen so far, per (page, command block index): a block's promised output is checked once its
#: last command has run.
PRINTED: dict[tuple[Path, int], str] = {}


def _last_of_block(command: Command) -> bool:
    same = [c for c in COMMANDS if c.doc == command.doc and c.block == command.block and not c.not_run]
    return bool(same) and same[-1] == command


def test_the_readme_has_commands_and_the_entry_point_is_the_cli():
    assert len(RUN) >= 20 and len(SERVES) >= 3, (len(RUN), len(SERVES))
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts == {"playground": "playground.cli:main"}


def test_the_docs_are_read_in_order_and_have_python_examples():
    assert DOCS[0] == README and [p.name for p in DOCS[1:4]] == ["index.md", "annotator.md", "instructor.md"]
    assert {_place(b.doc, b.line).partition(":")[0] for b in PYTHON} >= {"README.md", "docs/engineer.md"}


def test_python_blocks_not_run_are_only_those_for_another_tool():
    # the two Phoenix client blocks of the traces guide (getting spans out, sending annotations back) and its
    # Langfuse block (sending the scores file to a Langfuse server), no other
    assert [_place(b.doc, b.line).partition(":")[0] for b in PYTHON_NOT_RUN] == ["docs/label-your-traces.md"] * 3
    codes = ["\n".join(b.lines) for b in PYTHON_NOT_RUN]
    assert [("get_spans_dataframe" in c, "log_document_annotations_dataframe" in c, "scores.create" in c)
            for c in codes] == [(True, False, False), (False, True, False), (False, False, True)]
    assert len(PYTHON_RUN) >= 2


def test_commands_not_run_are_listed(capsys):
    """Every command left out carries its marker's reason; the list is printed (``pytest -s``) and counted."""
    listing = [f"{_place(c.doc, c.line)}: {c.text.splitlines()[0][:80]}  — {c.not_run}" for c in NOT_RUN]
    assert all(c.not_run and len(c.not_run) >= 10 for c in NOT_RUN), listing
    with capsys.disabled():
        print(f"\n{len(NOT_RUN)} documented command(s) not run here, each marked in its page:")
        print("\n".join(f"  {line}" for line in listing))
    assert len(NOT_RUN) <= 40, "more commands marked than run-worthy reasons would explain"


# ---------------------------------------------------------------------------------------------------- the rules


def test_blocks_commands_and_output_are_read_as_a_shell_and_a_reader_would():
    text = ("x\n```\nplayground a b   # note\n  .venv/bin/playground c 'd e'\n"
            "make serve  # not run by the docs test: it serves\n"
            "X=1 playground f \\\n  --g h\ncat > t.csv <<'CSV'\na,b\nCSV\nnot a command\n```\n"
            "prose\n```\nprinted 3 lines\n```\n```yaml\nplayground: no\n```\n"
            "```\n# not run by the docs test: needs a model\nollama pull m\n```\n")
    blocks = blocks_of(Path("p.md"), text)
    assert [(b.line, b.lang) for b in blocks] == [(2, ""), (14, ""), (17, "yaml"), (20, "")]
    commands = commands_of(blocks[0], 0)
    assert [(c.line, c.text, c.not_run) for c in commands] == [
        (3, "playground a b   # note", None),
        (4, ".venv/bin/playground c 'd e'", None),
        (5, "make serve  # not run by the docs test: it serves", "it serves"),
        (6, "X=1 playground f \\\n--g h", None),
        (8, "cat > t.csv <<'CSV'\na,b\nCSV", None),
    ]
    assert commands_of(blocks[2], 2) == []
    assert [(c.text, c.not_run) for c in commands_of(blocks[3], 3)] == [("ollama pull m", "needs a model")]
    assert outputs_of(blocks) == [(0, 14, [(15, "printed 3 lines")])]
    assert expected_exit("playground harness gate x   # exits 1: a regression") == 1
    assert expected_exit("playground harness gate x") == 0


def test_a_promised_line_matches_only_with_the_same_figures():
    assert line_pattern("rate  0.603 [0.633, 0.836]").fullmatch("rate 0.603 [0.633, 0.836]")
    assert not line_pattern("rate 0.603 [0.633, 0.836]").fullmatch("rate 0.603 [0.633, 0.837]")
    assert line_pattern("in sqlite:///…/labels.db").fullmatch("in sqlite:////tmp/x/labels.db")
    assert line_pattern("1  2026-12-01T21:58:24.400993+00:00  alice").fullmatch("1 2027-01-02T03:04:05.1+00:00 alice")
    assert not line_pattern("ppi 1.000").fullmatch("ppi 1.0001")
    printed = "supported 0.577 [0.520, 0.727]\nmore_labels 258\n"
    assert stale_lines([(7, "supported 0.578 [0.520, 0.716]"), (8, "..."), (9, "more_labels 258")], printed) == [
        "7: doc says 'supported 0.578 [0.520, 0.716]' / prints 'supported 0.577 [0.520, 0.727]'"]
    assert stale_lines([(3, "gone for good")], printed) == ["3: doc says 'gone for good' / prints no such line"]


# ---------------------------------------------------------------------------------------------------- the walk


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
    ignore = shutil.ignore_patterns(".git", ".venv", "runs", "__pycache__", "*.egg-info", ".pytest_cache", "*.db",
                                    "*.db-wal", "*.db-shm", "build", "node_modules", "test-artifacts")
    shutil.copytree(REPO, target, ignore=ignore, symlinks=True)
    return target


def make_sandbox(base: Path, env_extra: dict[str, str]) -> tuple[Path, dict[str, str]]:
    """A reader's clone: the repository copied to ``base/repo`` (a git work tree, ``../shared`` beside it),
    ``.venv/bin/playground`` and ``.venv/bin/python`` running this interpreter on the copy, and the environment
    every command runs in."""
    repo = _copy_repo(base / "repo")
    if SHARED.is_dir():
        (base / "shared").symlink_to(SHARED.resolve())
    home = base / "home"
    home.mkdir()
    bin_dir = repo / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name, target in (("playground", f'"{sys.executable}" -m playground'), ("python", f'"{sys.executable}"')):
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec {target} "$@"\n', encoding="utf-8")
        shim.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(repo),
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "PLAYGROUND_DB": str(base / "labels.db"),
        "GIT_AUTHOR_NAME": "reader", "GIT_AUTHOR_EMAIL": "reader@example.org",
        "GIT_COMMITTER_NAME": "reader", "GIT_COMMITTER_EMAIL": "reader@example.org",
        **env_extra,
    }
    for key in ("PLAYGROUND_READ_ONLY", "PYTEST_CURRENT_TEST", "PLAYGROUND_DATASET"):
        env.pop(key, None)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True, env=env)
    return repo, env


@pytest.fixture(scope="module")
def sandboxes(tmp_path_factory) -> Iterator[dict[Path, tuple[Path, dict[str, str]]]]:
    """One reader's clone per page, made when the walk reaches the page: each guide is walked from a fresh
    folder and a fresh store, as a reader who opens it would."""
    made: dict[Path, tuple[Path, dict[str, str]]] = {}
    with OllamaDouble(chat_reply=replies) as double:
        yield _Sandboxes(made, tmp_path_factory, {"OLLAMA_HOST": f"127.0.0.1:{double.port}"})


class _Sandboxes(dict):
    def __init__(self, made, factory, extra):
        super().__init__(made)
        self.factory, self.extra = factory, extra

    def __missing__(self, doc: Path) -> tuple[Path, dict[str, str]]:
        repo, env = make_sandbox(self.factory.mktemp(doc.stem), self.extra)
        # A reader who followed the README ran `make serve` first (which creates the store) and labelled in the
        # browser: two annotators' labels on the first units, so the calibration examples have data.
        for argv in (["-m", "playground", "labels", "init"], ["-c", SEED_LABELS]):
            subprocess.run([sys.executable, *argv], cwd=repo, env=env, check=True, capture_output=True,
                           timeout=COMMAND_TIMEOUT)
        self[doc] = (repo, env)
        return repo, env


def _exported(command: str, repo: Path, env: dict[str, str]) -> dict[str, str]:
    """The variables an ``export`` line sets, as bash sets them."""
    proc = subprocess.run(["bash", "-c", f"{command}\nenv -0"], cwd=repo, env=env, capture_output=True,
                          timeout=60, check=True)
    after = dict(item.split("=", 1) for item in proc.stdout.decode().split("\0") if "=" in item)
    return {k: v for k, v in after.items() if env.get(k) != v and not k.startswith(("SHLVL", "_", "OLDPWD"))}


@pytest.fixture(scope="module")
def docs_browser():
    need_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


def _on_free_port(text: str) -> tuple[str, int]:
    port = free_port()
    if re.search(r"--port\s+\d+", text):
        return re.sub(r"--port\s+\d+", f"--port {port}", text), port
    return text.replace("serve", f"serve --port {port}", 1), port


def _links_given(text: str, log: Path, repo: Path) -> list[str]:
    """The links a started ``serve`` gave out: in its log, or in its ``--links-file``."""
    said = log.read_text(errors="replace")
    m = re.search(r"--links-file\s+(\S+)", text)
    if m and "are in the file given with --links-file" in said:
        target = Path(os.path.expanduser(m.group(1)))
        said += (target if target.is_absolute() else repo / target).read_text(encoding="utf-8")
    if "playground: ready" not in said:  # the links come just before it ("session ready" lines are the kernels')
        return []
    return [u for u in re.findall(r"https?://\S+", said) if "[secret]" not in u]


def _page_to_open(links: list[str], port: int, read_only: bool) -> str:
    """The student's link for a roster class, else the join link, the instructor's for the room, else the page."""
    links = [re.sub(r"^http://[^/]+/", f"http://127.0.0.1:{port}/", u) for u in links if f":{port}" in u]
    for want in ("annotator=", "token="):
        for url in links:
            if want in url:
                return url if read_only or "annotator=" in url else url + "&annotator=docs-reader"
    return f"http://127.0.0.1:{port}/" + ("" if read_only else "?annotator=docs-reader")


def _serve_and_open(command: Command, repo: Path, env: dict[str, str], browser) -> None:
    """Start a documented ``serve`` as written (on a free port), open what it gives out in Chromium, stop it."""
    place = _place(command.doc, command.line)
    text, port = _on_free_port(command.text)
    log = repo.parent / f"serve-{port}.log"
    with open(log, "wb") as fh:
        proc = subprocess.Popen(["bash", "-c", f"exec env {text}"], cwd=repo, env=env, stdout=fh,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + SERVE_TIMEOUT
        while not (links := _links_given(text, log, repo)) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
        said = log.read_text(errors="replace")
        assert proc.poll() is None and "playground: ready" in said, f"{place}: {command.text}\n{said[-3000:]}"
        url = _page_to_open(links, port, "--read-only" in text)
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        try:
            page = context.new_page()
            page.goto(url, timeout=PAGE_TIMEOUT_MS)
            widget = ".pr-room .pr-progress" if "--read-only" in text else ".pg-app"
            page.locator(widget).first.wait_for(state="visible", timeout=PAGE_TIMEOUT_MS)
            assert "cannot start" not in page.inner_text("body"), f"{place}: {page.inner_text('body')[:2000]}"
        finally:
            context.close()
    finally:
        stop_server(proc)


@pytest.mark.slow
@pytest.mark.parametrize("command", [
    pytest.param(c, id=_place(c.doc, c.line), marks=[pytest.mark.browser] if _is_serve(c) else []) for c in RUN])
def test_documented_command_runs_and_prints_what_the_page_shows(sandboxes, command, request):
    repo, env = sandboxes[command.doc]
    place = _place(command.doc, command.line)
    if _is_serve(command):
        _serve_and_open(command, repo, env, request.getfixturevalue("docs_browser"))
        return
    if command.text.startswith("export "):
        env.update(_exported(command.text, repo, env))
        return
    proc = subprocess.run(["bash", "-c", command.text], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=COMMAND_TIMEOUT, stdin=subprocess.DEVNULL)
    want = expected_exit(command.text)
    assert proc.returncode == want, f"{place}: {command.text}\nexit {proc.returncode}\n{proc.stderr[-3000:]}"
    assert "Traceback" not in proc.stderr, f"{place}\n{proc.stderr[-3000:]}"
    key = (command.doc, command.block)
    PRINTED[key] = PRINTED.get(key, "") + proc.stdout + "\n" + proc.stderr
    if _last_of_block(command) and key in PROMISED:
        printed = PRINTED[key].replace(str(repo), "/…").replace(str(Path(env["HOME"])), "/home/you")
        stale = stale_lines(PROMISED[key], printed)
        page = command.doc.relative_to(REPO).as_posix()
        assert not stale, (f"{page}: the output shown after the commands of line {command.line} is stale:\n"
                           + "\n".join(f"  {page}:{s}" for s in stale) + f"\n--- printed now:\n{printed[-4000:]}")


@pytest.mark.slow
@pytest.mark.parametrize("block", PYTHON_RUN, ids=[_place(b.doc, b.line) for b in PYTHON_RUN])
def test_python_example_runs(sandboxes, block):
    """Each ``python`` block runs whole in a fresh interpreter from its page's clone (its asserts checked)."""
    repo, env = sandboxes[block.doc]
    code = "\n".join(block.lines) + "\n"
    proc = subprocess.run([sys.executable, "-c", code], cwd=repo, env={**env, "MPLBACKEND": "Agg"},
                          capture_output=True, text=True, timeout=COMMAND_TIMEOUT, stdin=subprocess.DEVNULL)
    place = _place(block.doc, block.line)
    assert proc.returncode == 0, f"{place}\n{code}\nexit {proc.returncode}\n{proc.stderr[-3000:]}"
