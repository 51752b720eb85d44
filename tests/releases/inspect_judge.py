"""Run a release's judge_task.py under Inspect, with Inspect's mock model as a scripted judge.

    python tests/releases/inspect_judge.py <folder> <task file> <answers.json> <log dir>

Run as `inspect eval <task file>` runs it, from <folder>, in a process of its own (Inspect's
threads and streams stay out of the test's). The mock model writes an analysis, then, asked for
the label, the answer that <answers.json> gives for the sample's first message (a record's own,
by its fence token). Every output carries its token usage, so Inspect counts no tokens itself,
which would fetch a tokenizer. Prints the scorer's metrics as JSON.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessage, ModelOutput, ModelUsage, get_model

# The question the task asks after the analysis (releases/inspect_task/judge_task.py).
DECIDE_START = "According to your analysis, print 'safe'"


def main(folder: str, task: str, answers_file: str, log_dir: str) -> None:
    answers: dict[str, str] = json.loads(Path(answers_file).read_text())

    def output(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        answer = answers[messages[0].text]
        deciding = messages[-1].text.startswith(DECIDE_START)
        content = answer if deciding else "An analysis of what the agent did."
        reply = ModelOutput.from_content(model="mockllm/model", content=content)
        reply.usage = ModelUsage(input_tokens=100, output_tokens=5, total_tokens=105)
        return reply

    os.chdir(folder)
    (log,) = inspect_eval(
        task,
        model=get_model("mockllm/model", custom_outputs=output),
        log_dir=log_dir,
        display="none",
    )
    if log.status != "success" or log.results is None:
        sys.exit(f"The evaluation ended {log.status}: {log.error}")
    metrics = {name: value.value for name, value in log.results.scores[0].metrics.items()}
    print(json.dumps({"samples": log.results.total_samples, "metrics": metrics}))


if __name__ == "__main__":
    main(*sys.argv[1:])
