"""The page's error-analysis panel and the dataset's guidelines (issues 24.5, 24.6).

Under the response on screen: its **verdict** (pass / fail / unsure / clear,
class ``pg-verdict``), a **note** (``pg-verdict-note``: saved when the box is
left, Esc included, like a unit's comment), the **failure-mode tags** as chips
(``pg-tag-chip`` and ``pg-tag-<name>``: click to put on or take off) and an
"add a tag" box (``pg-tag-new``: Enter adds the tag to the dataset's taxonomy
and to this response, then hands the keys back to labelling).  Once judged, the
shipped set's **authored** verdict and tags show beside the variant reveal
(``pg-verdict-authored``).  In the scores column, the failure-mode counts with
95% Wilson intervals, this annotator's and pooled (``pg-failures``); above the
case, the dataset's own guidelines beside the built-in explanations
(``pg-guidelines``), sanitised markdown with their version.

Keys (:data:`VERDICT_KEYMAP`, added to the page's key map): ``p`` pass, ``f``
fail, ``m`` unsure ("maybe"), ``o`` the note box, ``t`` the tag box — none of
them is a key of :data:`playground.ui.bridge.KEYMAP`.  A small anywidget
(:class:`VerdictKeys`) listens for them, only outside text fields; it clicks
the same buttons a mouse would, so every verdict goes through the kernel.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol

import anywidget
import ipywidgets as W
import traitlets

from .bridge import KEYMAP, PageBridge
from .rows import FROM_VALUE, html_widget
from .session import LabelSession
from .session_verdicts import VERDICT_VALUES
from .verdict_html import (
    VERDICT_WORDS,
    authored_html,
    failure_table_html,
    failures_by_annotator_html,
    guidelines_html,
)

__all__ = ["VERDICT_KEYMAP", "VERDICT_KEYS_ESM", "PanelHost", "VerdictKeys", "VerdictPanel", "describe_change",
           "keymap_json"]

#: The keys of the panel, as shown in the page's key map.
VERDICT_KEYMAP: tuple[tuple[str, str], ...] = (
    ("p", "response verdict: pass"),
    ("f", "response verdict: fail"),
    ("m", "response verdict: unsure (maybe)"),
    ("o", "note on the response (Esc leaves the box and saves)"),
    ("t", "add a failure-mode tag (Enter adds it, back to labelling)"),
)

VERDICT_KEYS_ESM = r"""
const VERDICTS = {p: "pass", f: "fail", m: "unsure"};
const NOT_TYPED = ["checkbox", "radio", "button", "submit", "reset", "range", "color", "file"];
function isField(t) {
  const tag = (t && t.tagName) || "";
  if (tag === "INPUT") return !NOT_TYPED.includes((t.type || "text").toLowerCase());
  return ["TEXTAREA", "SELECT"].includes(tag) || !!(t && t.isContentEditable);
}
function render({ model, el }) {
  function onKey(ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey || document.querySelector(".pg-lost")) return;
    const t = ev.target;
    if (isField(t)) {
      // Enter in the tag box: the browser commits the tag as the box is left; keys go back to labelling.
      if (ev.key === "Enter" && t.closest && t.closest(".pg-tag-new")) { t.blur(); ev.preventDefault(); }
      return;
    }
    const k = ev.key;
    let box = null;
    if (k in VERDICTS) {
      const b = document.querySelector(`.pg-verdict button[data-value="${VERDICTS[k]}"]`);
      if (!b) return;
      if (b.disabled) model.send({type: "hint", text: "Type your name first: verdicts are saved under it."});
      else b.click();
    } else if (k === "o") box = document.querySelector(".pg-verdict-note textarea");
    else if (k === "t") box = document.querySelector(".pg-tag-new input");
    else return;
    if (box && !box.disabled) box.focus();
    ev.preventDefault();
    ev.stopPropagation();
  }
  document.addEventListener("keydown", onKey, true);
  return () => document.removeEventListener("keydown", onKey, true);
}
export default { render };
"""


class VerdictKeys(anywidget.AnyWidget):
    """The panel's keys (module docstring); ``handlers['hint']`` shows a message on the page."""

    _esm = traitlets.Unicode(VERDICT_KEYS_ESM).tag(sync=True)

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self.handlers: dict[str, Any] = {}
        self.on_msg(self._on_msg)

    def _on_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and callable(self.handlers.get(str(content.get("type")))):
            self.handlers[str(content.get("type"))](content)


