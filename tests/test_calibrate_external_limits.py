"""``calibrate external`` reads every input within the import bounds (issue 29.6): the scores file or result
table, each ``--rerun``, ``--ragtruth`` (human labels), ``--scorer-config``, ``--judge-prompt`` and ``--run``'s
units.csv are regular files of at most ``MAX_FILE_BYTES``; a FIFO is refused without waiting for a writer and
an oversize file without being read, each with one line naming the option."""
from __future__ import annotations

import os

import pytest
from calibration_data import make_labelled

from playground import limits
from playground.cli import main


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("limits")
    db, result, _h, _s = make_labelled(tmp, 40)
    return tmp, db, result


def _fifo(tmp, name: str):
    path = tmp / name
    if not path.exists():
        os.mkfifo(path)
    return path


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


@pytest.mark.parametrize("option", ["FILE", "--rerun", "--scorer-config", "--judge-prompt"])
def test_a_fifo_is_refused_for_every_input_of_the_dataset_form(labelled, capsys, option):
    tmp, db, result = labelled
    fifo = _fifo(tmp, f"fifo-{option.strip('-')}.csv")
    args = ["calibrate", "external", str(fifo if option == "FILE" else result), "--dataset", "qa", "--db", str(db),
            "--boot", "20", "--scorer-version", "v1"]
    if option != "FILE":
        args += [option, str(fifo)]
    assert main(args) == 1  # returns at once: nothing opened the FIFO
    what = "" if option == "FILE" else f"{option} "
    assert _one_error_line(capsys) == (f"error: {what}{fifo}: not a regular file (a pipe, device, socket or folder): "
                                       "give a file")


def test_the_run_folders_units_file_is_checked(labelled, capsys):
    tmp, db, result = labelled
    run = tmp / "run"
    run.mkdir(exist_ok=True)
    _fifo(run, "units.csv")
    assert main(["calibrate", "external", str(result), "--dataset", "qa", "--db", str(db), "--run", str(run)]) == 1
    assert _one_error_line(capsys).startswith(f"error: --run {run / 'units.csv'}: not a regular file")


@pytest.mark.parametrize("option", ["FILE", "--rerun"])
def test_an_oversize_input_is_refused_before_it_is_read(labelled, capsys, monkeypatch, option):
    tmp, db, result = labelled
    size = result.stat().st_size
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", size - 1)  # the boundary: one byte too many
    args = ["calibrate", "external", str(result), "--dataset", "qa", "--db", str(db), "--boot", "20"]
    if option == "--rerun":
        small = tmp / "small.csv"
        small.write_text("x\n")
        args[2] = str(small)
        args += ["--rerun", str(result)]
    assert main(args) == 1
    what = "" if option == "FILE" else "--rerun "
    assert _one_error_line(capsys).startswith(f"error: {what}{result}: {size:,} bytes, larger than the limit of "
                                              f"{size - 1:,} bytes")


def test_exactly_at_the_limit_is_read(labelled, capsys, monkeypatch):
    _tmp, db, result = labelled
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", result.stat().st_size)
    assert main(["calibrate", "external", str(result), "--dataset", "qa", "--db", str(db), "--boot", "20"]) == 0


def test_the_per_unit_form_refuses_a_fifo_scores_file_and_human_labels(tmp_path, capsys):
    fifo = _fifo(tmp_path, "scores.csv")
    assert main(["calibrate", "external", str(fifo), "--dimension", "supported"]) == 1
    assert _one_error_line(capsys) == (f"error: {fifo}: not a regular file (a pipe, device, socket or folder): "
                                       "give a file")
    scores = tmp_path / "ok.csv"
    scores.write_text("unit_id,score\nu1,0.5\n")
    labels = _fifo(tmp_path, "claims.jsonl")
    assert main(["calibrate", "external", str(scores), "--dimension", "supported", "--human", "ragtruth",
                 "--ragtruth", str(labels)]) == 1
    assert _one_error_line(capsys).startswith(f"error: --ragtruth {labels}: not a regular file")


def test_the_per_unit_form_refuses_an_oversize_scores_file(tmp_path, capsys, monkeypatch):
    scores = tmp_path / "scores.csv"
    scores.write_text("unit_id,score\nu1,0.5\n")
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", 10)
    assert main(["calibrate", "external", str(scores), "--dimension", "supported"]) == 1
    assert _one_error_line(capsys).startswith(f"error: {scores}: 21 bytes, larger than the limit of 10 bytes")


def test_the_library_reader_of_scores_refuses_a_fifo(tmp_path):
    from playground.calibrate import CalibrationInputError, auto_from_csv
    from playground.calibrate.record import file_sha256

    fifo = _fifo(tmp_path, "scores.csv")
    with pytest.raises(CalibrationInputError, match="not a regular file"):
        auto_from_csv(fifo, dimension="supported")
    with pytest.raises(limits.LimitExceeded, match="not a regular file"):
        file_sha256(fifo)
