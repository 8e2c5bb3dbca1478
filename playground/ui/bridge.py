"""The page's small front-end: keyboard labelling, the URL bar and the connection watch.

One :class:`PageBridge` (an `anywidget <https://anywidget.dev>`_ widget: its
ES module ships inside this file and anywidget's own JupyterLab extension
loads it; nothing comes from a CDN) sits on the page.  It never decides
anything a label depends on: a key press clicks the same ToggleButtons a
mouse would, so every label still goes through the widget, the kernel and
the store.

Keys (shown on the page with ``?``)
-----------------------------------
* ``j`` / ``↓``: next unit; ``k`` / ``↑``: previous unit (the focused
  question has a blue focus ring; its claim is highlighted in the response).
* ``y`` / ``1`` yes, ``n`` / ``2`` no, ``u`` / ``3`` unsure, ``c`` / ``0``
  clear: answer the focused question, then focus moves to the next question,
  so labelling a view takes one key per answer.
* ``→`` / ``]`` next case, ``←`` / ``[`` previous case, ``g`` next
  unlabelled, ``s`` next response of this case, ``z`` undo, ``e`` comment on
  the focused unit, ``?`` the key map, ``Esc`` closes it.
* ``/`` puts the cursor in the case search.
* Keys type into a text field, a list or a menu only while it has the cursor;
  ``Esc`` leaves any of them (a comment is saved when its box is left), and
  ``Enter`` in the name box uses the name and hands the keys back to the
  labelling area (answer keys typed before the kernel has taken the name
  wait for it, in order).  The listener runs in the capture phase because
  ipywidgets' text boxes stop their keys from bubbling.  Once a name is in
  use its box is locked: only "Switch name" unlocks it.

The URL bar
-----------
:attr:`PageBridge.query` is the page's query string as the kernel wants it
(``?annotator=&case=&response=&weights=&gates=&reveal=...``); the front-end
puts it in the URL bar with ``history.replaceState`` (no reload), so a link
copied at any moment opens the same view.

Connection watch
----------------
Every 2 s the front-end sends ``ping``; the kernel answers ``pong``.  When
no answer came for :attr:`PageBridge.lost_after_ms` the page turns into a
"connection lost — reload" state: every control is disabled and a toggle
clicked since the last acknowledged save is shown unset (``pg-unsaved``), so
nothing looks saved that the kernel did not write.  The kernel acknowledges
each toggle it handled with ``ack`` (:meth:`PageBridge.ack`).
"""
from __future__ import annotations

from typing import Any

import anywidget
import traitlets

__all__ = ["ESM", "KEYMAP", "PageBridge"]

#: The key map, as shown on the page (key, what it does).
KEYMAP: tuple[tuple[str, str], ...] = (
    ("j / ↓", "next unit"),
    ("k / ↑", "previous unit"),
    ("y / 1", "yes"),
    ("n / 2", "no"),
    ("u / 3", "unsure"),
    ("c / 0", "clear my label"),
    ("→ / ]", "next case"),
    ("← / [", "previous case"),
    ("g", "next unlabelled"),
    ("s", "next response of this case"),
    ("z", "undo"),
    ("e", "comment on this unit (Esc leaves the box and saves)"),
    ("/", "search the cases"),
    ("Enter", "in the name box: use the name, back to labelling"),
    ("?", "show / hide this key map"),
)

