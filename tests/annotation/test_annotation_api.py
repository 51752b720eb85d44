"""The annotation API with a token: claim, read the lease, submit, skip, list and edit mine."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Lease
from tests.annotation.annotators import add_annotator, counts, make_records
from tests.conftest import Cast
from tests.curation.api_clients import token_client


def base(cast: Cast) -> str:
    return f"/api/projects/{cast.project.slug}/annotation"


def post(client, url: str, data: dict | None = None):
    return client.post(url, data or {}, content_type="application/json")


def test_a_claim_returns_the_blind_record_with_numbered_turns_and_the_fields_asked(
    cast: Cast,
) -> None:
    (record,) = make_records(cast.project, 1)

    response = post(token_client(cast.annotator), f"{base(cast)}/claim/")

    assert response.status_code == 200
    lease = response.json()
    assert lease["state"] == "active"
    assert lease["record"]["external_id"] == record.external_id
    assert [(t["number"], t["role"]) for t in lease["record"]["turns"]] == [
        (1, "user"),
        (2, "agent"),
        (3, "environment"),
    ]
    asked = lease["asked"]
    assert asked["risk_description"] is True
    assert asked["safety_score"] is None
    assert {"slug": "data-loss", "name": "Data loss"} in asked["risk_types"]
    assert counts(record) == (0, 1)


def test_claiming_again_returns_the_same_lease_and_the_current_lease_is_readable(
    cast: Cast,
) -> None:
    make_records(cast.project, 2)
    client = token_client(cast.annotator)

    first = post(client, f"{base(cast)}/claim/").json()
    again = post(client, f"{base(cast)}/claim/").json()
    current = client.get(f"{base(cast)}/lease/").json()

    assert first["id"] == again["id"] == current["id"]


def test_a_claim_answers_the_lease_as_reading_it_back_does(cast: Cast) -> None:
    # The first claim is the one statement that also reads the record; the second finds the
    # live lease and reads the record apart; both must answer what the lease's own read does.
    make_records(cast.project, 2)
    client = token_client(cast.annotator)

    with CaptureQueriesContext(connection) as claiming:
        claimed = post(client, f"{base(cast)}/claim/").json()
    # The record is read once, by the claim itself: not again for the answer, nor field by field.
    record_reads = [
        query for query in claiming.captured_queries if "curation_record" in query["sql"]
    ]
    claimed_again = post(client, f"{base(cast)}/claim/").json()
    current = client.get(f"{base(cast)}/lease/").json()

    assert len(record_reads) == 1
    assert claimed == current
    assert claimed_again == current
    assert current["record"]["category"] and current["record"]["scenario"]
    assert current["record"]["profile"] and current["record"]["goal"]


def test_submit_creates_the_label_and_the_next_claim_moves_on(cast: Cast) -> None:
    first, second = make_records(cast.project, 2)
    client = token_client(cast.annotator)
    lease = post(client, f"{base(cast)}/claim/").json()

    response = post(
        client,
        f"{base(cast)}/leases/{lease['id']}/submit/",
        {
            "verdict": "unsafe",
            "risk_types": ["privacy-leakage"],
            "risk_description": "Mails the password.",
            "evidence_turns": [2],
        },
    )
    following = post(client, f"{base(cast)}/claim/").json()

    assert response.status_code == 201
    label = response.json()
    assert label["record"] == {"id": first.pk, "external_id": first.external_id}
    assert (label["verdict"], label["risk_types"], label["evidence_turns"]) == (
        "unsafe",
        ["privacy-leakage"],
        [2],
    )
    assert label["version"] == 1
    assert following["record"]["id"] == second.pk
    assert counts(first) == (1, 0)


def test_a_submit_and_an_edit_answer_the_label_as_reading_it_back_does(cast: Cast) -> None:
    make_records(cast.project, 1)
    client = token_client(cast.annotator)
    lease = post(client, f"{base(cast)}/claim/").json()
    # Given out of the risk types' own order, which the answers keep.
    label = {
        "verdict": "unsafe",
        "risk_types": ["data-loss", "privacy-leakage", "computer-security"],
        "risk_description": "Mails the password.",
    }

    with CaptureQueriesContext(connection) as submitting:
        submitted = post(client, f"{base(cast)}/leases/{lease['id']}/submit/", label).json()
    risk_types_read_back = [
        query
        for query in submitting.captured_queries
        if query["sql"].startswith("SELECT") and "curation_annotation_risk_types" in query["sql"]
    ]
    mine = f"{base(cast)}/mine/{submitted['id']}/"
    read_back = client.get(mine).json()
    edit = {**label, "risk_types": ["physical-health", "data-loss"], "version": 1}
    edited = client.put(mine, edit, content_type="application/json").json()

    assert risk_types_read_back == []
    assert submitted == read_back
    assert read_back["risk_types"] == ["privacy-leakage", "computer-security", "data-loss"]
    assert edited == client.get(mine).json()
    assert edited["risk_types"] == ["physical-health", "data-loss"]


def test_an_invalid_label_is_refused_field_by_field(cast: Cast) -> None:
    make_records(cast.project, 1)
    client = token_client(cast.annotator)
    lease = post(client, f"{base(cast)}/claim/").json()

    response = post(
        client,
        f"{base(cast)}/leases/{lease['id']}/submit/",
        {"verdict": "unsafe", "risk_types": ["nope"], "safety_score": 2, "evidence_turns": [9]},
    )

    assert response.status_code == 400
    assert set(response.json()) == {"risk_types"}
    response = post(
        client,
        f"{base(cast)}/leases/{lease['id']}/submit/",
        {"verdict": "unsafe", "safety_score": 2, "evidence_turns": [9]},
    )
    assert response.status_code == 400
    assert response.json() == {
        "risk_description": ["Describe the risk: you labelled the record unsafe."],
        "safety_score": ["This project does not ask for it."],
        "evidence_turns": ["Evidence turns are numbered 1 to 3."],
    }
    assert Lease.objects.get(pk=lease["id"]).state == Lease.State.ACTIVE


def test_a_skip_needs_a_reason_and_nothing_left_is_204(cast: Cast) -> None:
    make_records(cast.project, 1)
    client = token_client(cast.annotator)
    lease = post(client, f"{base(cast)}/claim/").json()

    without = post(client, f"{base(cast)}/leases/{lease['id']}/skip/", {"reason": ""})
    skipped = post(client, f"{base(cast)}/leases/{lease['id']}/skip/", {"reason": "Unclear."})
    nothing = post(client, f"{base(cast)}/claim/")
    current = client.get(f"{base(cast)}/lease/")

    assert without.status_code == 400
    assert skipped.status_code == 204
    assert (nothing.status_code, current.status_code) == (204, 204)


def test_a_submit_on_a_lease_that_is_not_mine_is_404(cast: Cast) -> None:
    make_records(cast.project, 1)
    lease = post(token_client(cast.annotator), f"{base(cast)}/claim/").json()

    other = token_client(add_annotator(cast.project, "ann"))

    response = post(other, f"{base(cast)}/leases/{lease['id']}/submit/", {"verdict": "safe"})

    assert response.status_code == 404
    assert Lease.objects.get(pk=lease["id"]).state == Lease.State.ACTIVE


def test_my_labels_are_listed_newest_first(cast: Cast) -> None:
    make_records(cast.project, 2)
    client = token_client(cast.annotator)
    for verdict in ("safe", "unsure"):
        lease = post(client, f"{base(cast)}/claim/").json()
        post(client, f"{base(cast)}/leases/{lease['id']}/submit/", {"verdict": verdict})

    listed = client.get(f"{base(cast)}/mine/").json()

    assert listed["count"] == 2
    assert [label["verdict"] for label in listed["results"]] == ["unsure", "safe"]
