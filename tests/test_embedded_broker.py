"""The embedded default's broker hands a worker only whole messages, however fast the web server
sends them: kombu's own file-system transport let a worker take a message's file before it was
written, and the worker stopped on it."""

from __future__ import annotations

import threading
from pathlib import Path
from queue import Empty
from time import monotonic
from typing import Any

from kombu import Connection

from config.broker import Transport

MESSAGES = 20
# Large enough that writing one takes a while, as it does on a busy machine.
BODY = "x" * 4_000_000


def channel_on(queue: Path) -> tuple[Connection, Any]:
    options = {
        "data_folder_in": str(queue),
        "data_folder_out": str(queue),
        "control_folder": str(queue.parent / "control"),
    }
    connection = Connection(
        "filesystem://localhost//", transport=Transport, transport_options=options
    )
    return connection, connection.default_channel


def test_a_worker_receives_every_message_whole_while_they_are_being_sent(tmp_path: Path) -> None:
    queue = tmp_path / "queue"
    queue.mkdir()
    received: list[tuple[int, bool]] = []
    failures: list[BaseException] = []
    sent = threading.Event()

    def consume() -> None:
        connection, channel = channel_on(queue)
        with connection:
            while len(received) < MESSAGES and not (sent.is_set() and not any(queue.iterdir())):
                try:
                    message = channel._get("jobs")
                except Empty:
                    continue
                except Exception as error:  # what the worker would stop on
                    failures.append(error)
                    return
                received.append((message["n"], message["body"] == BODY))

    consumer = threading.Thread(target=consume)
    consumer.start()
    connection, channel = channel_on(queue)
    with connection:
        for n in range(MESSAGES):
            channel._put("jobs", {"n": n, "body": BODY})
    sent.set()
    consumer.join(timeout=60)

    assert failures == []
    assert received == [(n, True) for n in range(MESSAGES)]


def test_a_waiting_worker_takes_a_job_within_a_fraction_of_a_second(tmp_path: Path) -> None:
    queue = tmp_path / "queue"
    queue.mkdir()
    connection, _ = channel_on(queue)
    waits = []
    with connection, connection.SimpleQueue("jobs") as jobs:
        for n in range(3):
            sender = threading.Timer(0.25, lambda n=n: jobs.put({"n": n, "sent": monotonic()}))
            sender.start()
            # Waits as a worker does: it polls the folder, sleeping between looks.
            message = jobs.get(timeout=10)
            waits.append(monotonic() - message.payload["sent"])
            message.ack()
            sender.join()

    # kombu's own transport looks once a second: 0.75 s after a job sent a quarter second in.
    assert sorted(waits)[1] < 0.4