ESM = r"""
const ANSWERS = {y: "yes", "1": "yes", n: "no", "2": "no", u: "unsure", "3": "unsure", c: "clear", "0": "clear"};
const TOGGLE_RE = /^pg-(passage|claim|fact)-\d+-[a-z_]+$/;

function visible(el) { return !!(el && el.offsetParent !== null); }
function questions() {
  return [...document.querySelectorAll(".pg-case .pg-q")].filter(visible);
}
function toggleClass(toggle) {
  return [...toggle.classList].find((c) => TOGGLE_RE.test(c)) || null;
}
function isAnswered(q) { return !!q.querySelector(".pg-toggle .mod-active"); }

function render({ model, el }) {
  const root = document.createElement("div");
  root.className = "pg-bridge";
  const help = document.createElement("div");
  help.className = "pg-keymap";
  help.style.display = "none";
  const rows = JSON.parse(model.get("keymap") || "[]")
    .map(([k, v]) => `<tr><td><kbd>${k}</kbd></td><td>${v}</td></tr>`).join("");
  help.innerHTML = `<div class="pg-keymap-box"><b>Keys</b><table>${rows}</table>` +
    `<div class="pg-muted">Keys type into a field only while it has the cursor; Esc leaves it. ` +
    `Esc closes this.</div></div>`;
  const banner = document.createElement("div");
  banner.className = "pg-lost-banner";
  banner.style.display = "none";
  banner.textContent = "Connection to the server lost — nothing more can be saved. Reload the page " +
    "(labels that were saved are kept).";
  root.append(help, banner);
  el.append(root);

  let focus = null;           // the focused question line (.pg-q)
  let lastPong = Date.now();
  let lost = false;
  let seq = 0;
  const pending = new Map();  // toggle class -> time clicked, until the kernel acknowledges it
  let namedAt = 0;            // when Enter was pressed in the name box
  let waiting = [];           // answers typed before the kernel took that name

  const app = () => document.querySelector(".pg-app");
  function setFocus(q) {
    if (focus) focus.classList.remove("pg-focus");
    document.querySelectorAll(".pg-mark-active").forEach((m) => m.classList.remove("pg-mark-active"));
    focus = q || null;
    if (!focus) return;
    focus.classList.add("pg-focus");
    focus.scrollIntoView({block: "nearest"});
    const unit = focus.closest(".pg-unit");
    const m = unit && [...unit.classList].map((c) => /^pg-claim-(\d+)$/.exec(c)).find(Boolean);
    if (m) document.querySelectorAll(`.pg-mark-${m[1]}`).forEach((x) => x.classList.add("pg-mark-active"));
  }
  function current() {
    const qs = questions();
    if (focus && qs.includes(focus)) return focus;
    const first = qs.find((q) => !isAnswered(q)) || qs[0] || null;
    setFocus(first);
    return first;
  }
  function moveQuestion(step) {
    const qs = questions();
    const here = current();
    if (!here) return;
    const i = qs.indexOf(here) + step;
    if (i >= 0 && i < qs.length) setFocus(qs[i]);
  }
  function moveUnit(step) {
    const here = current();
    if (!here) return;
    const units = [...new Set(questions().map((q) => q.closest(".pg-unit")))];
    const i = units.indexOf(here.closest(".pg-unit")) + step;
    if (i >= 0 && i < units.length) setFocus(units[i].querySelector(".pg-q"));
  }
  function click(selector) {
    const b = document.querySelector(selector);
    if (b && !b.disabled) { b.click(); return true; }
    return false;
  }
  function answer(value) {
    const q = current();
    if (!q) return;
    const b = q.querySelector(`.pg-toggle button[data-value="${value}"]`);
    if (waiting.length || !b || b.disabled) {
      if (Date.now() - namedAt < 20000) { waiting.push(value); setTimeout(flushWaiting, 100); return; }
      model.send({type: "hint", text: "Type your name first: labels are saved under it."});
      return;
    }
    b.click();
    moveQuestion(+1);
  }
  // A field keys type into: a text box, a list or a menu (a checkbox or a button is not: keys label there).
  const NOT_TYPED = ["checkbox", "radio", "button", "submit", "reset", "range", "color", "file"];
  function isField(t) {
    const tag = (t && t.tagName) || "";
    if (tag === "INPUT") return !NOT_TYPED.includes((t.type || "text").toLowerCase());
    return ["TEXTAREA", "SELECT"].includes(tag) || !!(t && t.isContentEditable);
  }
  // Leave a text field: its value is committed by the browser's change event on blur (a comment is saved,
  // a name is used), and the next key goes to the labelling area, never into the field.
  function leaveField(t) {
    if (t && t.blur) t.blur();
    const a = document.activeElement;
    if (a && a !== document.body && a.blur) a.blur();
    current();
  }
  // Answer keys typed right after a name's Enter wait (in order) until the kernel has taken the name.
  function flushWaiting() {
    if (!waiting.length) return;
    if (Date.now() - namedAt > 20000) {
      waiting = [];
      model.send({type: "hint", text: "Type your name first: labels are saved under it."});
      return;
    }
    const q = current();
    const b = q && q.querySelector(".pg-toggle button");
    if (!b || b.disabled) { setTimeout(flushWaiting, 100); return; }
    const keys = waiting;
    waiting = [];
    keys.forEach((v) => answer(v));
  }
  function onKey(ev) {
    // Capture phase: ipywidgets' text boxes stop their keydown from bubbling, so only a capturing listener
    // sees Enter and Esc there.
    if (lost || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const t = ev.target;
    if (isField(t)) {
      if (ev.key === "Escape") { leaveField(t); ev.preventDefault(); }
      else if (ev.key === "Enter" && t.closest && t.closest(".pg-annotator")) {
        namedAt = Date.now();
        leaveField(t);
        ev.preventDefault();
      }
      return;  // any other key types into the field it was meant for
    }
    const k = ev.key;
    let done = true;
    if (k === "?") help.style.display = help.style.display === "none" ? "block" : "none";
    else if (k === "Escape") help.style.display = "none";
    else if (k in ANSWERS) answer(ANSWERS[k]);
    else if (k === "j" || k === "ArrowDown") moveUnit(+1);
    else if (k === "k" || k === "ArrowUp") moveUnit(-1);
    else if (k === "ArrowRight" || k === "]") { click(".pg-next button, button.pg-next"); setFocus(null); }
    else if (k === "ArrowLeft" || k === "[") { click(".pg-prev button, button.pg-prev"); setFocus(null); }
    else if (k === "g") { click("button.pg-next-unlabelled"); setFocus(null); }
    else if (k === "s") model.send({type: "next_response"});
    else if (k === "z") click("button.pg-undo");
    else if (k === "e") {
      const q = current();
      const box = q && q.closest(".pg-unit").querySelector(".pg-comment textarea, .pg-comment input");
      if (box && !box.disabled) box.focus(); else done = false;
    }
    else if (k === "/") {
      const box = document.querySelector(".pg-search input");
      if (box && !box.disabled) box.focus(); else done = false;
    }
    else done = false;
    if (done) { ev.preventDefault(); ev.stopPropagation(); }
  }
  function onClick(ev) {
    const box = ev.target.closest && ev.target.closest(".pg-comment");
    if (box && ev.isTrusted) {  // clicked into a unit's comment: Esc then an answer key answers that unit
      const unit = box.closest(".pg-unit");
      if (unit && !(focus && unit.contains(focus))) setFocus(unit.querySelector(".pg-q"));
      return;
    }
    const b = ev.target.closest && ev.target.closest(".pg-toggle button");
    if (!b) return;
    const c = toggleClass(b.closest(".pg-toggle"));
    // the answer already shown sends nothing, so the kernel has nothing to acknowledge
    if (c && !b.classList.contains("mod-active")) pending.set(c, Date.now());
    const q = b.closest(".pg-q");
    if (q && ev.isTrusted) setFocus(q);
  }
  function goLost() {
    if (lost) return;
    lost = true;
    banner.style.display = "block";
    const a = app();
    if (a) a.classList.add("pg-lost");
    for (const c of pending.keys()) {
      document.querySelectorAll(`.${c} button.mod-active`).forEach((b) => b.classList.remove("mod-active"));
      document.querySelectorAll(`.${c}`).forEach((t) => t.classList.add("pg-unsaved"));
    }
    document.querySelectorAll(".pg-app button, .pg-app input, .pg-app select, .pg-app textarea")
      .forEach((x) => { x.disabled = true; });
    const status = document.querySelector(".pg-status");
    if (status) status.textContent = "Connection lost — reload the page. A change you made in the last few " +
      "seconds may not have been saved; it is shown unset.";
  }
  function onMsg(msg) {
    if (!msg || typeof msg !== "object") return;
    if (msg.type === "pong") lastPong = Date.now();
    else if (msg.type === "ack") pending.delete(msg.toggle);
    // the first unanswered question of the new view; current() finds it (a ring put on a row the redraw
    // then replaced is put back by the timer below)
    else if (msg.type === "focus_first") { setFocus(null); current(); }
    else if (msg.type === "named") flushWaiting();
    else if (msg.type === "focus_name") {
      const box = document.querySelector(".pg-annotator input");
      if (box) { box.disabled = false; box.focus(); box.select(); }
    }
  }
  function applyQuery() {
    const q = model.get("query");
    if (q === null || q === undefined) return;
    try {
      const u = new URL(window.location.href);
      u.search = q;
      if (u.href !== window.location.href) window.history.replaceState(window.history.state, "", u.href);
    } catch (e) { /* not in a browser window */ }
  }
  model.on("msg:custom", onMsg);
  model.on("change:query", applyQuery);
  applyQuery();
  document.addEventListener("keydown", onKey, true);
  document.addEventListener("click", onClick, true);
  // The page opens with its first unanswered question focused and scrolled on screen (issue 42.5), so the
  // first j moves from it to the next one; the rows are drawn after this helper, so wait for them.
  const opened = Date.now();
  const opening = setInterval(() => {
    if (focus || Date.now() - opened > 20000) { clearInterval(opening); return; }
    if (questions().length) { clearInterval(opening); current(); }
  }, 150);
  const timer = setInterval(() => {
    if (lost) return;
    if (focus && !focus.isConnected) { focus = null; current(); }
    const limit = model.get("lost_after_ms");
    if (Date.now() - lastPong > limit) { goLost(); return; }
    try { model.send({type: "ping", n: ++seq}); } catch (e) { goLost(); }
  }, 2000);
  return () => {
    clearInterval(timer);
    clearInterval(opening);
    document.removeEventListener("keydown", onKey, true);
    document.removeEventListener("click", onClick, true);
    model.off("msg:custom", onMsg);
    model.off("change:query", applyQuery);
  };
}
export default { render };
"""


