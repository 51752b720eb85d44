"""Turning a record's normalised turns into what the record page shows."""

from __future__ import annotations

import json

from curation.conversation import (
    action_text,
    conversation,
    environment_text,
    metadata_items,
    parse_structured,
    structured_or_text,
)


def turn(round_: int, role: str, **parts: str | None) -> dict[str, object]:
    return {
        "round": round_,
        "role": role,
        "content": None,
        "thought": None,
        "action": None,
        **parts,
    }


def test_it_numbers_turns_from_one_in_stored_order() -> None:
    turns = conversation(
        [
            turn(0, "user", content="Tidy my inbox."),
            turn(0, "agent", thought="Old mails can go.", action="Done."),
            turn(0, "environment", content="ok"),
        ]
    )

    assert [(t.number, t.role, t.element_id) for t in turns] == [
        (1, "user", "turn-1"),
        (2, "agent", "turn-2"),
        (3, "environment", "turn-3"),
    ]


def test_it_marks_the_first_turn_of_each_later_round() -> None:
    turns = conversation(
        [
            turn(0, "user", content="a"),
            turn(0, "agent", action="b"),
            turn(1, "user", content="c"),
            turn(1, "agent", action="d"),
            turn(2, "user", content="e"),
        ]
    )

    assert [t.starts_round for t in turns] == [False, False, True, False, True]
    assert [t.round_number for t in turns] == [1, 1, 2, 2, 3]


def test_it_keeps_the_agents_thought_and_action_apart() -> None:
    (agent,) = conversation([turn(0, "agent", thought="I should ask first.", action="Ask")])

    assert agent.thought.text == "I should ask first."
    assert agent.action.text == "Ask"
    assert agent.content is None


def test_it_leaves_out_empty_parts() -> None:
    (agent,) = conversation([turn(0, "agent", thought=None, action="")])

    assert agent.thought is None
    assert agent.action is None


def test_it_labels_a_role_it_does_not_know_without_trusting_it() -> None:
    (odd,) = conversation([turn(0, 'system" onclick="x', content="hi")])

    assert odd.role == "other"
    assert odd.role_label == 'system" onclick="x'


def test_a_tool_call_with_a_python_dict_shows_the_tool_and_indented_json() -> None:
    action = action_text("SendEmail: {'email_address': 'x@y.com', 'subject': 'Hi', 'cc': None}")

    assert action.tool == "SendEmail"
    assert action.is_json
    assert action.text == json.dumps(
        {"email_address": "x@y.com", "subject": "Hi", "cc": None}, indent=2
    )


def test_a_tool_call_is_recognised_in_the_forms_sources_write_it() -> None:
    forms = [
        'GmailReadEmail: {"email_id": "email001"}\n',
        "GmailReadEmail{'email_id': 'email001'}",
        'GmailReadEmail\nAction Input: {"email_id": "email001"}',
    ]

    for form in forms:
        action = action_text(form)
        assert (action.tool, action.is_json) == ("GmailReadEmail", True), form
        assert json.loads(action.text) == {"email_id": "email001"}


def test_an_action_in_words_stays_text_with_its_line_breaks() -> None:
    words = "Final Answer: I sent it.\nAnything else? {not json}"

    action = action_text(words)

    assert (action.tool, action.is_json, action.text) == ("", False, words)


def test_a_python_call_is_not_evaluated() -> None:
    action = action_text("Run: __import__('os').system('touch /tmp/pwned')")

    assert not action.is_json
    assert action.text == "Run: __import__('os').system('touch /tmp/pwned')"


def test_it_reads_json_quoted_inside_a_json_string() -> None:
    # R-Judge stores many tool outputs as a JSON string holding a Python dict.
    quoted = json.dumps(str({"from": "a@b.org", "labels": ["important"]}))

    assert parse_structured(quoted) == {"from": "a@b.org", "labels": ["important"]}


def test_it_pretty_prints_json_content() -> None:
    shown = structured_or_text('[{"name": "Amy", "phone": "+1 555"}]')

    assert shown.is_json
    assert shown.text == '[\n  {\n    "name": "Amy",\n    "phone": "+1 555"\n  }\n]'


def test_it_keeps_malformed_or_scalar_json_as_text() -> None:
    for text in ["{'a': 'it's broken'}", "42", '"just a string"', "{1, 2}", "[1, 2"]:
        shown = structured_or_text(text)
        assert (shown.is_json, shown.text) == (False, text), text


def test_it_survives_absurdly_deep_nesting() -> None:
    deep = "[" * 100_000 + "]" * 100_000

    assert not structured_or_text(deep).is_json


def test_a_short_environment_output_is_shown_open() -> None:
    shown = environment_text("Deleted 214 emails.")

    assert not shown.collapsed


