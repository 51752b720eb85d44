"""Jobs are sent to the workers by the name of their task (curation/jobs.py): every name sent
must be a task the workers run, or the job would wait in the queue for ever. The same holds of
the jobs workers send again when their worker died (curation/job_leases.py)."""

from __future__ import annotations

import ast
import importlib

from config.celery import app
from tests.test_layout import MODULES

SENDERS = {"job_send", "job_send_after_commit", "job_kind_register"}
# Sends the tasks registered by name (job_kind_register), which are checked there.
RECOVERY = "curation.job_leases"


def _names_sent() -> set[str]:
    names = set()
    for module, path in MODULES.items():
        if module == RECOVERY:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in SENDERS
            ):
                first = node.args[0]
                assert isinstance(first, ast.Constant), f"{path}: a task is named by a literal"
                names.add(first.value)
    return names


def test_every_job_sent_names_a_task_the_workers_run() -> None:
    for module in MODULES:
        if module.endswith(".tasks"):
            importlib.import_module(module)
    sent = _names_sent()

    assert sent >= {
        "curation.tasks.run_import_batch",
        "curation.tasks.update_search_index",
        "judging.tasks.run_judge",
        "releases.tasks.build_release",
        "authoring.tasks.run_task_import",
        "judging.tasks.check_connection",
    }
    assert sent - set(app.tasks) == set()


def test_the_leases_of_jobs_name_the_tasks_recovered() -> None:
    for module in MODULES:
        if module.endswith(".tasks"):
            importlib.import_module(module)
    from authoring.services.import_jobs import TASK_IMPORT_TASK
    from curation.job_leases import _kinds
    from curation.services.imports import IMPORT_TASK
    from curation.services.search import SEARCH_TASK
    from judging.services.judges import CHECK_TASK
    from releases.build import BUILD_TASK

    leased = {IMPORT_TASK, SEARCH_TASK, TASK_IMPORT_TASK, BUILD_TASK, CHECK_TASK}
    assert set(_kinds) == leased
    assert leased - set(app.tasks) == set()
