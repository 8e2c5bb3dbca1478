"""The lean activity watch (playground/serving/activity.py) against jupyter_server's rule."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
from jupyter_client.session import Session

from playground.serving.activity import record_activity
from playground.serving.kernels import GuardedKernelManager


def _frames(session: Session, msg_type: str, parent_type: str | None, content: dict) -> list[bytes]:
    parent = session.msg_header(parent_type) if parent_type else {}
    msg = session.msg(msg_type, content=content, parent=parent)
    return session.serialize(msg)


def _kernel(state: str) -> SimpleNamespace:
    return SimpleNamespace(session=Session(key=b"k"), execution_state=state, last_activity=None)


@pytest.mark.parametrize(("state", "msg_type", "parent_type", "content", "after", "active"), [
    ("idle", "status", "execute_request", {"execution_state": "busy"}, "busy", True),
    ("busy", "status", "execute_request", {"execution_state": "idle"}, "idle", True),
    ("starting", "status", None, {"execution_state": "idle"}, "idle", True),       # first state after starting
    ("starting", "status", None, {"execution_state": "starting"}, "starting", True),
    ("idle", "status", "kernel_info_request", {"execution_state": "busy"}, "idle", False),  # untracked parent
    ("idle", "stream", "execute_request", {"name": "stdout", "text": "x"}, "idle", True),
    ("idle", "comm_msg", "comm_info_request", {"comm_id": "c", "data": {}}, "idle", True),  # comm_msg is tracked
    ("busy", "status", "kernel_info_request", {"execution_state": "idle"}, "busy", True),   # busy: activity
])
def test_activity_and_state_follow_jupyter_servers_rule(state, msg_type, parent_type, content, after, active):
    manager = GuardedKernelManager(watch_interval=0)
    before = manager.last_kernel_activity
    kernel = _kernel(state)
    record_activity(manager, kernel, _frames(kernel.session, msg_type, parent_type, content))
    assert kernel.execution_state == after
    assert (kernel.last_activity is not None) is active
    assert manager.last_kernel_activity is (kernel.last_activity if active else before)
