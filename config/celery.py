from __future__ import annotations

import ctypes
import os
import threading
from typing import TYPE_CHECKING

from celery import Celery, bootsteps, signals
from celery.utils.log import get_logger
from django.conf import settings

if TYPE_CHECKING:
    from celery.worker.consumer import Consumer

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("studio")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
logger = get_logger(__name__)


class JobRecovery(bootsteps.StartStopStep):
    """Sends again the jobs whose worker died (curation/job_leases.py): when this worker starts,
    and every half of JOB_STALE_SECONDS after, so that a job is taken over within a minute of
    its worker's death though no worker starts. A look takes milliseconds (a few queries and
    the cache); it runs in a thread of its own, beside the jobs. Not on Celery's timer: a look
    still running there when the worker was stopped kept the worker from ever exiting."""

    def __init__(self, consumer: Consumer, **kwargs: object) -> None:
        super().__init__(consumer, **kwargs)
        self.stopped = threading.Event()

    def start(self, consumer: Consumer) -> None:
        _recover_jobs()
        # An event of its own for each start: the consumer restarts its steps when the broker's
        # connection comes back.
        self.stopped = threading.Event()
        # A daemon: nothing it holds needs finishing when the worker exits.
        threading.Thread(
            target=_look_every, args=(self.stopped,), name="job recovery", daemon=True
        ).start()

    def stop(self, consumer: Consumer) -> None:
        self.stopped.set()

    shutdown = stop


def _look_every(stopped: threading.Event) -> None:
    while not stopped.wait(settings.JOB_STALE_SECONDS / 2):
        _recover_jobs()


def _recover_jobs() -> None:
    # Imported here: the apps' modules need Django set up, which this module comes before.
    from django.db import connection

    from curation.job_leases import jobs_recover

    try:
        for task, ids in jobs_recover().items():
            logger.warning("Sent again %s for %s, which no worker held", task, ids)
    except Exception:
        logger.exception("Looking for jobs whose worker died failed; trying again later")
    finally:
        # This may run in the worker's parent process: pool processes it forks later must not
        # share its database connection.
        connection.close()


app.steps["consumer"].add(JobRecovery)


@app.on_after_configure.connect
def _create_broker_folders(sender: Celery, **kwargs: object) -> None:
    # The file-system broker of the embedded setup expects its folders to exist.
    for key in ("data_folder_in", "data_folder_out", "control_folder"):
        folder = sender.conf.broker_transport_options.get(key)
        if folder:
            os.makedirs(folder, exist_ok=True)


@signals.worker_init.connect
def _refuse_debug(**kwargs: object) -> None:
    # With DEBUG on, Django keeps every SQL statement in connection.queries, and only a web
    # request clears them: each process of a worker started so grew to 3 GB and kept it while
    # idle. Debug conveniences are for pages; a worker has none to offer.
    if settings.DEBUG:
        raise SystemExit(
            "A Celery worker does not run with DEBUG on: Django would keep every SQL statement "
            "it runs in memory. Start it with DEBUG=false."
        )


@signals.task_postrun.connect
def _return_freed_memory(**kwargs: object) -> None:
    # Python hands a finished job's objects back to the C allocator, which keeps the freed
    # pages of its heap for later rather than give them back: a worker process that imported
    # 50,000 records stayed 60 MB larger for the rest of its life. glibc's malloc_trim gives
    # them back; it takes microseconds, so it runs after every job.
    if _malloc_trim is not None:
        _malloc_trim(0)


# None where the C library has no malloc_trim (macOS, musl): its allocator is left as it is.
_malloc_trim = getattr(ctypes.CDLL(None), "malloc_trim", None)
