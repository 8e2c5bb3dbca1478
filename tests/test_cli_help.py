"""Every command and subcommand answers ``--help`` (argparse formats help strings with ``%``: a bare ``95%`` in
one crashed ``playground tags --help`` with a traceback)."""
from __future__ import annotations

import argparse

import pytest

from playground.cli import build_parser, main


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = [path]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += _commands(sub, (*path, name))
    return out


COMMANDS = _commands(build_parser())


def test_the_walk_finds_the_commands():
    assert ("tags", "list") in COMMANDS and ("guidelines", "set") in COMMANDS and ("serve",) in COMMANDS


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "playground")
def test_help_answers(path, capsys):
    with pytest.raises(SystemExit) as done:
        main([*path, "--help"])
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith("usage: ")
