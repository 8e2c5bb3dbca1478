"""Kernel messages' dates read with the standard library (playground/serving/messages.py)."""
from __future__ import annotations

from datetime import timedelta

import jupyter_client.jsonutil
import pytest
from dateutil.parser import isoparse

from playground.serving import messages
from playground.serving.messages import iso_datetime


@pytest.mark.parametrize("text", [
    "2026-12-02T04:03:35.123456Z",      # what ipykernel sends
    "2026-12-02T04:03:35Z",
    "2026-12-02T04:03:35.1Z",           # one digit of fraction
    "2026-12-02T04:03:35.123+01:00",
    "2026-12-02T04:03:35.123456-0530",  # an offset without its colon
    "2026-12-02T04:03:35",              # naive (jupyter_client then adds the local zone)
])
def test_the_same_instant_and_offset_as_dateutil(text):
    ours, theirs = iso_datetime(text), isoparse(text)
    assert ours == theirs
    assert ours.utcoffset() == theirs.utcoffset()
    assert ours.isoformat() == theirs.isoformat()


def test_the_offset_of_a_z_is_zero_and_a_refused_form_falls_back_on_dateutil():
    assert iso_datetime("2026-12-02T04:03:35Z").utcoffset() == timedelta(0)
    assert iso_datetime("20261202T040335") == isoparse("20261202T040335")  # basic format, for the fallback


def test_install_makes_jupyter_client_parse_message_dates_with_it(monkeypatch):
    monkeypatch.setattr(jupyter_client.jsonutil, "_dateutil_parse", isoparse)
    messages.install()
    assert jupyter_client.jsonutil._dateutil_parse is iso_datetime
    header = jupyter_client.jsonutil.extract_dates({"date": "2026-12-02T04:03:35.5Z", "msg_id": "x"})
    assert header == {"date": isoparse("2026-12-02T04:03:35.5Z"), "msg_id": "x"}


def test_the_servers_logger_builds_no_record_it_would_not_show():
    import logging

    from playground.serving.app import PlaygroundVoila

    app = PlaygroundVoila()
    assert app.log.isEnabledFor(logging.DEBUG)  # traitlets' default: the handler drops them
    app.skip_unshown_records()
    assert not app.log.isEnabledFor(logging.DEBUG) and app.log.isEnabledFor(logging.INFO)
    app.log_level = logging.DEBUG  # --debug
    app.skip_unshown_records()
    assert app.log.isEnabledFor(logging.DEBUG)
