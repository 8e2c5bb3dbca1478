"""The one YAML loader of the project: PyYAML's SafeLoader with alias expansion bounded.

YAML aliases (``*name``) let a short file stand for a huge tree — nine anchors
of nine aliases each are a kilobyte that expands to 9⁹ ≈ 387 million nodes (a
"billion laughs" bomb).  PyYAML builds shared objects, but anything that walks
the result (validation, JSON snapshots) walks every expanded node.  Rule: a
document's *expanded* node count may exceed its *written* node count by at most
:data:`MAX_ALIAS_EXPANSION`; a recursive alias (a node containing itself) is
refused.  Either raises :class:`AliasLimitError`, a ``yaml.YAMLError`` with a
``problem`` and a ``problem_mark`` (line) like every other YAML error, so the
callers' one-line error reporting applies unchanged.  A mapping that names the
same key twice is refused too (PyYAML would silently keep the last value, and
a golden-set field or a configuration key would vanish without a word).

Corpus front matter, golden-set files and harness configurations are all read
through :func:`load` or :func:`load_with_node`.
"""
from __future__ import annotations

from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

__all__ = [
    "MAX_ALIAS_EXPANSION",
    "AliasLimitError",
    "BoundedLoader",
    "YAMLError",
    "expansion",
    "load",
    "load_with_node",
]

#: How many nodes aliases may add, over a document, beyond the nodes written in it.
MAX_ALIAS_EXPANSION = 10_000

YAMLError = yaml.YAMLError


class AliasLimitError(yaml.composer.ComposerError):
    """Alias expansion over the bound, or a recursive alias."""


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def expansion(node: Node) -> tuple[int, int]:
    """(written, expanded) node counts of a composed tree: distinct nodes, and nodes with every alias expanded.

    Raises :class:`AliasLimitError` on a recursive alias.
    """
    sizes: dict[int, int] = {}
    in_progress: set[int] = set()

    def size(n: Node) -> int:
        key = id(n)
        if key in sizes:
            return sizes[key]
        if key in in_progress:
            raise AliasLimitError(None, None, "recursive alias (a node that contains itself)", n.start_mark)
        in_progress.add(key)
        total = 1 + sum(size(c) for c in _children(n))
        in_progress.discard(key)
        sizes[key] = total
        return total

    expanded = size(node)
    return len(sizes), expanded


class BoundedLoader(yaml.SafeLoader):
    """SafeLoader that refuses documents whose aliases expand beyond :data:`MAX_ALIAS_EXPANSION` extra nodes."""

    max_alias_expansion = MAX_ALIAS_EXPANSION

    def compose_document(self) -> Node | None:
        node: Node | None = super().compose_document()
        if node is not None:
            written, expanded = expansion(node)
            if expanded - written > self.max_alias_expansion:
                raise AliasLimitError(
                    None,
                    None,
                    f"aliases expand {written:,} written nodes to {expanded:,} "
                    f"(at most {self.max_alias_expansion:,} more are allowed)",
                    node.start_mark,
                )
        return node

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        """A mapping that names a key twice is an error (YAML 1.2; PyYAML would keep the last value silently)."""
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: SafeConstructor reports it
                break
            if first is not None:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first on line {first})", key_node.start_mark)
            seen[key] = key_node.start_mark.line + 1
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping


def load(text: str) -> Any:
    """Parse one YAML document safely (``yaml.safe_load`` with alias expansion bounded)."""
    return yaml.load(text, Loader=BoundedLoader)  # BoundedLoader is a SafeLoader


def load_with_node(text: str) -> tuple[Node | None, Any]:
    """Parse one document once; return its composed node (for line numbers) and the constructed data."""
    loader = BoundedLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()
    return node, data