def keymap_json() -> str:
    """The page's whole key map (the bridge's, then the panel's) as the bridge shows it."""
    return json.dumps(KEYMAP + VERDICT_KEYMAP)


def describe_change(change: Any, session: Any, verb: str) -> str:
    """A saved or undone change in words: ``Undone: claim 2 of GC-0001 · supported: yes → no.``; a verdict in
    pass / fail / unsure, a tag change as what it changed."""
    if change.dimension == "tags":  # a response's failure-mode tags (the values are not labels)
        return f"{verb}: the failure-mode tags of {change.unit_id}."
    verdict = change.dimension == "pass"
    none = "no verdict" if verdict else "no label"

    def word(value: int | None) -> str:
        found = (VERDICT_WORDS.get(value) if value is not None else None) if verdict else FROM_VALUE.get(value)
        return found or none

    what = f"the verdict on {change.unit_id}" if verdict else session.describe(change.unit_id)
    return f"{verb}: {what} · {change.dimension}: {word(change.old)} → {word(change.new)}."


class PanelHost(Protocol):
    """What the panel reads of the page that holds it (the page, :class:`~playground.ui.views.PlaygroundApp`, is
    one): the session it draws, the page's guard, status line and front-end bridge, the response's text widget."""

    session: LabelSession
    syncing: bool
    stopped: bool
    bridge: PageBridge
    response_text: Any

    def quiet(self) -> AbstractContextManager[None]: ...

    def guard(self, fn: Callable[..., Any], *args: Any) -> Any: ...

    def say(self, message: str, error: bool = False) -> None: ...


