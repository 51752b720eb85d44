"""A record being labelled has an address of its own: its annotator gets there on starting and
after each label, and nobody else may open it."""

from __future__ import annotations

from django.test import Client
from django.urls import reverse

from annotation.models import Lease
from annotation.services.queue import lease_next_record
from tests.annotation.annotators import add_annotator, label_next, make_records
from tests.conftest import Cast


def lease_url(cast: Cast, lease: Lease) -> str:
    return reverse("annotation:annotate_lease", args=[cast.project.slug, lease.pk])


def start_url(cast: Cast) -> str:
    return reverse("annotation:annotate", args=[cast.project.slug])


def test_starting_leads_to_the_address_of_the_record_given(cast: Cast) -> None:
    records = make_records(cast.project, 2)
    client = cast.client_for("annotator")

    response = client.post(reverse("annotation:annotate_next", args=[cast.project.slug]))

    lease = Lease.objects.get(annotator=cast.annotator)
    assert response["Location"] == lease_url(cast, lease)
    page = client.get(response["Location"]).content.decode()
    assert f"Record {records[0].external_id}</h1>" in page


def test_a_label_sent_without_javascript_leads_to_the_next_records_address(cast: Cast) -> None:
    make_records(cast.project, 2)
    first = lease_next_record(project=cast.project, annotator=cast.annotator)
    submit = reverse("annotation:annotate_submit", args=[cast.project.slug, first.pk])

    response = cast.client_for("annotator").post(submit, {"verdict": "safe"})

    second = Lease.objects.get(annotator=cast.annotator, state=Lease.State.ACTIVE)
    assert response["Location"] == lease_url(cast, second)


def test_another_annotator_gets_not_found(cast: Cast) -> None:
    make_records(cast.project, 2)
    lease = lease_next_record(project=cast.project, annotator=cast.annotator)
    other = add_annotator(cast.project, "other")
    lease_next_record(project=cast.project, annotator=other)
    client = Client()
    client.force_login(other)

    response = client.get(lease_url(cast, lease))

    assert response.status_code == 404
    assert "Record " not in response.content.decode()


def test_a_labelled_record_sends_its_annotator_back_to_the_start_page(cast: Cast) -> None:
    make_records(cast.project, 2)
    labelled = label_next(cast.project, cast.annotator)
    lease = Lease.objects.get(annotator=cast.annotator, record=labelled.record)

    response = cast.client_for("annotator").get(lease_url(cast, lease), follow=True)

    assert response.redirect_chain == [(start_url(cast), 302)]
    assert "That record is no longer yours to label" in response.content.decode()


def test_an_expired_lease_sends_its_annotator_back_to_the_start_page(cast: Cast) -> None:
    make_records(cast.project, 1)
    lease = lease_next_record(project=cast.project, annotator=cast.annotator)
    Lease.objects.filter(pk=lease.pk).update(state=Lease.State.EXPIRED)

    response = cast.client_for("annotator").get(lease_url(cast, lease), follow=True)

    assert response.redirect_chain == [(start_url(cast), 302)]
    assert "That record is no longer yours to label" in response.content.decode()