class PageBridge(anywidget.AnyWidget):
    """The page's front-end helper (see the module docstring)."""

    _esm = traitlets.Unicode(ESM).tag(sync=True)
    #: The query string for the URL bar (``?a=1&b=2``, or ``""`` for none).
    query = traitlets.Unicode("").tag(sync=True)
    #: Milliseconds without an answer to ``ping`` before the page shows "connection lost".
    lost_after_ms = traitlets.Int(8000).tag(sync=True)
    keymap = traitlets.Unicode("").tag(sync=True)

    def __init__(self, **kwargs: Any):
        import json

        super().__init__(keymap=json.dumps(KEYMAP), **kwargs)
        self.handlers: dict[str, Any] = {}
        self.on_msg(self._on_msg)

    def _on_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        kind = content.get("type")
        if kind == "ping":
            self.send({"type": "pong", "n": content.get("n")})
        handler = self.handlers.get(str(kind))
        if handler is not None:
            handler(content)

    def ack(self, toggle_class: str) -> None:
        """Tell the front-end the kernel has handled a click on this toggle (saved or refused)."""
        self.send({"type": "ack", "toggle": toggle_class})

    def named(self) -> None:
        """Tell the front-end the kernel has taken the name: answer keys typed meanwhile are applied now."""
        self.send({"type": "named"})

    def focus_name(self) -> None:
        """Put the cursor in the name box ("Switch name")."""
        self.send({"type": "focus_name"})

    def focus_first(self) -> None:
        """Move the keyboard focus to the first unanswered question of the view (after a case change)."""
        self.send({"type": "focus_first"})
