"""Many annotators claiming and submitting at once, on PostgreSQL, in real transactions.

Each of 32 threads is an annotator with a connection of its own, looping claim -> label (or skip,
or let the lease lapse) until nothing is left for them. Whatever the interleaving, no record gets
more than k labels, nobody labels a record twice, the counts on the records match the rows, and
no slot is lost: a record short of k labels has been labelled or skipped by every annotator.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection, connections
from django.db.models import Count, Q
from django.utils import timezone

from annotation.models import Annotation, Lease
from annotation.services.labels import Label, annotation_submit
from annotation.services.queue import lease_next_record, lease_skip
from curation.models import Record
from curation.services.projects import project_create
from tests.annotation.annotators import add_annotator, make_records

THREADS = 32
K = 2

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL"),
]


def run_annotators(project, annotators, work) -> list[BaseException]:
    """Run `work(annotator, rng)` for every annotator in a thread of its own, all at once."""
    barrier = threading.Barrier(len(annotators))
    errors: list[BaseException] = []

    def run(index: int, annotator) -> None:
        try:
            barrier.wait()
            work(annotator, random.Random(index))
        except BaseException as error:
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, a)) for i, a in enumerate(annotators)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "an annotator is stuck"
    return errors


def assert_counts_match_rows(project) -> None:
    rows = Record.objects.filter(project=project).annotate(
        labels=Count("annotations", distinct=True),
        live=Count("leases", filter=Q(leases__state=Lease.State.ACTIVE), distinct=True),
    )
    for record in rows:
        assert record.labels <= K, f"{record} has {record.labels} labels"
        assert (record.annotation_count, record.lease_count) == (record.labels, record.live)


def test_claims_and_submits_at_once_never_exceed_k_labels() -> None:
    project = project_create(actor=None, name="Race", slug="race")
    project.overlap = K
    project.save()
    records = make_records(project, 60)
    annotators = [add_annotator(project, f"annotator{n}") for n in range(THREADS)]

    def work(annotator, rng) -> None:
        while (lease := lease_next_record(project=project, annotator=annotator)) is not None:
            annotation_submit(lease=lease, actor=annotator, label=Label("safe"))

    assert run_annotators(project, annotators, work) == []

    assert_counts_match_rows(project)
    per_record = Counter(
        Annotation.objects.filter(project=project).values_list("record_id", flat=True)
    )
    # Everyone kept claiming until nothing was left, so every record got exactly k labels.
    assert per_record == dict.fromkeys((r.pk for r in records), K)
    assert not Lease.objects.filter(project=project, state=Lease.State.ACTIVE).exists()


def test_skips_and_lapsed_leases_among_them_lose_no_slot() -> None:
    project = project_create(actor=None, name="Race", slug="race")
    project.overlap = K
    project.save()
    records = make_records(project, 40)
    annotators = [add_annotator(project, f"annotator{n}") for n in range(THREADS)]

    deadline = time.monotonic() + 60

    def work(annotator, rng) -> None:
        while True:
            lease = lease_next_record(project=project, annotator=annotator)
            if lease is None:
                # Nothing is free now; a record another annotator holds may come back (walked
                # away from, or skipped), as an annotator finds who looks again later.
                live = Lease.objects.filter(project=project, state=Lease.State.ACTIVE)
                if not live.exists():
                    return
                assert time.monotonic() < deadline, f"leases never ended: {list(live)}"
                time.sleep(0.01)
                continue
            choice = rng.random()
            if choice < 0.15:
                # Walk away: the lease lapses, and the next claim (anyone's) reclaims it.
                Lease.objects.filter(pk=lease.pk, state=Lease.State.ACTIVE).update(
                    expires_at=timezone.now() - timedelta(seconds=1)
                )
            elif choice < 0.45:
                lease_skip(lease=lease, actor=annotator, reason="Not sure I understand it.")
            else:
                annotation_submit(
                    lease=lease,
                    actor=annotator,
                    label=Label("unsafe", risk_description="Leaks data."),
                )

    assert run_annotators(project, annotators, work) == []

    assert_counts_match_rows(project)
    pairs = Annotation.objects.filter(project=project).values_list("record_id", "annotator_id")
    assert len(pairs) == len(set(pairs)), "an annotator labelled a record twice"
    done = {
        (record_id, annotator_id)
        for record_id, annotator_id in Lease.objects.filter(
            project=project, state__in=[Lease.State.SUBMITTED, Lease.State.SKIPPED]
        ).values_list("record_id", "annotator_id")
    }
    for record in Record.objects.filter(pk__in=[r.pk for r in records]):
        if record.annotation_count < K:
            # Short of k labels only because every annotator has labelled or skipped it.
            missing = [a.username for a in annotators if (record.pk, a.pk) not in done]
            assert missing == [], f"{record} has a free slot that {missing} never got"
