"""The route table for the role-by-route access test, and how to walk the URLconf.

Every named route must have a rule here; the access test fails for any route that has none,
so a new page or endpoint cannot slip past without saying who may use it.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass, field

from django.urls import URLPattern, URLResolver, get_resolver

EVERYONE = frozenset(
    {"anonymous", "outsider", "annotator", "author", "reviewer", "manager", "superuser"}
)
LOGGED_IN = EVERYONE - {"anonymous"}
MEMBERS = frozenset({"annotator", "author", "reviewer", "manager", "superuser"})
RECORD_READERS = frozenset({"reviewer", "manager", "superuser"})
MANAGERS = frozenset({"manager", "superuser"})
SUPERUSERS = frozenset({"superuser"})
# Benchmark tasks: the task of url_values() is the author's, submitted for review. Its author
# edits and submits it, reviewers and managers review it (never its author), both may read it.
TASK_READERS = frozenset({"author", "reviewer", "manager", "superuser"})
TASK_WRITERS = frozenset({"author", "manager", "superuser"})
TASK_REVIEWERS = frozenset({"reviewer", "manager", "superuser"})
ITS_AUTHOR = frozenset({"author"})
# The annotation queue takes the annotator role itself: site administrators see every label and
# gold label, so they label only when given the role (which the cast's superuser is not).
ANNOTATORS = frozenset({"annotator"})


@dataclass(frozen=True)
class Rule:
    allowed: frozenset[str]
    # "html": anonymous users are sent to the login page; "api": they get 401 or 403.
    kind: str = "html"
    method: str = "get"
    # Project routes hide the project from outsiders (404) rather than refusing them (403).
    in_project: bool = True
    data: dict[str, object] = field(default_factory=dict)


class RewindingFile(io.BytesIO):
    """An upload the test client can send once per persona: every read starts from the top."""

    name = "upload.jsonl"

    def read(self, size: int | None = -1) -> bytes:
        self.seek(0)
        return super().read(size)


# Route name -> who may use it. Keep in step with the URLconf (the test checks).
RULES: dict[str, Rule] = {
    "home": Rule(LOGGED_IN, in_project=False),
    "healthz": Rule(EVERYONE, in_project=False),
    "login": Rule(EVERYONE, in_project=False),
    "logout": Rule(LOGGED_IN, method="post", in_project=False),
    "account": Rule(LOGGED_IN, in_project=False),
    "password_change": Rule(LOGGED_IN, in_project=False),
    # Posted without a token, it comes back to the account page saying so; another user's token
    # is tested in tests/curation/test_api_tokens.py.
    "api_token_revoke": Rule(LOGGED_IN, method="post", in_project=False),
    "api-schema": Rule(LOGGED_IN, kind="api", in_project=False),
    "api-docs": Rule(LOGGED_IN, in_project=False),
    "api:project_list": Rule(LOGGED_IN, kind="api", in_project=False),
    "api:project_detail": Rule(MEMBERS, kind="api"),
    "api:record_detail": Rule(RECORD_READERS, kind="api"),
    # GET here; who may upload (POST) is tested in tests/curation/test_api_imports.py.
    "api:import_list": Rule(MANAGERS, kind="api"),
    "api:import_detail": Rule(MANAGERS, kind="api"),
    "api:import_changes": Rule(MANAGERS, kind="api", method="post", data={"take": False}),
    # Managers whom a site administrator allowed create projects too; the cast's manager is not
    # one (tests/curation/test_users_page.py).
    "curation:project_new": Rule(SUPERUSERS, in_project=False),
    "curation:user_list": Rule(SUPERUSERS, in_project=False),
    "curation:user_detail": Rule(SUPERUSERS, in_project=False),
    "curation:user_unlock": Rule(SUPERUSERS, method="post", in_project=False),
    # Posted without a token, it comes back to the user page saying so.
    "curation:user_token_revoke": Rule(SUPERUSERS, method="post", in_project=False),
    "curation:project": Rule(MEMBERS),
    "curation:project_settings": Rule(MANAGERS),
    # Asked first (GET); posted, the project's name must be typed to confirm.
    "curation:project_delete": Rule(MANAGERS),
    "curation:members": Rule(MANAGERS),
    # Asked first (GET), done on the confirmation (POST).
    "curation:member_remove": Rule(MANAGERS, method="post"),
    # Posted empty, the invitation form comes back with its errors.
    "curation:member_invite": Rule(MANAGERS, method="post"),
    "curation:invitation_withdraw": Rule(MANAGERS, method="post"),
    # The link of a pending invitation: whoever holds it chooses the password (GET shows the
    # form); used, withdrawn and forged links in tests/curation/test_invitations.py.
    "invitation_accept": Rule(EVERYONE, in_project=False),
    "hub:project_status": Rule(RECORD_READERS),
    "hub:record_list": Rule(RECORD_READERS),
    # Annotators who labelled the record are sent to their own label; this one they did not.
    "hub:record_detail": Rule(RECORD_READERS),
    # Posted without records, it comes back to the list saying so.
    "hub:record_bulk": Rule(MANAGERS, method="post"),
    "hub:record_export": Rule(RECORD_READERS),
    "curation:import_list": Rule(MANAGERS),
    "curation:import_detail": Rule(MANAGERS),
    # Asked first (GET), done on the confirmation (POST).
    "curation:import_undo": Rule(MANAGERS),
    "curation:import_changes": Rule(MANAGERS, method="post", data={"decision": "keep"}),
    "curation:export_rjudge": Rule(MANAGERS),
    "annotation:annotate": Rule(ANNOTATORS),
    "annotation:annotate_next": Rule(ANNOTATORS, method="post"),
    # The lease of url_values() is the annotator's: anyone else's is not found.
    "annotation:annotate_lease": Rule(ANNOTATORS),
    # Posted empty, a label or a skip is re-shown with its errors; a draft is saved empty.
    "annotation:annotate_draft": Rule(ANNOTATORS, method="post"),
    "annotation:annotate_submit": Rule(ANNOTATORS, method="post"),
    "annotation:annotate_skip": Rule(ANNOTATORS, method="post"),
    "annotation:my_work": Rule(ANNOTATORS),
    "annotation:annotation_edit": Rule(ANNOTATORS),
    "annotation:guidelines": Rule(MEMBERS),
    "annotation:annotation_settings": Rule(MANAGERS),
    "annotation:guidelines_new": Rule(MANAGERS, method="post"),
    "annotation:annotation_progress": Rule(MANAGERS),
    "annotation_api:annotation_claim": Rule(ANNOTATORS, kind="api", method="post"),
    "annotation_api:annotation_lease": Rule(ANNOTATORS, kind="api"),
    "annotation_api:annotation_submit": Rule(
        ANNOTATORS, kind="api", method="post", data={"verdict": "safe"}
    ),
    "annotation_api:annotation_skip": Rule(
        ANNOTATORS, kind="api", method="post", data={"reason": "unclear"}
    ),
    "annotation_api:annotation_list": Rule(ANNOTATORS, kind="api"),
    "annotation_api:annotation_detail": Rule(ANNOTATORS, kind="api"),
    # Where judges' calls go, and with which key variable: site administrators only.
    "judging:connection_list": Rule(SUPERUSERS, in_project=False),
    "judging:judge_list": Rule(MANAGERS),
    "judging:judge_new": Rule(MANAGERS),
    "judging:judge_edit": Rule(MANAGERS),
    # A worker tests the connection; the page polls the test's result.
    "judging:judge_test": Rule(MANAGERS, method="post"),
    "judging:judge_test_detail": Rule(MANAGERS),
    "judging:template_list": Rule(MANAGERS),
    # A judge's versions and evaluations: reviewers read them, managers make and choose them.
    # Posted empty, a new version's form comes back with its errors; version 1 of url_values()
    # cannot be evaluated against itself, which the page says.
    "alignment:judge_versions": Rule(RECORD_READERS),
    "alignment:judge_version_new": Rule(MANAGERS, method="post"),
    "alignment:judge_version_use": Rule(MANAGERS, method="post"),
    "alignment:judge_version_evaluate": Rule(MANAGERS, method="post"),
    "alignment:judge_evaluation": Rule(RECORD_READERS),
    # Posted empty, the panel's form comes back with its errors.
    "judging:panel_new": Rule(MANAGERS),
    "judging:run_list": Rule(RECORD_READERS),
    "judging:run_new": Rule(MANAGERS),
    "judging:run_detail": Rule(RECORD_READERS),
    "judging:run_cancel": Rule(MANAGERS, method="post"),
    "judging:run_resume": Rule(MANAGERS, method="post"),
    "judging:run_retry_errors": Rule(MANAGERS, method="post"),
    "judging:verdict_import": Rule(MANAGERS),
    "judging_api:judge_list": Rule(MANAGERS, kind="api"),
    "judging_api:judge_detail": Rule(MANAGERS, kind="api"),
    "judging_api:judge_test": Rule(MANAGERS, kind="api", method="post"),
    "judging_api:judge_test_detail": Rule(MANAGERS, kind="api"),
    # Connections' names and models only: their addresses and key variables are for site
    # administrators, in the admin.
    "judging_api:connection_list": Rule(MANAGERS, kind="api"),
    # The record list with everyone's labels and the verdicts: the same readers as the page.
    "hub_api:record_list": Rule(RECORD_READERS, kind="api"),
    "hub_api:record_export": Rule(RECORD_READERS, kind="api"),
    # Every record that its filters match (those of url_values() have a gold label).
    "hub_api:record_bulk": Rule(
        MANAGERS,
        kind="api",
        method="post",
        data={"action": "adjudicate", "all_matching": "true"},
    ),
    # GET here; who may make a version or start an evaluation (POST) is tested in
    # tests/judging/test_judge_versions_api.py.
    "alignment_api:judge_versions": Rule(RECORD_READERS, kind="api"),
    "alignment_api:judge_version": Rule(RECORD_READERS, kind="api"),
    "alignment_api:judge_evaluations": Rule(RECORD_READERS, kind="api"),
    "alignment_api:judge_evaluation": Rule(RECORD_READERS, kind="api"),
    "judging_api:run_list": Rule(RECORD_READERS, kind="api"),
    "judging_api:run_detail": Rule(RECORD_READERS, kind="api"),
    "judging_api:run_cancel": Rule(MANAGERS, kind="api", method="post"),
    "judging_api:run_resume": Rule(MANAGERS, kind="api", method="post"),
    "judging_api:run_retry_errors": Rule(MANAGERS, kind="api", method="post"),
    "judging_api:run_verdicts": Rule(RECORD_READERS, kind="api"),
    # GET here; who may make a panel (POST) is tested in tests/judging/test_panels.py.
    "judging_api:panel_list": Rule(RECORD_READERS, kind="api"),
    "judging_api:verdict_import": Rule(
        MANAGERS,
        kind="api",
        method="post",
        data={
            "protocol": "safepro",
            "file": RewindingFile(b'{"external_id": "access-check", "verdict": "SAFE"}\n'),
        },
    ),
    # Disagreements, adjudication, judge quality and agreement: reviewers and managers only.
    # Who may settle a record (POST) is tested in tests/judging/test_adjudication_page.py.
    "review:adjudication_queue": Rule(RECORD_READERS),
    "review:adjudication_record": Rule(RECORD_READERS),
    "reports:quality": Rule(RECORD_READERS),
    "reports:agreement": Rule(RECORD_READERS),
    "reports:evaluators": Rule(RECORD_READERS),
    "reports:source_models": Rule(RECORD_READERS),
    "review_api:disagreement_list": Rule(RECORD_READERS, kind="api"),
    "review_api:disagreement_detail": Rule(RECORD_READERS, kind="api"),
    "review_api:adjudication_list": Rule(RECORD_READERS, kind="api"),
    "reports_api:quality": Rule(RECORD_READERS, kind="api"),
    "reports_api:agreement": Rule(RECORD_READERS, kind="api"),
    "reports_api:evaluators": Rule(RECORD_READERS, kind="api"),
    "reports_api:source_models": Rule(RECORD_READERS, kind="api"),
    # Releases: members list the public ones; a private release (the one of url_values()) is
    # for managers; only site administrators delete.
    "releases:release_list": Rule(MEMBERS),
    "releases:release_new": Rule(MANAGERS),
    "releases:release_detail": Rule(MANAGERS),
    "releases:release_changes": Rule(MANAGERS),
    "releases:release_file": Rule(MANAGERS),
    "releases:release_check": Rule(MANAGERS, method="post"),
    "releases:release_visibility": Rule(MANAGERS, method="post", data={"public": "false"}),
    "releases:release_rebuild": Rule(MANAGERS, method="post"),
    "releases:release_delete": Rule(SUPERUSERS, method="post"),
    "releases_api:release_list": Rule(MEMBERS, kind="api"),
    "releases_api:release_preview": Rule(MANAGERS, kind="api", method="post"),
    "releases_api:release_detail": Rule(MANAGERS, kind="api"),
    "releases_api:release_file": Rule(MANAGERS, kind="api"),
    # Benchmark tasks. Moves posted without a version, or that the task's state forbids, come
    # back to the task's page with a message; whoever may never make the move gets 403.
    "authoring:task_list": Rule(TASK_READERS),
    "authoring:task_new": Rule(TASK_WRITERS),
    "authoring:task_detail": Rule(TASK_READERS),
    "authoring:task_edit": Rule(ITS_AUTHOR),
    "authoring:task_submit": Rule(ITS_AUTHOR, method="post"),
    "authoring:task_withdraw": Rule(ITS_AUTHOR | MANAGERS, method="post"),
    "authoring:task_reopen": Rule(ITS_AUTHOR, method="post"),
    "authoring:task_take": Rule(TASK_REVIEWERS, method="post"),
    "authoring:task_release": Rule(TASK_REVIEWERS, method="post"),
    "authoring:task_review": Rule(TASK_REVIEWERS),
    "authoring:task_revision": Rule(TASK_READERS),
    "authoring:task_file_upload": Rule(ITS_AUTHOR, method="post"),
    "authoring:task_file": Rule(TASK_READERS),
    "authoring:task_file_delete": Rule(ITS_AUTHOR, method="post"),
    "authoring:review_queue": Rule(TASK_REVIEWERS),
    "authoring:review_next": Rule(TASK_REVIEWERS, method="post"),
    "authoring:task_stats": Rule(MANAGERS),
    "authoring:task_import": Rule(MANAGERS),
    "authoring:task_import_detail": Rule(MANAGERS),
    "authoring:run_import": Rule(MANAGERS),
    "authoring:export_safepro": Rule(MANAGERS),
    "authoring:export_safepro_zip": Rule(MANAGERS),
    "authoring:task_settings": Rule(MANAGERS),
    "authoring:risk_category_create": Rule(MANAGERS, method="post"),
    "authoring:risk_category_delete": Rule(MANAGERS, method="post"),
    "authoring:rubric_check_create": Rule(MANAGERS, method="post"),
    "authoring:rubric_check_switch": Rule(MANAGERS, method="post"),
    "authoring_api:task_list": Rule(TASK_READERS, kind="api"),
    "authoring_api:task_detail": Rule(TASK_READERS, kind="api"),
    "authoring_api:task_transitions": Rule(TASK_READERS, kind="api"),
    "authoring_api:task_revision_list": Rule(TASK_READERS, kind="api"),
    "authoring_api:task_revision_detail": Rule(TASK_READERS, kind="api"),
    "authoring_api:task_review_list": Rule(TASK_READERS, kind="api"),
    "authoring_api:review_queue": Rule(TASK_REVIEWERS, kind="api"),
}


@dataclass(frozen=True)
class Route:
    name: str
    params: tuple[str, ...]


def walk_urlconf() -> Iterator[Route]:
    """Every named route of the URLconf with the parameters its pattern takes."""

    def walk(patterns: list, namespace: str, params: tuple[str, ...]) -> Iterator[Route]:
        for pattern in patterns:
            own = tuple(pattern.pattern.regex.groupindex)
            if isinstance(pattern, URLResolver):
                inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
                yield from walk(pattern.url_patterns, inner, params + own)
            elif isinstance(pattern, URLPattern) and pattern.name:
                yield Route(f"{namespace}{pattern.name}", params + own)

    seen: set[str] = set()
    for route in walk(get_resolver().url_patterns, "", ()):
        if route.name not in seen:
            seen.add(route.name)
            yield route
