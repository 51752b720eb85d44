from __future__ import annotations

import ctypes
import os

from celery import Celery, signals
from django.conf import settings

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("studio")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


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
