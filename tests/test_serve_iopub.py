"""The server reads every kernel's output, however late (playground/serving/kernels.py, issue 30's stall).

A real kernel, started by the server's kernel manager over ipc as ``playground serve`` starts them, sends
3,000 outputs while nobody reads its IOPub socket (the server's event loop busy with other pages).  With ZMQ's
default high-water marks the messages past about 2,000 were dropped — the cell's ``status: idle`` among them,
so Voila's renderer waited its whole ``iopub_timeout`` for output the kernel had sent at once, and the page
went out without its widgets.  This test fails on the manager without the fix (``queue.Empty``: no idle).
"""
from __future__ import annotations

import asyncio
import queue
import time

import pytest
import zmq
from traitlets.config import Config

from playground.serving.kernels import (
    IOPUB_RCVHWM,
    DrainingIOPubChannel,
    GuardedKernelManager,
    UnboundedIOPubClient,
)

#: More outputs than ZMQ's default marks hold (1,000 on the kernel's side, 1,000 on the reader's).
FLOOD = 3000
#: Sent in bursts of 100 a few milliseconds apart, at a pace ZMQ's I/O threads keep up with on a loaded machine:
#: what is late is the reader's Python side, as the server's event loop is.
CODE = f"""import time
from IPython.display import display
for i in range({FLOOD}):
    display({{'text/plain': str(i)}}, raw=True)
    if i % 100 == 99:
        time.sleep(0.02)
"""


async def _flood_read_late(manager: GuardedKernelManager) -> tuple[int, bool, type]:
    kernel_id = await manager.start_kernel(kernel_name="python3", env={"VOILA_PREHEAT": "False"})
    try:
        client = manager.get_kernel(kernel_id).client()  # what Voila's renderer reads the page's output with
        client.start_channels()
        await client.wait_for_ready(timeout=120)
        msg_id = client.execute(CODE)
        while (await client.get_shell_msg(timeout=120))["parent_header"].get("msg_id") != msg_id:
            pass  # the cell's reply: it is done, every output has been sent
        time.sleep(2.0)  # the loop busy elsewhere: the kernel's IOPub thread finishes sending, nobody reads
        shown, idle = 0, False
        while not idle:
            msg = await client.get_iopub_msg(timeout=20)  # a dropped idle: queue.Empty here, the test fails
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            shown += msg["msg_type"] == "display_data"
            idle = msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle"
        channel = type(client.iopub_channel)
        with pytest.raises(queue.Empty):  # nothing queued: it polls, and says so when the time is up
            await client.iopub_channel.get_msg(timeout=0.5)
        client.stop_channels()
        return shown, idle, (type(client), channel)
    finally:
        await manager.shutdown_kernel(kernel_id, now=True)


def test_every_output_of_a_kernel_reaches_a_server_that_reads_it_late(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the kernel's ipc socket files
    # ``playground serve`` runs its kernels over ipc (unix sockets: small buffers, unlike loopback TCP's)
    manager = GuardedKernelManager(watch_interval=0, config=Config({"KernelManager": {"transport": "ipc"}}))
    shown, idle, client_class = asyncio.run(_flood_read_late(manager))
    assert client_class == (UnboundedIOPubClient, DrainingIOPubChannel)
    assert (shown, idle) == (FLOOD, True)


def test_the_activity_watch_and_the_websockets_share_a_context_without_a_receive_mark():
    manager = GuardedKernelManager(watch_interval=0)
    manager.pre_start_kernel("python3", {})
    assert manager.context.getsockopt(zmq.RCVHWM) == IOPUB_RCVHWM == 0
    socket = manager.context.socket(zmq.SUB)
    try:
        assert socket.getsockopt(zmq.RCVHWM) == 0
    finally:
        socket.close()
