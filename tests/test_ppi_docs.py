"""docs/reference.md's PPI++ paragraph quotes what `calibrate golden --ppi-share 0.2 --sample-seed 0` prints:
run the command it names and compare every figure (issue 42: the paragraph had gone stale unnoticed)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from playground.cli import main

REFERENCE = Path(__file__).resolve().parent.parent / "docs" / "reference.md"
COMMAND = "playground calibrate golden --ppi-share 0.2\n  --sample-seed 0"


def _paragraph() -> str:
    text = REFERENCE.read_text(encoding="utf-8")
    start = text.index("* **Prediction-powered estimates**")
    end = text.index("* **Cross-validated floors**", start)
    return " ".join(text[start:end].split())


def _quoted(paragraph: str, pattern: str) -> tuple[str, ...]:
    found = re.search(pattern, paragraph)
    assert found, f"docs/reference.md's PPI paragraph no longer says {pattern!r}"
    return found.groups()


def _what_if_rows(out: str) -> dict[str, dict[str, str]]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("PPI what-if"))
    header = lines[start + 1].split()
    rows = {}
    for line in lines[start + 2:]:
        cells = line.split()
        if not cells or cells[0] not in ("relevant", "supported", "correct", "covered"):
            break
        rows[cells[0]] = dict(zip(header, cells, strict=False))
    return rows


@pytest.mark.slow
def test_the_ppi_paragraph_quotes_what_the_command_prints(tmp_path, monkeypatch, capsys):
    paragraph = _paragraph()
    assert " ".join(COMMAND.split()) in paragraph
    monkeypatch.chdir(tmp_path)
    assert main(["calibrate", "golden", "--ppi-share", "0.2", "--sample-seed", "0"]) == 0
    rows = _what_if_rows(capsys.readouterr().out)
    sup, rel, cov = rows["supported"], rows["relevant"], rows["covered"]
    s_low, s_high, s_width = _quoted(paragraph, r"(\d\.\d{3})–(\d\.\d{3}) for supported \((\d\.\d{3}) wide\)")
    assert (s_low, s_high) == (sup["ppi_low"], sup["ppi_high"])
    assert float(s_width) == pytest.approx(float(sup["ppi_high"]) - float(sup["ppi_low"]), abs=0.0015)
    r_low, r_high, r_width = _quoted(paragraph, r"(\d\.\d{3})–(\d\.\d{3}) for relevant \((\d\.\d{3}) wide")
    assert (r_low, r_high) == (rel["ppi_low"], rel["ppi_high"])
    assert float(r_width) == pytest.approx(float(rel["ppi_high"]) - float(rel["ppi_low"]), abs=0.0015)
    n, h_low, h_high = _quoted(paragraph, r"Wilson on the (\d+) labels alone, `human_low`–`human_high`, is "
                               r"(\d\.\d{3})–(\d\.\d{3})")
    assert (n, h_low, h_high) == (rel["n_labelled"], rel["human_low"], rel["human_high"])
    agree, c_low, c_high = _quoted(paragraph, r"agrees with all (\d+) labels\) and shows Clopper–Pearson's "
                                   r"(\d\.\d{3})–(\d\.\d{3})")
    assert (agree, c_low, c_high) == (cov["n_labelled"], cov["ppi_low"], cov["ppi_high"])
    assert cov["lam"] == "0.000"
    (needed,) = _quoted(paragraph, r"\((\d+) for supported\)")
    assert needed == sup["labels_needed"]
