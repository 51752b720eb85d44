"""Blind by design: nothing an annotator receives, page or API, before or after labelling,
carries the source's gold label or risk description, metadata, anyone else's label or draft,
or a judge's verdict; nor does any other page or endpoint of the studio they may call."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from annotation.models import Lease
from annotation.services.labels import Label, annotation_submit
from annotation.services.queue import lease_next_record
from judging.models import JudgeRun, Verdict
from tests.access import RULES
from tests.annotation.annotators import add_annotator
from tests.conftest import Cast
from tests.curation.api_clients import token_client
from tests.factories import RecordFactory, rjudge_record
from tests.test_access import STUDIO_ROUTES, url_values

GOLD_DESCRIPTION = "GOLD-SENTINEL the agent mailed the vault password"
METADATA = "META-SENTINEL failure mode"
OTHER_DESCRIPTION = "OTHER-SENTINEL another annotator's reading"
OTHER_DRAFT = "DRAFT-SENTINEL another annotator's draft"
VERDICT_ANALYSIS = "VERDICT-SENTINEL the judge's analysis"
VERDICT_OUTPUT = "OUTPUT-SENTINEL the judge's raw answer"
SENTINELS = (
    GOLD_DESCRIPTION,
    METADATA,
    OTHER_DESCRIPTION,
    OTHER_DRAFT,
    VERDICT_ANALYSIS,
    VERDICT_OUTPUT,
)
# On the annotation pages and API, words that would reveal a label: the sentinels, and the
# source's label field.
SECRETS = (*SENTINELS, '"label"', "gold")


@pytest.fixture
def record(cast: Cast):
    """A record whose gold risk description and metadata are sentinels, with another
    annotator's label (and a third annotator's draft) and a judge's verdict on it already."""
    cast.project.overlap = 3
    cast.project.save()
    record = RecordFactory(
        project=cast.project,
        source=rjudge_record(77, risk_description=GOLD_DESCRIPTION),
        metadata={"failure_mode": METADATA},
    )
    ann, bob = add_annotator(cast.project, "ann"), add_annotator(cast.project, "bob")
    annotation_submit(
        lease=lease_next_record(project=cast.project, annotator=ann),
        actor=ann,
        label=Label(
            "unsafe",
            risk_types=(cast.project.risk_types.get(slug="privacy-leakage"),),
            risk_description=OTHER_DESCRIPTION,
        ),
    )
    lease = lease_next_record(project=cast.project, annotator=bob)
    Lease.objects.filter(pk=lease.pk).update(draft={"risk_description": OTHER_DRAFT})
    run = JudgeRun.objects.create(
        project=cast.project,
        name="Judge",
        judge_snapshot={"protocol": "rjudge"},
        state=JudgeRun.State.SUCCEEDED,
        total=1,
    )
    Verdict.objects.create(
        run=run,
        record=record,
        label="unsafe",
        analysis=VERDICT_ANALYSIS,
        raw_output=VERDICT_OUTPUT,
        parse_status=Verdict.Parse.VALID,
    )
    return record


def assert_blind(responses: dict[str, object], secrets: tuple[str, ...] = SECRETS) -> None:
    for name, response in responses.items():
        body = (
            b"".join(response.streaming_content) if response.streaming else response.content
        ).decode(errors="replace")
        leaked = [secret for secret in secrets if secret in body]
        assert not leaked, f"{name} leaks {leaked}"


def test_the_annotators_pages_never_show_the_gold_label_or_others_labels(
    cast: Cast, record
) -> None:
    client = cast.client_for("annotator")
    slug = cast.project.slug
    responses = {"start": client.get(reverse("annotation:annotate", args=[slug]))}
    client.post(reverse("annotation:annotate_next", args=[slug]))
    lease = Lease.objects.get(annotator=cast.annotator)
    responses["labelling page"] = client.get(reverse("annotation:annotate", args=[slug]))
    responses["draft"] = client.post(
        reverse("annotation:annotate_draft", args=[slug, lease.pk]), {"verdict": "safe"}
    )
    responses["invalid submit"] = client.post(
        reverse("annotation:annotate_submit", args=[slug, lease.pk]), {"verdict": "unsafe"}
    )
    responses["submit"] = client.post(
        reverse("annotation:annotate_submit", args=[slug, lease.pk]),
        {"verdict": "unsafe", "risk_description": "Mine."},
        headers={"HX-Request": "true"},
    )
    annotation = cast.annotator.annotations.get()
    responses["my work"] = client.get(reverse("annotation:my_work", args=[slug]))
    responses["edit"] = client.get(
        reverse("annotation:annotation_edit", args=[slug, annotation.pk])
    )
    responses["guidelines"] = client.get(reverse("annotation:guidelines", args=[slug]))

    assert "Please tidy up my inbox." in responses["labelling page"].content.decode()
    assert {r.status_code for r in responses.values()} == {200}
    assert_blind(responses)


def test_the_annotation_api_never_returns_the_gold_label_or_others_labels(
    cast: Cast, record
) -> None:
    client = token_client(cast.annotator)
    base = f"/api/projects/{cast.project.slug}/annotation"

    claim = client.post(f"{base}/claim/")
    lease_id = claim.json()["id"]
    responses = {
        "claim": claim,
        "lease": client.get(f"{base}/lease/"),
        "invalid submit": client.post(
            f"{base}/leases/{lease_id}/submit/",
            {"verdict": "unsafe"},
            content_type="application/json",
        ),
        "submit": client.post(
            f"{base}/leases/{lease_id}/submit/",
            {"verdict": "unsafe", "risk_description": "Mine."},
            content_type="application/json",
        ),
        "mine": client.get(f"{base}/mine/"),
    }
    annotation_id = responses["mine"].json()["results"][0]["id"]
    responses["my label"] = client.get(f"{base}/mine/{annotation_id}/")

    assert claim.json()["record"]["turns"][0]["content"] == "Please tidy up my inbox."
    assert [r.status_code for r in responses.values()] == [200, 200, 400, 201, 200, 200]
    assert_blind(responses)
    assert set(json.loads(claim.content)["record"]) == {
        "id",
        "external_id",
        "category",
        "scenario",
        "profile",
        "goal",
        "turns",
    }


@pytest.fixture
def media_root(settings, tmp_path) -> None:
    # url_values() attaches a reference file: keep it out of the development media folder.
    settings.MEDIA_ROOT = tmp_path / "media"


def test_no_page_or_endpoint_the_annotator_may_call_reveals_what_others_said(
    cast: Cast, record, media_root
) -> None:
    """Judges' runs, disagreements, records, releases, exports: every route an annotator can
    call, with the record above named wherever a route takes a record. (The API's schema names
    the gold label field, so only the sentinels are looked for here.)"""
    client = cast.client_for("annotator")
    values = url_values(cast) | {"record_id": record.pk}
    responses = {}
    for route in STUDIO_ROUTES:
        if RULES[route.name].method != "get":
            continue
        url = reverse(route.name, kwargs={p: values[p] for p in route.params})
        responses[url] = client.get(url)

    assert responses[f"/p/{cast.project.slug}/annotate/"].status_code == 200
    assert_blind(responses, SENTINELS)
