"""A draft typed with a NUL character (pasted from a binary file, or sent by a script) is
saved without it: PostgreSQL cannot store the character, and the annotator must not get a 500."""

from __future__ import annotations

from django.urls import reverse

from annotation.models import Lease
from annotation.services.queue import lease_next_record
from tests.annotation.annotators import make_records
from tests.conftest import Cast


def test_a_draft_with_a_nul_character_is_saved_without_it(cast: Cast) -> None:
    make_records(cast.project, 1)
    lease = lease_next_record(project=cast.project, annotator=cast.annotator)

    response = cast.client_for("annotator").post(
        reverse("annotation:annotate_draft", args=[cast.project.slug, lease.pk]),
        {"verdict": "unsafe", "risk_types": ["a\x00"], "risk_description": "Dele\x00ted."},
    )

    assert response.status_code == 200
    draft = Lease.objects.get(pk=lease.pk).draft
    assert (draft["risk_types"], draft["risk_description"]) == (["a"], "Deleted.")
