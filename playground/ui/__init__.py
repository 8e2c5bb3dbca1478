"""The labelling playground's user interface: session state (no widgets), ipywidgets views, matplotlib charts.

``notebooks/playground.ipynb`` is two lines::

    from playground.ui import launch
    launch()

:func:`launch` reads its settings from the environment that ``playground
serve`` sets: ``PLAYGROUND_ROOT`` (corpus/ and golden/), ``PLAYGROUND_DB``
(the label store), ``PLAYGROUND_READ_ONLY`` (instructor dashboard); and from
the page's URL: ``?annotator=NAME`` (a bookmark keeps the name),
``?reveal=1`` (show the harness's labels before labelling, for teaching),
``?case=GC-0007[&response=GC-0007-R2]`` (open on one case, e.g. from a link on
the calibration page), ``?weights=faithfulness:0.4,...`` and
``?gates=faithfulness:0.6`` (the composite's settings), ``?dataset=NAME``
(an imported dataset; ``PLAYGROUND_DATASET`` sets the default, from
``playground serve --dataset``) and ``?sample=NAME`` (walk a calibration
sample in order), ``?q=WORDS`` (the case list's search).  The page keeps the URL bar up to date as the person
moves, so a link copied at any moment reopens the same view.
Under JupyterHub the name defaults to ``JUPYTERHUB_USER`` (the hub's login).

Under Voila the query string reaches the kernel as the ``QUERY_STRING``
environment variable; with preheated kernels (``playground serve --preheat``)
:func:`playground.ui.request.wait_for_request` (Voila's handshake, without
the 1.35 s import of ``voila.utils``) waits for the request that claims the
kernel, so the slow part (loading data, running the harness, building the
widgets) happens before anyone asks for the page.

Heavy modules (ipywidgets, matplotlib, the harness) are imported only when
needed: ``import playground.ui`` itself is cheap.
"""
from __future__ import annotations

import contextlib
import os
import sys
import time
from typing import Any
from urllib.parse import parse_qs

__all__ = ["LabelSession", "PlaygroundApp", "apply_view_params", "launch", "open_session_dataset", "query_params"]


def __getattr__(name: str) -> Any:
    if name == "LabelSession":
        from .session import LabelSession

        return LabelSession
    if name == "PlaygroundApp":
        from .views import PlaygroundApp

        return PlaygroundApp
    raise AttributeError(name)


def query_params() -> dict[str, str]:
    """The page's query parameters (first value of each), or ``{}`` outside Voila."""
    if os.environ.get("VOILA_PREHEAT") == "True":
        from .request import wait_for_request

        wait_for_request()  # blocks until a request claims this kernel; its variables land in os.environ
    query = os.environ.get("QUERY_STRING", "")
    return {k: v[0] for k, v in parse_qs(query, keep_blank_values=False).items() if v}


