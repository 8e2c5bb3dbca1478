"""The playground page's style sheet and its labelling guide (static HTML, no text from data).

Layout (issue 14.8): the three columns (cases, the case, the scores) share
the window from 1024 to 1920 px wide without sideways scrolling.  Above
1280 px each column scrolls on its own inside the window; below, the page
scrolls as a whole and the scores column wraps under the case.  Text is never
cut: passage, claim, reference and history boxes grow with their text.
"""
from __future__ import annotations

__all__ = ["CSS", "GUIDE"]

CSS = """
<style>
.pg-app { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; font-size: 14px; color: #1f2328;
          box-sizing: border-box; max-width: 100%; }
.pg-app * { box-sizing: border-box; }
.pg-app .widget-html-content { line-height: 1.45; }
.pg-header { border-bottom: 1px solid #d0d7de; padding-bottom: 6px; margin-bottom: 6px; align-items: center; }
.pg-title { font-size: 19px; font-weight: 600; margin-right: 14px; }
.pg-muted, .pg-muted * { color: #656d76; font-size: 12px; }
.pg-panel { border: 1px solid #d0d7de; border-radius: 6px; padding: 8px 10px; background: #fff; min-width: 0; }
.pg-side { background: #f6f8fa; }
.pg-h { font-weight: 600; font-size: 15px; margin: 6px 0 2px 0; }
.pg-text { white-space: pre-wrap; overflow-wrap: anywhere; }
.pg-md { overflow-wrap: anywhere; }
.pg-md p { margin: 0 0 0.4em 0; }
.pg-md p:last-child { margin-bottom: 0; }
.pg-md ul, .pg-md ol { margin: 0.2em 0 0.4em 0; padding-left: 1.4em; }
.pg-md code { background: rgba(175,184,193,0.25); border-radius: 4px; padding: 0 3px; font-size: 90%; }
.pg-md pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #eef1f4; padding: 4px 6px; }
.pg-md table { border-collapse: collapse; } .pg-md td, .pg-md th { border: 1px solid #d0d7de; padding: 1px 4px; }
.pg-box { overflow-wrap: anywhere; background: #f6f8fa; border-left: 3px solid #d0d7de; padding: 4px 8px;
          font-size: 13px; }
.pg-qbox { font-size: 16px; font-weight: 500; background: #ddf4ff; border-left: 4px solid #0969da; padding: 6px 10px; }
.pg-claim { font-size: 14.5px; background: #fff8c5; border-left: 3px solid #d4a72c; padding: 3px 8px; }
.pg-claim-no { font-weight: 600; margin-right: 4px; float: left; }
.pg-ref { border-left-color: #2da44e; }
.pg-fact { font-size: 14px; background: #dafbe1; border-left: 3px solid #2da44e; padding: 3px 8px; }
.pg-unit { border-bottom: 1px dashed #d8dee4; padding: 4px 0 6px 0; }
.pg-ask { min-width: 200px; max-width: 260px; color: #424a53; }
.pg-q { border-radius: 5px; padding: 1px 3px; }
.pg-q.pg-focus { outline: 3px solid #0969da; outline-offset: 1px; background: #f0f7ff; }
.pg-app button:focus-visible { outline: 3px solid #0969da; outline-offset: 1px; }
mark.pg-mark { background: #fff1a8; padding: 0 1px; border-radius: 2px; }
mark.pg-mark.pg-mark-active { background: #ffd33d; outline: 2px solid #d4a72c; }
.pg-ev { font-size: 12.5px; background: #f6f8fa; border-left: 3px solid #8c959f; padding: 2px 6px; margin: 2px 0; }
.pg-ev-hit { background: #dafbe1; border-radius: 3px; padding: 0 2px; }
.pg-ev-miss { background: #ffebe9; border-radius: 3px; padding: 0 2px; }
.pg-ev-missing-exact { background: #ffcecb; font-weight: 600; border-radius: 3px; padding: 0 2px; }
.pg-comment textarea { font-size: 12.5px; min-height: 1.8em; }
.pg-auto-hidden { color: #8c959f; font-style: italic; font-size: 12px; }
.pg-auto-shown { font-size: 12.5px; }
.pg-differ { color: #bc4c00; font-weight: 600; }
.pg-agree { color: #1a7f37; }
.pg-why { font-size: 12.5px; color: #424a53; margin: 2px 0 4px 0; }
.pg-why summary { cursor: pointer; color: #0969da; font-size: 12.5px; }
.pg-why-body { background: #f6f8fa; border-left: 3px solid #0969da; padding: 4px 8px; margin-top: 2px;
               white-space: normal; }
.pg-variant-purpose { background: #fff8c5; border-left: 3px solid #d4a72c; padding: 3px 8px; margin: 3px 0;
                      font-size: 12.5px; white-space: normal; }
.pg-app .widget-html-content { white-space: normal; }
.pg-toggle .widget-toggle-button { width: auto !important; min-width: 44px; padding: 0 9px;
                                   overflow: visible !important; text-overflow: clip !important; }
.pg-scenario .widget-toggle-button { overflow: visible !important; text-overflow: clip !important; }
.pg-stale { color: #9a6700; font-size: 12px; }
.pg-status-ok { color: #1a7f37; }
.pg-status-err { color: #cf222e; font-weight: 600; }
.pg-stopped { background: #ffebe9; border: 2px solid #cf222e; padding: 6px 10px; border-radius: 6px; font-weight: 600;
              color: #82071e; }
.pg-rates table, .pg-agreement table, .pg-variants table { border-collapse: collapse; width: 100%; font-size: 13px; }
.pg-rates td, .pg-rates th, .pg-agreement td, .pg-agreement th, .pg-variants td, .pg-variants th {
    padding: 2px 5px; border-bottom: 1px solid #eaeef2; text-align: left; vertical-align: top; }
.pg-rates th, .pg-agreement th, .pg-variants th { color: #656d76; font-weight: 500; font-size: 12px; }
.pg-num { font-variant-numeric: tabular-nums; }
.pg-fail { color: #cf222e; font-weight: 600; }
.pg-pass { color: #1a7f37; }
.pg-warn { color: #9a6700; }
.pg-body { flex-flow: row wrap !important; gap: 8px; }
.pg-nav { flex: 0 0 280px !important; width: 280px !important; }
.pg-case-list select { font-size: 12px; }
.pg-case { flex: 1 1 440px !important; min-width: 0 !important; }
.pg-scores { flex: 1 1 340px !important; max-width: 480px; min-width: 0 !important; }
.pg-app > * { flex: 0 0 auto; }
.pg-panel > *, .pg-panel .widget-vbox > * { flex-shrink: 0; }
.pg-panel > .jupyter-widgets, .pg-panel > .widget-vbox > .jupyter-widgets { max-width: calc(100% - 4px); }
.pg-app .widget-checkbox { height: auto; }
.pg-app .widget-checkbox .widget-label-basic { white-space: normal; overflow: visible; height: auto;
                                              line-height: 1.3; }
@media (min-width: 1280px) {
  .pg-app { height: calc(100vh - 40px); min-height: 560px; }
  .pg-app > .pg-body { flex: 1 1 0; min-height: 0; flex-wrap: nowrap !important; }
  .pg-body > .pg-panel { height: 100%; overflow-y: auto; }
}
@media (max-width: 1279px) {
  .pg-scores { flex: 1 1 100% !important; max-width: none; }
}
.pg-weights { grid-template-columns: minmax(90px, 120px) minmax(90px, 150px) 44px auto !important; }
.pg-weights .widget-slider { min-width: 0; width: 100% !important; }
.pg-chart-svg svg { width: 100%; height: auto; display: block; }
.pg-ci { color: #656d76; font-size: 12px; }
.pg-verdict-ACCEPT { color: #1a7f37; font-weight: 600; }
.pg-verdict-REVIEW { color: #9a6700; font-weight: 600; }
.pg-verdict-REJECT { color: #cf222e; font-weight: 600; }
.pg-app .widget-toggle-buttons .widget-toggle-button { font-size: 12.5px; }
.pg-app .pg-toggle .mod-active { font-weight: 600; }
.pg-toggle button[data-value="yes"].mod-active { background: #1a7f37; color: #fff; }
.pg-toggle button[data-value="no"].mod-active { background: #cf222e; color: #fff; }
.pg-toggle button[data-value="unsure"].mod-active { background: #9a6700; color: #fff; }
.pg-unsaved button { background: #fff !important; color: #82071e !important; border: 1px dashed #cf222e; }
.pg-bar > * { margin-right: 10px !important; }
.pg-readonly { background: #fff8c5; border: 1px solid #d4a72c; padding: 4px 8px; border-radius: 4px; }
.pg-keymap { position: fixed; right: 16px; top: 16px; z-index: 1000; background: #fff; border: 2px solid #0969da;
             border-radius: 8px; padding: 10px 14px; box-shadow: 0 4px 16px rgba(0,0,0,0.2); font-size: 13px; }
.pg-keymap td { padding: 1px 8px 1px 0; }
.pg-keymap kbd { border: 1px solid #8c959f; border-radius: 4px; padding: 0 4px; background: #f6f8fa; }
.pg-lost-banner { position: fixed; left: 0; right: 0; top: 0; z-index: 1001; background: #cf222e; color: #fff;
                  font-size: 16px; font-weight: 600; padding: 12px 18px; text-align: center; }
.pg-lost .pg-body, .pg-lost .pg-bar, .pg-lost .pg-header { opacity: 0.55; pointer-events: none; }
.pg-keyhint { font-size: 12px; color: #656d76; }
.pg-verdict-box { border: 1px solid #d0d7de; border-radius: 6px; padding: 4px 8px; margin: 4px 0 8px 0; }
.pg-verdict button[data-value="pass"].mod-active { background: #1a7f37; color: #fff; }
.pg-verdict button[data-value="fail"].mod-active { background: #cf222e; color: #fff; }
.pg-verdict button[data-value="unsure"].mod-active { background: #9a6700; color: #fff; }
.pg-tag-chip button, button.pg-tag-chip { border-radius: 12px !important; font-size: 12px; height: 24px; }
button.pg-tag-chip.mod-active { background: #8250df; color: #fff; }
.pg-chip { display: inline-block; border-radius: 12px; padding: 0 8px; background: #fbefff; border: 1px solid #8250df;
           font-size: 12px; }
.pg-verdict-pass { color: #1a7f37; font-weight: 600; }
.pg-verdict-fail { color: #cf222e; font-weight: 600; }
.pg-verdict-unsure { color: #9a6700; font-weight: 600; }
.pg-failure-modes td, .pg-failure-modes th { padding: 1px 6px 1px 0; font-size: 12.5px; text-align: left; }
.pg-guidelines-body { font-size: 13px; line-height: 1.5; }
</style>
"""

GUIDE = """
<div class='pg-guide-text' style='font-size:13px;line-height:1.5'>
<b>Passage — relevant to the question?</b> Yes when the passage holds information needed to answer this question
(for a multi-turn case: the last question, read with the earlier turns). Judge the passage, not the response.<br>
<b>Claim — supported by the retrieved passages?</b> Yes only when everything the claim states can be found in the
retrieved passages shown above: not in your own knowledge, not in the reference. A citation marker [n] is not
support by itself.<br>
<b>Claim — correct against the reference?</b> Yes when the claim agrees with the reference answer and facts of the
case, whatever the passages say. An abstention ("I can't find that") is correct only when the case must abstain.<br>
<b>Fact — covered by the response?</b> Yes when the response states this reference fact (a paraphrase counts).<br>
<b>unsure</b> records that you could not decide (counted in no rate); <b>clear</b> removes your label;
<b>Undo</b> reverts your last change (whichever tab made it). Press <b>?</b> for the keys. Switch the
<b>response</b> to see the same case answered differently and watch each dimension move on its own.
The harness's automatic label appears beside a toggle once you have set it; the numbers on the right count only
your own labels: <i>this case</i> = the passages plus the response on screen, <i>all labelled</i> = everything you
labelled.
</div>
"""
