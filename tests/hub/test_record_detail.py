"""The record page: facts about the record and its interaction as a readable conversation."""

from __future__ import annotations

import json
import re

from django.urls import reverse

from tests.conftest import Cast
from tests.factories import RecordFactory, rjudge_record

LONG_LISTING = "total 40\n" + "\n".join(f"-rw-r--r-- 1 amy amy 512 notes{n}.txt" for n in range(30))


def two_round_source(record_id: int = 7) -> dict[str, object]:
    source = rjudge_record(
        record_id,
        action="SendEmail: {'email_address': 'x@y.com', 'subject': 'Report'}",
        environment='{"success": true, "message_id": "m-1"}',
    )
    source["contents"].append(
        [
            {"role": "user", "content": "Now list my files.\nAll of them."},
            {"role": "agent", "thought": "I will list them.", "action": "ListFiles: {}"},
            {"role": "environment", "content": LONG_LISTING},
        ]
    )
    return source


def get_record(cast: Cast, record, persona: str = "reviewer"):
    url = reverse("hub:record_detail", args=[cast.project.slug, record.pk])
    return cast.client_for(persona).get(url)


def turn_html(page: str, number: int) -> str:
    match = re.search(rf'<article [^>]*id="turn-{number}".*?</article>', page, re.DOTALL)
    assert match, f"turn {number} is missing"
    return match.group(0)


def test_it_numbers_the_turns_and_gives_each_an_anchor(cast: Cast) -> None:
    record = RecordFactory(project=cast.project, source=two_round_source())

    page = get_record(cast, record).content.decode()

    for number, role in enumerate(["User", "Agent", "Environment"] * 2, start=1):
        turn = turn_html(page, number)
        assert f'<a class="turn-number" href="#turn-{number}">#{number}</a>' in turn
        assert f'<span class="turn-role">{role}</span>' in turn
    assert 'id="turn-7"' not in page


def test_it_separates_rounds(cast: Cast) -> None:
    record = RecordFactory(project=cast.project, source=two_round_source())

    page = get_record(cast, record).content.decode()

    assert page.count('<hr class="round-break">') == 1
    assert page.index('id="turn-3"') < page.index('<hr class="round-break">')
    assert page.index('<hr class="round-break">') < page.index('id="turn-4"')


def test_it_shows_the_thought_apart_from_the_action(cast: Cast) -> None:
    record = RecordFactory(project=cast.project, source=two_round_source())

    agent = turn_html(get_record(cast, record).content.decode(), 5)

    thought = re.search(r'<div class="turn-part thought">.*?</div>\s*</div>', agent, re.DOTALL)
    action = re.search(r'<div class="turn-part action">.*?</pre>', agent, re.DOTALL)
    assert "I will list them." in thought.group(0)
    assert "ListFiles" not in thought.group(0)
    assert '<code class="tool">ListFiles</code>' in action.group(0)
    assert "I will list them." not in action.group(0)


def test_it_pretty_prints_a_tool_calls_arguments_and_json_output(cast: Cast) -> None:
    record = RecordFactory(project=cast.project, source=two_round_source())

    page = get_record(cast, record).content.decode()

    arguments = json.dumps({"email_address": "x@y.com", "subject": "Report"}, indent=2)
    assert '<code class="tool">SendEmail</code>' in turn_html(page, 2)
    assert f'<pre class="json">{arguments.replace(chr(34), "&quot;")}</pre>' in turn_html(page, 2)
    output = json.dumps({"success": True, "message_id": "m-1"}, indent=2)
    assert f'<pre class="json">{output.replace(chr(34), "&quot;")}</pre>' in turn_html(page, 3)


def test_it_keeps_the_line_breaks_of_plain_text(cast: Cast) -> None:
    record = RecordFactory(project=cast.project, source=two_round_source())

    user = turn_html(get_record(cast, record).content.decode(), 4)

    assert '<div class="prose">Now list my files.\nAll of them.</div>' in user


def test_it_collapses_a_long_environment_output_under_a_summary(cast: Cast) -> None:
    record = RecordFactory(project=cast.project, source=two_round_source())

    page = get_record(cast, record).content.decode()

    long_output = turn_html(page, 6)
    assert "<details>" in long_output and "<details open" not in long_output
    assert f"<summary>total 40 (31 lines, {len(LONG_LISTING):,} characters)</summary>" in (
        long_output
    )
    assert "notes29.txt" in long_output
    assert "<details>" not in turn_html(page, 3)


def test_it_shows_the_facts_about_the_record(cast: Cast) -> None:
    batch = cast.project.import_batches.create(source_name="mail.json", created_by=cast.manager)
    record = RecordFactory(
        project=cast.project,
        source=rjudge_record(42, risk_description="It mailed the password out."),
        batch=batch,
        source_position=3,
        metadata={"failure_mode": "Leaks credentials", "ambiguous": False},
    )

    page = get_record(cast, record).content.decode()

    for fact in [
        "<h1>Record 42</h1>",
        "<dd>Application / mail</dd>",
        "<dd>unintended</dd>",
        '<span class="badge unsafe">Unsafe</span>',
        "It mailed the password out.",
        "You are a mail assistant.",
        "Judge whether the agent&#x27;s actions are safe.",
        "<dt>failure_mode</dt>",
        "Leaks credentials",
        "<dt>ambiguous</dt>",
        '<div class="prose">false</div>',
        "<code>Application/mail.json</code>, position 3",
        "mail.json",
    ]:
        assert fact in page, fact


def test_only_managers_get_a_link_to_the_import(cast: Cast) -> None:
    batch = cast.project.import_batches.create(source_name="mail.json", created_by=cast.manager)
    record = RecordFactory(project=cast.project, batch=batch)
    link = f'href="{reverse("curation:import_detail", args=[cast.project.slug, batch.pk])}"'

    assert link in get_record(cast, record, "manager").content.decode()
    assert link not in get_record(cast, record, "reviewer").content.decode()


def test_it_links_the_previous_and_next_records_of_the_project(cast: Cast) -> None:
    first, middle, last = (RecordFactory(project=cast.project) for _ in range(3))
    RecordFactory()  # another project's record, created last, is never "next"

    def neighbours(record) -> tuple[bool, bool, str]:
        page = get_record(cast, record).content.decode()
        return 'rel="prev"' in page, 'rel="next"' in page, page

    has_prev, has_next, page = neighbours(middle)
    assert (has_prev, has_next) == (True, True)
    assert f'href="/p/{cast.project.slug}/records/{first.pk}/">Previous record' in page
    assert f'href="/p/{cast.project.slug}/records/{last.pk}/">Next record' in page
    assert neighbours(first)[:2] == (False, True)
    assert neighbours(last)[:2] == (True, False)


def test_another_projects_record_is_not_found(cast: Cast) -> None:
    assert get_record(cast, RecordFactory()).status_code == 404


def test_record_content_is_escaped_everywhere(cast: Cast) -> None:
    payload = '<script>alert(1)</script><img src=x onerror=alert(2)><a href="javascript:alert(3)">'
    source = rjudge_record(
        1,
        user=payload,
        thought=payload,
        action=f"SendEmail: {{'body': '{payload}'}}",
        environment=payload,
        risk_description=payload,
    )
    source["profile"] = source["goal"] = payload
    record = RecordFactory(
        project=cast.project, source=source, metadata={"note": payload, payload: [payload]}
    )

    page = get_record(cast, record).content.decode()

    assert "<script>alert" not in page
    assert "<img src=x" not in page
    assert 'href="javascript:' not in page
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 9
