"""What the page's action mixins read beyond :class:`~playground.ui.render.PageRender`'s state: the parts
:class:`~playground.ui.views.PlaygroundApp` itself makes (the front-end bridge, the verdict panel, the name box, the
status line) and the helpers it defines (:meth:`say`, :meth:`guard`, :meth:`type_options`)."""
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
