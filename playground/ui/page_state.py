"""What the page's action mixins and its panel builders read beyond :class:`~playground.ui.render.PageRender`'s state:
the parts :class:`~playground.ui.views.PlaygroundApp` itself makes (the front-end bridge, the verdict panel, the name
box, the status line), the helpers it defines (:meth:`say`, :meth:`guard`, :meth:`type_options`) and the handlers
:mod:`playground.ui.panels` wires.  The panels take the page as this type, never as ``PlaygroundApp``: nothing
below :mod:`playground.ui.views` imports it, so ui/ has no import circle through it."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets as W

from .render import PageRender

if TYPE_CHECKING:
    from .bridge import PageBridge
    from .verdict_panel import VerdictPanel

__all__ = ["PageState"]


class PageState(PageRender):
    """Declarations only: the state and helpers of the page that its action mixins share."""

    bridge: PageBridge
    verdicts: VerdictPanel
    status: W.HTML
    name: W.Text | None
    #: Whether the name box is open for a name (see :class:`~playground.ui.views.PlaygroundApp`).
    naming: bool

    def say(self, message: str, error: bool = False) -> None:
        raise NotImplementedError

    def guard(self, fn: Callable[..., Any], *args: Any) -> Any:
        raise NotImplementedError

    def type_options(self) -> list[tuple[str, str]]:
        raise NotImplementedError

    def dataset_names(self) -> list[str]:
        raise NotImplementedError

    # the handlers the panel builders (playground.ui.panels) wire: page_actions and page_navigation define them
    def on_name(self, change: dict[str, Any]) -> None:
        raise NotImplementedError

    def on_name_button(self) -> None:
        raise NotImplementedError

    def on_viewer(self, change: dict[str, Any]) -> None:
        raise NotImplementedError

    def undo(self) -> None:
        raise NotImplementedError

    def refresh(self) -> None:
        raise NotImplementedError

    def on_reveal(self, value: bool) -> None:
        raise NotImplementedError

    def on_filter(self) -> None:
        raise NotImplementedError

    def on_pick(self, change: dict[str, Any]) -> None:
        raise NotImplementedError

    def move(self, where: str) -> None:
        raise NotImplementedError

    def on_scenario(self, change: dict[str, Any]) -> None:
        raise NotImplementedError

    def on_weight(self, dim: str, value: float) -> None:
        raise NotImplementedError

    def on_gate(self, dim: str) -> None:
        raise NotImplementedError

    def on_dataset(self, name: str) -> None:
        raise NotImplementedError

    def export(self, fmt: str) -> None:
        raise NotImplementedError