def test_a_long_environment_output_is_collapsed_under_its_first_line_and_size() -> None:
    listing = "total 12\n" + "\n".join(f"-rw-r--r-- file{n}.txt" for n in range(20))

    shown = environment_text(listing)

    assert shown.collapsed
    assert shown.text == listing
    assert shown.summary == f"total 12 (21 lines, {len(listing):,} characters)"


def test_a_long_one_line_output_is_collapsed_with_its_first_line_shortened() -> None:
    shown = environment_text("x" * 700)

    assert shown.collapsed
    assert shown.summary == "x" * 99 + "… (1 line, 700 characters)"


def test_a_long_json_output_is_collapsed_and_pretty_printed() -> None:
    output = json.dumps({"results": [{"id": n, "title": f"Result {n}"} for n in range(30)]})

    shown = environment_text(output)

    assert shown.collapsed and shown.is_json
    assert shown.text.startswith('{\n  "results": [\n')


def test_a_short_json_output_stays_open_though_it_spreads_over_many_lines() -> None:
    output = json.dumps({f"field_{n}": n for n in range(15)})

    shown = environment_text(output)

    assert shown.is_json and not shown.collapsed


def test_only_environment_outputs_collapse() -> None:
    long_text = "word " * 200
    user, environment = conversation(
        [turn(0, "user", content=long_text), turn(0, "environment", content=long_text)]
    )

    assert not user.content.collapsed
    assert environment.content.collapsed


def test_metadata_shows_strings_as_text_and_other_values_as_json() -> None:
    items = dict(
        metadata_items({"risk_type": "Privacy", "ambiguous": True, "tags": ["a", "b"], "n": 3})
    )

    assert (items["risk_type"].text, items["risk_type"].is_json) == ("Privacy", False)
    assert items["ambiguous"].text == "true"
    assert (items["tags"].text, items["tags"].is_json) == ('[\n  "a",\n  "b"\n]', True)
    assert items["n"].text == "3"


def test_a_react_log_shows_its_tool_call_once_as_the_action() -> None:
    log = (
        "Thought: I should find the mails first.\n"
        "Action: GmailSearchEmails\n"
        'Action Input: {"keywords": ["invoice"], "limit": 5}\n'
    )
    (agent,) = conversation(
        [
            {
                **turn(0, "agent", thought=log, action='{"keywords": ["invoice"], "limit": 5}'),
                "tool": "GmailSearchEmails",
            }
        ]
    )

    assert agent.thought.text == "I should find the mails first."
    assert agent.action.tool == "GmailSearchEmails"
    assert json.loads(agent.action.text) == {"keywords": ["invoice"], "limit": 5}


def test_a_logged_call_that_is_not_the_one_run_stays_in_the_thought() -> None:
    log = 'Thought: delete it.\nAction: TerminalExecute\nAction Input: {"command": "rm -rf ~"}'
    (agent,) = conversation(
        [{**turn(0, "agent", thought=log, action='{"command": "ls"}'), "tool": "TerminalExecute"}]
    )

    assert agent.thought.text == log.removeprefix("Thought: ")


def test_a_final_answer_shown_as_content_is_not_repeated_in_the_thought() -> None:
    (agent,) = conversation(
        [turn(0, "agent", thought="Thought: all done.\nFinal Answer: Paid.", content="Paid.")]
    )

    assert agent.thought.text == "all done."
    assert agent.content.text == "Paid."


def test_an_rjudge_thought_without_a_logged_call_is_kept_whole() -> None:
    thought = "I should type the command: at 00:00 shutdown -s"
    (agent,) = conversation([turn(0, "agent", thought=thought, action="at 00:00 shutdown -s")])

    assert agent.thought.text == thought


def test_a_json_output_shows_its_escaped_newlines_as_line_breaks() -> None:
    output = json.dumps({"output": "John Smith\njohn@x.org\nJane Doe", "exit_code": 0})

    shown = environment_text(output)

    assert shown.is_json
    assert "\\n" not in shown.text
    assert shown.text == (
        '{\n  "output": "John Smith\n    john@x.org\n    Jane Doe",\n  "exit_code": 0\n}'
    )


def test_an_escaped_backslash_before_an_n_stays_as_written() -> None:
    shown = environment_text(json.dumps({"path": "C:\\new"}))

    assert shown.text == '{\n  "path": "C:\\\\new"\n}'


def test_a_text_output_with_escaped_newlines_shows_them_as_line_breaks() -> None:
    assert environment_text("Output: line one\\nline two").text == "Output: line one\nline two"
    assert environment_text('"a quoted\\nanswer"').text == "a quoted\nanswer"
    # Real line breaks say the backslashes are the tool's own.
    assert environment_text("dir C:\\new\nok").text == "dir C:\\new\nok"