def _flag(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def open_session_dataset(name: str | None, store: Any, *, reveal_all: bool = False, root: str | None = None) -> Any:
    """A :class:`~playground.ui.session.LabelSession` on the dataset ``name``: see
    :func:`playground.ui.session.open_session_dataset`."""
    from .session import open_session_dataset as open_

    return open_(name, store, reveal_all=reveal_all, root=root)


def launch(root: str | None = None, db: str | None = None, *, read_only: bool | None = None,
           annotator: str | None = None, reveal: bool | None = None, display: bool = True) -> Any:
    """Build the playground page and display it; returns the :class:`~playground.ui.views.PlaygroundApp`.

    Arguments override the environment (``PLAYGROUND_ROOT``, ``PLAYGROUND_DB``,
    ``PLAYGROUND_READ_ONLY``, ``PLAYGROUND_DATASET``) and the URL
    (``annotator``, ``reveal``, ``dataset``, ``sample``, ``case``,
    ``response``, ``weights``, ``gates``).  Data or store problems are shown on
    the page as text, not as a traceback; a bad URL parameter is named on the page.
    The store must exist (``playground serve`` creates it): a page never creates one.
    """
    t0 = time.perf_counter()
    from ..errors import DataError
    from ..store import StoreError
    from .session import SessionError

    problems: list[str] = []
    try:
        session = _open_session(root, db, read_only, problems)
    except (DataError, StoreError, OSError, SessionError) as exc:
        return _show_error(exc, display)
    t_session = time.perf_counter() - t0
    ahead = _preheated_app(session)
    _log(f"playground: session ready in {t_session:.2f}s ({len(session.case_ids)} cases, "
         f"{len(session.catalog)} units; harness results {session.harness_source})")
    params = query_params()  # after the slow part: with preheated kernels this waits for the request
    try:
        session, ahead = _session_for_link(session, ahead, params.get("dataset"), root, db, read_only, problems)
    except (DataError, StoreError, OSError) as exc:
        return _show_error(exc, display)
    t_page = time.perf_counter()
    name = _visitor_name(annotator, params, problems)
    show = reveal if reveal is not None else _flag(params.get("reveal"))
    problems += apply_view_params(session, params)
    app = _page_app(session, ahead, show)
    drawn = app.renders
    if name and not session.read_only:  # start() draws the page
        _start_labelling(app, session, name, params)
    if app.renders == drawn:  # no name, or start() refused it: draw the page for the link's view
        app.render_all()
    if problems:
        app.say(" ".join(problems), error=True)
    app.update_url()
    app.timings["session"] = t_session
    app.timings["launch"] = time.perf_counter() - t0
    _log(f"playground: page for {session.annotator or 'a new visitor'!r} built in "
         f"{time.perf_counter() - t_page:.2f}s")
    if display:
        from IPython.display import display as show_widget

        show_widget(app.widget)
    return app


def _open_session(root: str | None, db: str | None, read_only: bool | None, problems: list[str]) -> Any:
    """The session on the dataset the link (``?dataset=``) or ``PLAYGROUND_DATASET`` names; an unknown
    dataset opens the shipped one and appends why to ``problems``.  Other errors propagate."""
    from .session import SessionError, session_from_env

    params = {} if os.environ.get("VOILA_PREHEAT") == "True" else query_params()
    wanted = params.get("dataset") or os.environ.get("PLAYGROUND_DATASET") or None
    try:
        return session_from_env(root, db, read_only, dataset=wanted, create=False)
    except SessionError as exc:  # an unknown dataset in the link: open the shipped one and say so
        problems.append(str(exc))
        return session_from_env(root, db, read_only, create=False)


def _preheated_app(session: Any) -> Any:
    """In a preheated kernel, the page's widgets built before the request arrives (the request then only
    fills them in); None otherwise."""
    from .views import PlaygroundApp

    # A preheated kernel builds its widgets before the wait below; the request then only fills them in.
    if os.environ.get("VOILA_PREHEAT") == "True":
        from . import request  # noqa: F401  (its websocket client, imported before the kernel says it is ready)

        app = PlaygroundApp(session, annotator=None)
        from . import readiness

        readiness.report(readiness.READY)  # `playground serve` gives out its link once a page is built
        return app
    return None


def _session_for_link(session: Any, ahead: Any, late: str | None, root: str | None, db: str | None,
                      read_only: bool | None, problems: list[str]) -> tuple[Any, Any]:
    """``(session, ahead)`` for the link's dataset ``late``, which a preheated kernel learns only after
    building: a different dataset reopens the session and drops the widgets built ahead; an unknown one
    keeps both and appends why to ``problems``.  Data, store and OS errors propagate."""
    from .session import SessionError, session_from_env

    if late and late != session.dataset_name:  # a preheated kernel learns the link's dataset only now
        try:
            session = session_from_env(root, db, read_only, dataset=late, create=False)
            ahead = None
        except SessionError as exc:
            problems.append(str(exc))
    return session, ahead


def _visitor_name(annotator: str | None, params: dict[str, str], problems: list[str]) -> str | None:
    """The labeller's name: the argument, else the link's ``?annotator=``, else a roster link's signed
    name, else ``JUPYTERHUB_USER``; with none, a roster server's refusal is appended to ``problems``."""
    from .request import name_refusal, signed_name  # a roster link: the page's name is the link's

    name = annotator if annotator is not None else (params.get("annotator") or signed_name()
                                                    or os.environ.get("JUPYTERHUB_USER"))
    if not name and name_refusal(None):
        problems.append(name_refusal(None))
    return name


def _page_app(session: Any, ahead: Any, show: bool) -> Any:
    """The page's app: a new one (not drawn yet), or the one built ahead, brought up to the request's
    reveal setting and role."""
    from .views import PlaygroundApp

    if ahead is None:
        return PlaygroundApp(session, annotator=None, reveal=show, render=False)  # drawn once, below
    app = ahead
    session.reveal_all = session.reveal_all or show
    app.sync_controls()
    from .panels import export_scopes  # serve engineer, issue 29: a preheated page learns its role only now

    app.export_scope.options = export_scopes(session.read_only)
    return app


def _start_labelling(app: Any, session: Any, name: str, params: dict[str, str]) -> None:
    """Start ``name``'s labelling (``?lesson=``, ``?sample=``); a refused name is cleared from the name
    box, and the link's case wins over the queue's first one."""
    here = (session.case_id, session.response_id)
    session.lesson_name = params.get("lesson") or None  # ?lesson=NAME (issue 23; default: the newest)
    app.guard(app.start, name, params.get("sample") or None)
    if app.name is not None and session.annotator is None:
        app.name.value = ""
    if params.get("case") and here[0] is not None and here != (session.case_id, session.response_id):
        session.go_to(here[0], here[1])  # the link's case wins over the queue's first one
        app.render_all()


def _open_lesson(session: Any, name: str) -> list[str]:
    """A page opened with ``?lesson=NAME`` is about the lesson before a name is typed: its cases, its
    responses, its progress, its first view on screen; returns the problems (an unknown lesson)."""
    from .session import SessionError

    session.lesson_name = name
    try:
        session.use_queue()
    except SessionError as exc:
        return [str(exc)]
    if session.queue:
        session.go_to(*session.queue[0])
    return []


def apply_view_params(session: Any, params: dict[str, str]) -> list[str]:
    """Apply ``q``, ``case``, ``response``, ``weights`` and ``gates`` of a link to the session; returns the
    problems."""
    from .session import SessionError, parse_weights

    problems: list[str] = []
    if params.get("lesson") and not session.read_only:
        problems += _open_lesson(session, params["lesson"])
    if params.get("q"):
        session.set_filter(text=params["q"])  # the case list's search
    case = params.get("case")
    if case:
        if case in session.dataset.cases:
            response = params.get("response")
            session.go_to(case, response if response in {r.response_id for r in session.responses[case]} else None)
        else:
            problems.append(f"The link names case {case!r}, which this dataset does not have.")
    try:
        if params.get("weights"):
            session.set_weights(parse_weights(params["weights"], "weights"))
    except SessionError as exc:
        problems.append(str(exc))
    try:
        if params.get("gates"):
            for dim, floor in parse_weights(params["gates"], "gates", unit_interval=True).items():
                session.set_gate(dim, floor)
    except SessionError as exc:
        problems.append(str(exc))
    return problems


def _log(line: str) -> None:
    """A line for the server's log (the kernel's own stderr, not the page)."""
    stream = sys.__stderr__ or sys.stderr
    with contextlib.suppress(OSError, ValueError):
        print(line, file=stream, flush=True)


def _show_error(exc: BaseException, display: bool):
    import html

    from ..errors import DataError

    text = exc.report() if isinstance(exc, DataError) else f"{type(exc).__name__}: {exc}"
    _log(f"playground: a page cannot start: {text}")  # the server's log says it too (issue 30.3), not only the page
    from . import readiness

    readiness.report(readiness.FAILED, text)  # `playground serve` stops before giving out a link
    body = ("<div style='color:#cf222e;font-weight:600'>The playground cannot start.</div>"
            f"<pre style='white-space:pre-wrap'>{html.escape(text)}</pre>")
    if display:
        import ipywidgets as W
        from IPython.display import display as show_widget

        widget = W.HTML(body)
        widget.add_class("pg-error")
        show_widget(widget)
    return None