class VerdictPanel:
    """The widgets of the panel (module docstring) and their handlers, over the app's session."""

    def __init__(self, app: PanelHost):
        self.app = app
        self.keys = VerdictKeys()
        self.keys.handlers["hint"] = lambda msg: app.say(str(msg.get("text", ""))[:200], error=True)
        self.verdict = W.ToggleButtons(options=list(VERDICT_VALUES), value=None, style={"button_width": "auto"},
                                       tooltips=["pass (p)", "fail (f)", "unsure (m)", "remove my verdict"])
        self.verdict.add_class("pg-verdict")
        self.verdict.observe(lambda ch: self._on(self.on_verdict, ch["new"]), names="value")
        self.note = W.Textarea(placeholder="what went wrong, in your words (o; saved when you leave the box)",
                               continuous_update=False, rows=2, layout=W.Layout(width="100%"))
        self.note.add_class("pg-verdict-note")
        self.note.observe(lambda ch: self._on(self.on_note, ch["new"]), names="value")
        self.chips = W.HBox([], layout=W.Layout(flex_flow="row wrap"))
        self.chips.add_class("pg-tags")
        self.tag_new = W.Text(placeholder="add a tag (t): e.g. wrong-date", continuous_update=False,
                              layout=W.Layout(width="260px"))
        self.tag_new.add_class("pg-tag-new")
        self.tag_new.observe(lambda ch: self._on(self.on_new_tag, ch["new"]), names="value")
        self.authored = html_widget(cls="pg-verdict-authored-box")
        head = html_widget("<div class='pg-h'>Your verdict on this response <span class='pg-muted'>— pass or fail "
                           "as a whole (p / f / m), a note, the failure modes it shows</span></div>")
        self.box = W.VBox([head, self.verdict, self.note, self.chips, self.tag_new, self.authored, self.keys],
                          layout=W.Layout(width="100%"))
        self.box.add_class("pg-verdict-box")
        self.failures = html_widget(cls="pg-failures")
        self.guidelines = html_widget(cls="pg-guidelines-text")
        self.guide = W.Accordion(children=[self.guidelines], titles=("Guidelines of this dataset",),
                                 selected_index=None, layout=W.Layout(width="auto"))
        self.guide.add_class("pg-guidelines")
        self._chips: dict[str, W.ToggleButton] = {}

    def place(self, case_parts: list[Any], scores: Any, guide: Any) -> Any:
        """Put the panel on the page: the verdict right under the response it judges (in ``case_parts``), the
        failure modes at the end of the ``scores`` column, and the guidelines beside the built-in ``guide`` on
        one row (the case stays where a 1280x800 screen shows it); returns that row.  The page's key map gains
        the panel's keys."""
        self.app.bridge.keymap = keymap_json()
        case_parts.insert(case_parts.index(self.app.response_text) + 1, self.box)
        scores.children = [*scores.children, html_widget("<div class='pg-h'>Failure modes</div>"), self.failures]
        guide.layout = W.Layout(flex="1 1 50%", width="auto")
        self.guide.layout = W.Layout(flex="1 1 50%", width="auto")
        guides = W.HBox([guide, self.guide], layout=W.Layout(width="100%"))
        guides.add_class("pg-guides")
        return guides

    def _on(self, action: Any, value: Any) -> None:
        if self.app.syncing:
            return
        self.app.guard(action, value)

    # --- actions -------------------------------------------------------------------------------------------
    def on_verdict(self, choice: str | None) -> None:
        s = self.app.session
        if choice is None or s.response_id is None:
            return
        try:
            if self.app.stopped:
                return
            changed = s.set_verdict(VERDICT_VALUES[choice])
            if changed:
                word = "removed" if choice == "clear" else choice
                self.app.say(f"Verdict on {s.response_name(s.response_id)}: {word}.")
        finally:
            self.render()
            self.render_counts()

    def on_note(self, text: str) -> None:
        s = self.app.session
        if s.response_id is None or self.app.stopped:
            self.render()
            return
        try:
            if s.set_note(text):
                self.app.say("Note saved on the response." if text.strip() else "Note removed from the response.")
        finally:
            self.render()

    def on_chip(self, name: str, on: bool) -> None:
        if self.app.syncing or self.app.stopped:
            return
        try:
            self.app.guard(self.app.session.toggle_tag, name, on)
        finally:
            self.render()
            self.render_counts()

    def on_new_tag(self, text: str) -> None:
        if not text.strip():
            return
        try:
            tidy = self.app.session.add_tag(text)
            self.app.say(f"Tag {tidy} added to this response (and to the dataset's failure modes).")
        finally:
            with self.app.quiet():
                self.tag_new.value = ""
            self.render()
            self.render_counts()

    # --- drawing -------------------------------------------------------------------------------------------
    def _sync_chips(self, names: list[str], on: tuple[str, ...], disabled: bool) -> None:
        for name in names:
            if name not in self._chips:
                chip = W.ToggleButton(value=False, description=name, tooltip=f"failure mode {name}",
                                      layout=W.Layout(width="auto"))
                chip.add_class("pg-tag-chip")
                chip.add_class(f"pg-tag-{name}")
                chip.observe(lambda ch, n=name: self.on_chip(n, bool(ch["new"])), names="value")
                self._chips[name] = chip
        kids = [self._chips[n] for n in names]
        if list(self.chips.children) != kids:
            self.chips.children = kids
        for name in names:
            chip = self._chips[name]
            if chip.value != (name in on):
                chip.value = name in on
            chip.disabled = disabled

    def render(self) -> None:
        """The verdict, note, chips and authored reveal of the response on screen."""
        s = self.app.session
        shown = s.response_id is not None
        self.box.layout.display = None if shown else "none"
        if not shown:
            return
        disabled = not s.can_label or self.app.stopped
        with self.app.quiet():
            mine = s.verdict()
            value = next((k for k, v in VERDICT_VALUES.items() if v == mine and k != "clear"), None)
            if self.verdict.value != value:
                self.verdict.value = value
            note = s.note()
            if self.note.value != note:
                self.note.value = note
            self._sync_chips(s.taxonomy(), s.tags(), disabled)
            for w in (self.verdict, self.note, self.tag_new):
                w.disabled = disabled
        authored = s.authored()
        self.authored.value = "" if authored is None else authored_html(authored[0], authored[1], mine)

    def render_counts(self) -> None:
        """The failure-mode counts: this annotator's, pooled over everyone, and per annotator folded."""
        s = self.app.session
        if s.response_id is None and not s.dataset.responses:
            self.failures.value = ""
            return
        pooled = failure_table_html(*s.failure_counts(None))
        mine = ""
        if s.annotator is not None:
            rows, passed = s.failure_counts(s.annotator)
            mine = failure_table_html(rows, passed, who=f"yours ({s.annotator})")
        per = {}
        if s.read_only:
            per = {who: s.failure_counts(who)[0] for who in s.known_annotators()}
        self.failures.value = mine + pooled + failures_by_annotator_html(per)

    def render_guidelines(self) -> None:
        s = self.app.session
        g = s.guidelines()
        self.guidelines.value = guidelines_html(g.markdown if g else None, g.version if g else None, s.dataset_name,
                                                g.author if g else "")
        title = (f"Guidelines of {s.dataset_name} (version {g.version})" if g else
                 f"Guidelines of {s.dataset_name} (none yet)")
        self.guide.set_title(0, title)
