"""What the page handler changes in the HTML Voila streams: no Python repr, a page that never stays blank.

* :func:`plain_widget_text` — a widget's output carries, beside its widget view, ``text/plain``: the Python
  repr (``VBox(children=(...``) that the browser shows when the view cannot be drawn (its kernel is gone).
  That text is replaced by :data:`NO_WIDGET_TEXT`, in words.
* :func:`guard_script` — a script added at the end of every page:

  - drops ``token=`` from the address bar (``history.replaceState``) once the page has loaded: the login
    cookie carries the key from then on, and a copied address does not;
  - if the page arrived without its widgets (the server sent it without the kernel's output) or the
    widgets are not drawn ``DRAW_TIMEOUT_S`` seconds after the page loaded (no kernel to draw them from),
    it says so in words at the top of the page and reloads itself after ``5 * 2**n`` seconds (n = retries
    so far, at most ``RETRY_MAX_S``), up to ``RETRIES`` times; then it asks the reader to reload or tell
    the instructor.
"""
from __future__ import annotations

import json
import re

__all__ = ["DRAW_TIMEOUT_S", "NO_WIDGET_TEXT", "RETRIES", "RETRY_MAX_S", "WIDGET_VIEW", "guard_script",
           "plain_widget_text"]

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
NO_WIDGET_TEXT = "This part of the page could not be drawn: its kernel is gone. Reload the page."
DRAW_TIMEOUT_S = 45
RETRIES = 12
RETRY_MAX_S = 60
_OUTPUT = re.compile(r'(<script type="application/vnd\.voila\.cell-output\+json">)(.*?)(</script>)', re.S)


def _html_json(value: object) -> str:
    """JSON safe inside a ``<script>`` element (as Jinja's ``tojson``: ``<``, ``>``, ``&``, ``'`` escaped)."""
    text = json.dumps(value, ensure_ascii=False)
    return (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("'", "\\u0027"))


def _replace_repr(match: re.Match[str]) -> str:
    try:
        output = json.loads(match.group(2))
    except ValueError:
        return match.group(0)
    data = output.get("data") if isinstance(output, dict) else None
    if not isinstance(data, dict) or WIDGET_VIEW not in data or "text/plain" not in data:
        return match.group(0)
    data["text/plain"] = NO_WIDGET_TEXT
    return match.group(1) + _html_json(output) + match.group(3)


def plain_widget_text(html: str) -> str:
    """``html`` with the ``text/plain`` of every widget output replaced by :data:`NO_WIDGET_TEXT`."""
    if WIDGET_VIEW not in html:
        return html
    return _OUTPUT.sub(_replace_repr, html)


_GUARD = """<script>
(function () {
  "use strict";
  var sent = %(sent)s, drawTimeout = %(draw)d, retries = %(retries)d, retryMax = %(retry_max)d;
  try {
    var here = new URL(window.location.href);
    if (here.searchParams.has("token")) {
      here.searchParams.delete("token");
      window.history.replaceState(window.history.state, "", here.pathname + here.search + here.hash);
    }
  } catch (e) {}
  function say(text) {
    var box = document.getElementById("pg-serve-notice");
    if (!box) {
      box = document.createElement("div");
      box.id = "pg-serve-notice";
      box.setAttribute("role", "status");
      box.style.cssText = "position:fixed;top:0;left:0;right:0;z-index:10000;padding:1em 1.5em;" +
        "background:#fff8c5;color:#222;font:16px/1.5 system-ui,sans-serif;border-bottom:1px solid #d4a72c";
      document.body.appendChild(box);
    }
    box.textContent = text;
  }
  function drawn() {
    return document.querySelector(".jupyter-widgets:not(.jupyter-widgets-disconnected), .widget-box, " +
                                  ".pg-app, .pr-app") !== null;
  }
  function retry(why) {
    var key = "pg-serve-retries:" + window.location.pathname, n = 0;
    try { n = parseInt(window.sessionStorage.getItem(key) || "0", 10) || 0; } catch (e) {}
    if (n >= retries) {
      say(why + " The server is still busy: reload the page in a minute, or tell your instructor.");
      return;
    }
    var wait = Math.min(retryMax, 5 * Math.pow(2, n)), left = wait;
    try { window.sessionStorage.setItem(key, String(n + 1)); } catch (e) {}
    (function tick() {
      say(why + " Trying again by itself in " + left + " s (attempt " + (n + 1) + " of " + retries + ").");
      if (left-- <= 0) { window.location.reload(); return; }
      window.setTimeout(tick, 1000);
    })();
  }
  function settled() {
    try { window.sessionStorage.removeItem("pg-serve-retries:" + window.location.pathname); } catch (e) {}
    var box = document.getElementById("pg-serve-notice");
    if (box) { box.remove(); }
  }
  window.addEventListener("load", function () {
    if (!sent) {
      retry("This page arrived without its content: the server could not get a kernel ready in time.");
      return;
    }
    var started = Date.now();
    (function look() {
      if (drawn()) { settled(); return; }
      if (Date.now() - started > drawTimeout * 1000) {
        retry("This page could not be drawn: it has no kernel to draw it from.");
        return;
      }
      window.setTimeout(look, 500);
    })();
  });
})();
</script>
"""


def guard_script(widgets_sent: bool, draw_timeout: int = DRAW_TIMEOUT_S) -> str:
    """The script added to a page whose HTML did (``widgets_sent``) or did not carry its widget views."""
    return _GUARD % {"sent": "true" if widgets_sent else "false", "draw": draw_timeout, "retries": RETRIES,
                     "retry_max": RETRY_MAX_S}
