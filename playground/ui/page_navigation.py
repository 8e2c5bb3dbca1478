"""The page's navigation and view controls: reveal, filters, moving between cases and responses, weights and
gates, another dataset, and the export link (a mixin of :class:`~playground.ui.views.PlaygroundApp`; every
decision is the session's, this forwards and redraws)."""
from __future__ import annotations

import base64
from typing import Any

from .fragments import esc
from .page_state import PageState
from .panels import ALL
from .session import EXPORT_MIME

__all__ = ["PageNavigation"]


class PageNavigation(PageState):
    """Where the page is and how it is shown: reveal, filters, cases and responses, weights, gates, datasets."""

    def on_reveal(self, value: bool) -> None:
        if self.syncing:
            return
        if self.reveal.disabled and bool(value) != self.session.reveal_all:
            with self.quiet():  # a message set a locked checkbox: the session's mode stands
                self.reveal.value = self.session.reveal_all
            return
        self.session.reveal_all = bool(value) or self.session.read_only
        self._sync_verdict_filter()
        self.render_case()
        self.render_scores(chart=False)
        self.verdicts.render()
        self.update_url()

    def sync_controls(self) -> None:
        """Set the weight, gate and reveal controls from the session (a link changed it after the page was built)."""
        s = self.session
        with self.quiet():
            for d, slider in self.weights.items():
                slider.value = s.weights[d]
                self.gate_on[d].value = d in s.gates
                self.gate_floor[d].value = s.gates.get(d, s.thresholds[d])
            self.reveal.value = s.reveal_all
            self.search.value = s.filter.text
        self._sync_verdict_filter()

    def _sync_verdict_filter(self) -> None:
        """Blind mode: the harness-decision filter is hidden (and off) until reveal is on."""
        shown = self.session.reveal_all
        self.f_verdict.layout.display = None if shown else "none"
        if not shown and self.f_verdict.value != ALL:
            with self.quiet():
                self.f_verdict.value = ALL
            self.on_filter()

    def on_filter(self) -> None:
        """Apply the filters; the harness-decision filter only with reveal on (blind mode, checked here on the
        kernel whatever the page showed: a widget message can set a hidden dropdown)."""
        if self.syncing:
            return
        s = self.session
        verdict = None if self.f_verdict.value == ALL else self.f_verdict.value
        if verdict is not None and not s.reveal_all:
            with self.quiet():
                self.f_verdict.value = ALL
            verdict = None
            self.say("The harness-decision filter is offered only with “show harness labels” on.", error=True)
        s.set_filter(
            None if self.f_type.value == ALL else self.f_type.value,
            None if self.f_status.value == ALL else self.f_status.value,
            verdict,
            bool(self.f_disagree.value),
            str(self.search.value),
        )
        self.render_list()
        self.update_url()

    def on_pick(self, change: dict[str, Any]) -> None:
        if self.syncing or change["new"] is None or change["new"] == self.session.case_id:
            return
        self.guard(self.go, change["new"])

    def go(self, case_id: str, response_id: str | None = None) -> None:
        self.session.go_to(case_id, response_id)
        self.show_case()

    def show_case(self) -> None:
        """Draw the case now on screen, with its labels reloaded (another tab may have changed them)."""
        changed = self.session.refresh_case()
        self.render_case()
        self.render_scores()
        self.bridge.focus_first()
        self.verdicts.render()  # after the focus message: the keys' focus is not held up by the panel's queries
        self.update_url()
        if changed:
            self.say(f"{changed} label(s) of this case were changed in another tab; showing what is stored.")

    def move(self, where: str) -> None:
        s = self.session
        here = (s.case_id, s.response_id)
        step = {"next": s.next_case, "prev": s.prev_case, "unlabelled": s.next_unlabelled}[where]
        if step() is None:
            self.say("Everything here is labelled." if where == "unlabelled"
                     else "No more cases in that direction" + (" in your queue." if s.queue else
                                                               " (check the filters)."))
            return
        if where == "unlabelled" and (s.case_id, s.response_id) == here:
            self.say("Something on this page is still unlabelled: the focus is on it.")
            self.bridge.focus_first()
            return
        self.say("")
        self.show_case()

    def next_response(self) -> None:
        """The key ``s``: the next response of the case on screen (wrapping round)."""
        ids = [rid for rid, _ in self.session.scenarios()]
        if len(ids) > 1 and self.session.response_id in ids:
            self.select_response(ids[(ids.index(self.session.response_id) + 1) % len(ids)])

    def on_scenario(self, change: dict[str, Any]) -> None:
        if self.syncing or change["new"] is None or change["new"] == self.session.response_id:
            return
        self.guard(self.select_response, change["new"])

    def select_response(self, response_id: str) -> None:
        self.session.select_response(response_id)
        self.show_case()

    def on_weight(self, dim: str, value: float) -> None:
        if self.syncing:
            return
        self.session.set_weights({dim: value})
        self.render_scores(chart=False)
        self.update_url()

    def on_gate(self, dim: str) -> None:
        if self.syncing:
            return
        self.session.set_gate(dim, float(self.gate_floor[dim].value) if self.gate_on[dim].value else None)
        self.render_scores(chart=False)
        self.update_url()

    def on_dataset(self, name: str) -> None:
        """Open another dataset on the same store, keeping the name."""
        if name == self.session.dataset_name:
            return
        from .session import open_session_dataset

        old = self.session
        self.session = open_session_dataset(name, old.store, reveal_all=old.reveal_all)
        if old.annotator is not None:
            self.session.set_annotator(old.annotator)
            self.session.use_queue()
        for kind, rows in self._rows.items():
            for r in rows:
                r.box.close()
            self._rows[kind] = []
        for box in (self.passages_box, self.claims_box, self.facts_box):
            box.children = []
        with self.quiet():
            self.f_type.options = self.type_options()
            self.f_type.value = ALL
            self.search.value = ""
        self.session.set_filter()
        self._shown_case = None
        self.render_all()
        self.update_url()
        self.say(f"Dataset {name}: {len(self.session.case_ids)} cases.")

    def export(self, fmt: str) -> None:
        name, content, n = self.session.export_file(fmt, self.export_scope.value)
        data = base64.b64encode(content).decode("ascii")
        self.download.value = (f"<a download='{esc(name)}' href='data:{EXPORT_MIME[fmt]};charset=utf-8;base64,{data}' "
                               f"class='pg-download-link'>⬇ download {esc(name)}</a> "
                               f"<span class='pg-muted'>({n} row{'s' if n != 1 else ''})</span>")
