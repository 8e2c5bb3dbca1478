"""The Makefile's first install says what it is doing (issue 39.5): what it installs and how long it took, pip's
own progress, and not the warnings this machine's pip configuration prints for every package."""
from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NOISE = "WARNING: Location 'file:///opt/pypi-more/simple/pip/' is ignored: it is neither a file nor a directory."


def _make(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["make", "-s", "-C", str(REPO), *args], capture_output=True, text=True, timeout=60)


def test_the_first_install_says_what_it_installs_and_shows_pips_progress(tmp_path):
    venv = tmp_path / "venv"
    planned = _make("-n", f"VENV={venv}", f"{venv}/.installed-run")
    assert planned.returncode == 0, planned.stderr
    text = planned.stdout
    assert "make: first run: creating" in text and "about 3 minutes on a fresh machine" in text
    assert "runtime dependencies" in text and "ready in" in text
    assert f"{venv}/bin/python -m pip install -e . 2>&1" in text  # no --quiet: pip's own progress is shown


def test_the_count_is_the_runtime_dependencies_of_pyproject(tmp_path):
    runtime = len(tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"])
    said = _make("--eval", "said: ; @echo $(call COUNT,)", "said", f"BIN={Path(sys.executable).parent}")
    assert said.returncode == 0, said.stderr
    assert said.stdout.strip() == str(runtime)


def test_the_location_warnings_are_dropped_and_the_rest_shown():
    lines = f"{NOISE}\\nCollecting segno\\nRequirement already satisfied: pip\\nSuccessfully installed segno\\n"
    shown = _make("--eval", f"shown: ; @printf \"{lines}\" | $(PIP_SHOW)", "shown")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines() == ["Collecting segno", "Successfully installed segno"]


def test_a_failing_pip_still_fails_the_step_and_only_noise_is_no_failure():
    failed = _make("--eval", f"failed: ; @(printf \"{NOISE}\\n\"; exit 3) | $(PIP_SHOW)", "failed")
    assert failed.returncode != 0 and failed.stdout == ""
    quiet = _make("--eval", f"quiet: ; @printf \"{NOISE}\\n\" | $(PIP_SHOW)", "quiet")
    assert quiet.returncode == 0 and quiet.stdout == ""
