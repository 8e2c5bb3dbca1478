"""The hostile suite's index: every hostile input and hostile client of both adversarial passes, and the tests that
hold against it (issue 43.6).

One place: ``make test-hostile`` (``pytest -m hostile``) runs exactly the tests named here — tests/conftest.py
gives each of them the ``hostile`` marker at collection — and CI runs them with the rest (``make test``).
tests/test_hostile_suite.py checks the index: every entry names tests that exist (a renamed test fails it), and
the durability checks in it count acknowledged labels against stored ones on SQLite and PostgreSQL.

An entry names tests by node id (``tests/FILE.py::TEST``, parametrized variants included) or a whole file
(``tests/FILE.py``).  Tests stay in the files their owners keep them in (the trace importer's in
tests/test_traces_import.py, the serve lifecycle's in theirs); an entry whose tests have not landed yet is
``pending`` and reported as an expected failure until they do — never skipped silently.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["INDEX", "Entry", "matches"]


@dataclass(frozen=True)
class Entry:
    """One hostile input or client: which pass found it, what it is, the tests that hold against it."""

    found: str            # "first pass" (issue 29's probes) or "second pass" (issue 43)
    what: str
    tests: tuple[str, ...]
    pending: bool = False  # the tests are owned by another change that has not landed yet


F, S = "first pass", "second pass"

INDEX: tuple[Entry, ...] = (
    # --- who may do what: keys, roles, links --------------------------------------------------------------
    Entry(F, "the /voila/query request handshake opened without the kernel's key (bypass, eavesdropping)", (
        "tests/test_request.py::test_the_handshake_is_refused_without_the_kernels_own_key",
        "tests/test_request.py::test_a_listener_without_the_key_neither_hears_nor_stalls_the_page",
        "tests/test_serve_security.py::test_a_listener_on_the_handshake_neither_stalls_nor_overhears_a_page")),
    Entry(F, "every route without a key; the login page as a password form; the key leaking", (
        "tests/test_serve_security.py::test_every_route_refuses_without_a_key",
        "tests/test_serve_security.py::test_the_login_page_says_ask_your_instructor_and_takes_no_password",
        "tests/test_serve_security.py::test_the_key_stays_secret",
        "tests/test_serve_roles.py::test_the_key_never_reaches_a_kernel",
        "tests/test_serve_roles.py::test_the_keys_compare_and_name_the_role")),
    Entry(F, "a student reading everyone's labels", (
        "tests/test_serve_security.py::test_a_students_page_offers_no_one_elses_labels",
        "tests/test_session.py::test_two_annotators_do_not_see_each_others_labels")),
    Entry(F, "the room opened with the class key; an observer sending the instructor's clicks", (
        "tests/test_serve_security.py::test_the_room_refuses_the_class_key",
        "tests/test_serve_security.py::test_an_observer_cannot_assign_even_by_sending_the_click",
        "tests/test_serve_roles.py::test_the_room_takes_the_instructor_and_an_observer_never_the_class_key",
        "tests/test_serve_roles.py::test_the_rooms_writes_check_the_role")),
    Entry(F, "roster links: a name edited in the link, another name typed or sent, the class key alone", (
        "tests/test_serve_roster.py",
        "tests/test_roster.py::test_the_login_cookie_binds_the_name_and_is_checked_again",
        "tests/test_roster.py::test_the_signature_never_reaches_a_kernel")),
    Entry(F, "widget messages a page never sends: locked name, blind-mode verdict filter, disabled buttons", (
        "tests/test_session_guard.py::test_a_name_in_use_is_locked_and_a_message_cannot_change_it",
        "tests/test_session_guard.py::test_the_hidden_verdict_filter_cannot_be_set_by_a_message_while_blind",
        "tests/test_session_guard.py::test_a_locked_reveal_and_disabled_buttons_refuse_messages",
        "tests/test_session_guard.py::test_labels_are_refused_without_a_name_whatever_the_message")),
    Entry(F, "server paths in errors and on the kernel websocket", (
        "tests/test_serve_security.py::test_a_bad_widget_message_sends_back_no_server_path",
        "tests/test_serve_roles.py::test_the_kernel_websocket_sends_no_server_paths")),
    # --- hostile clients of the server --------------------------------------------------------------------
    Entry(F, "hostile websocket frames (a 16-byte frame claiming 2**63 parts, legacy frames misread as v1)", (
        "tests/test_serve_live.py::test_hostile_frames_do_not_stop_the_server",
        "tests/test_serve.py::test_install_replaces_the_upstream_parsers_once")),
    Entry(F, "a GET flood and one address taking every kernel", (
        "tests/test_serve_live.py::test_a_get_flood_stays_under_the_cap_and_the_server_answers",
        "tests/test_serve_security.py::test_one_address_holds_no_more_than_its_share")),
    # --- hostile text and files ---------------------------------------------------------------------------
    Entry(F, "stored XSS: script in markdown, guidelines, names, notes, data", (
        "tests/test_fragments.py::test_no_markdown_payload_can_carry_script",
        "tests/test_fragments.py::test_gate_reasons_and_text_are_escaped",
        "tests/test_views.py::test_hostile_text_is_escaped_in_every_html_widget",
        "tests/test_browser.py::test_hostile_text_renders_as_text",
        "tests/test_browser_page.py::test_markdown_renders_and_no_script_runs",
        "tests/test_browser_verdicts.py::test_the_guidelines_render_with_their_version_and_no_script_runs",
        "tests/test_room.py::test_page_escapes_text_shows_split_and_adjudicates")),
    Entry(F, "CSV formula cells and the lone CR", (
        "tests/test_store_v3.py::test_csv_cells_are_neutralised_and_read_back",
        "tests/test_store_v3.py::test_csv_injection_round_trip_and_bad_names_listed",
        "tests/test_datasets_roundtrip.py::test_csv_cells_a_spreadsheet_would_run_are_neutralised",
        "tests/test_datasets_roundtrip.py::test_any_text_reads_back_exactly_from_every_export")),
    Entry(F, "import bounds: the Parquet bomb, JSON nested 100,000 deep, a truncated CSV, a FIFO, oversize files", (
        "tests/test_datasets_limits.py",
        "tests/test_calibrate_external_limits.py")),
    Entry(F, "a dataset re-imported (--replace) or the store file replaced under an open page", (
        "tests/test_session_guard.py::test_a_reimport_under_an_open_page_stops_it_saving_and_says_so",
        "tests/test_session_guard.py::test_the_heartbeat_tells_an_idle_page_of_a_reimport",
        "tests/test_store_safety.py::test_a_replaced_file_makes_the_next_write_fail_and_the_new_file_is_untouched",
        "tests/test_room.py::test_room_says_when_its_sqlite_file_was_replaced")),
    # --- durability: acknowledged labels against stored ones (0 lost) -------------------------------------
    Entry(F, "a writer SIGKILLed mid-loop, and writers racing, on SQLite and PostgreSQL: 0 acknowledged labels lost", (
        "tests/test_store_concurrency.py::test_writer_killed_mid_loop_loses_no_returned_label",
        "tests/test_store_concurrency.py::test_concurrent_writers_lose_nothing")),
    Entry(S, "PostgreSQL's postmaster SIGKILLed under a writer: 0 acknowledged labels lost after its restart", (
        "tests/test_hostile_suite.py::test_a_postmaster_killed_under_a_writer_loses_no_acknowledged_label",)),
    Entry(F, "a page's kernel SIGKILLed: the page says the connection is lost", (
        "tests/test_browser_page.py::test_a_dead_kernel_turns_the_page_into_connection_lost",)),
    # --- second pass (issue 43) ---------------------------------------------------------------------------
    Entry(S, "a revoked, reissued, removed or expired roster link (43.2)", (
        "tests/test_roster_revocation.py",
        "tests/test_serve_revocation.py")),
    Entry(S, "one client holding many places in the waiting line, never claiming (43.3)", (
        "tests/test_serve_queue.py::test_a_told_turn_holds_its_slot_hold_s_and_may_be_claimed_until_claim_s",
        "tests/test_serve_queue.py::test_a_visitor_who_let_a_turn_pass_holds_no_slot_next_time",
        "tests/test_serve_queue.py::test_places_in_line_count_against_the_visitors_share",
        "tests/test_serve_queue.py::test_places_in_line_count_against_the_address_and_the_cap")),
    Entry(S, "keys and signatures in the logs: encoded, double-encoded, inside next=, in a Referer (43.4)", (
        "tests/test_serve_logs.py",)),
    Entry(S, "trace files: a 100,001-span chain, a 1,000-span cycle, a 50,000,000-character cell, 10**6 spans (43.1)", (
        "tests/test_traces_structure.py", "tests/test_import_limits.py")),
    Entry(S, "serve SIGKILLed: its Voila child and kernels die with it, the port is free (43.5)", (
        "tests/test_serve_lifecycle.py::test_sigkill_of_serve_frees_the_port_within_5_s_and_a_restart_serves",)),
)


def matches(entry_test: str, nodeid: str) -> bool:
    """Whether the collected test ``nodeid`` is named by ``entry_test`` (a node id, its parametrized variants, or
    every test of a file)."""
    if entry_test.endswith(".py"):
        return nodeid.startswith(entry_test + "::")
    return nodeid == entry_test or nodeid.startswith(entry_test + "[")
