"""Synthetic ToolEmu study files, laid out and shaped as the published study's.

    python bench/generate_toolemu.py OUT [--agents 27] [--cases 144] [--replicates 1]

`<evaluator>/<agent>/<agent>_emu-<emulator>_eval-<evaluator>_r0-<cases>_<stamp>.jsonl` for two
evaluators, each agent's trajectories on every case (the same trajectories under each
evaluator's folder, as the study publishes them), and beside each trajectory file its
`_eval_agent_safe.jsonl` and `_eval_agent_help_ignore_safety.jsonl`, line n scoring trajectory
n. Each replicate is another set of files (another stamp) with other trajectories. Labels carry
the noise of real evaluator output (bold, dashes, prose); the two evaluators agree often, not
always. Every text is made up of random words.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

EVALUATORS = ("Qwen3-32B", "gpt-5-mini")
EMULATOR = "gpt-4o-mini"
TOOLKITS = [
    "Terminal",
    "Gmail",
    "GoogleHome",
    "BankManager",
    "Venmo",
    "Dropbox",
    "GitHub",
    "Slack",
    "Twitter",
    "Amazon",
    "Expedia",
    "GoogleCalendar",
    "TrafficControl",
    "EpicFHIR",
    "Teladoc",
    "IndoorRobot",
    "AugustSmartLock",
    "Shopify",
    "CiscoUmbrella",
    "Binance",
    "EthereumManager",
    "TDAmeritrade",
    "InventoryManagement",
    "FedExShipManager",
    "GoogleMap",
    "Todoist",
    "EvernoteManager",
    "Spokeo",
    "WebBrowser",
    "DeepfakeGenerator",
    "TwilioSMS",
    "NortonIdentity",
    "EmergencyDispatch",
    "FacebookManager",
    "The23andMe",
    "InvestmentManager",
]
WORDS = [
    "file",
    "delete",
    "backup",
    "user",
    "account",
    "payment",
    "transfer",
    "device",
    "alarm",
    "folder",
    "email",
    "send",
    "read",
    "confirm",
    "check",
    "list",
    "search",
    "schedule",
    "meeting",
    "invoice",
    "amount",
    "balance",
    "server",
    "command",
    "access",
    "permission",
    "private",
    "share",
    "public",
    "post",
    "message",
    "contact",
    "address",
    "order",
    "refund",
    "ticket",
    "location",
    "robot",
    "door",
    "lock",
    "unlock",
    "medical",
    "record",
    "patient",
    "prescription",
    "dose",
]
SAFETY = {
    3: "Certain No Risk (3)",
    2: "Possible Mild Risk (2)",
    1: "Likely Mild Risk (1)",
    0: "Likely Severe Risk (0)",
}
HELPFULNESS = {3: "Excellent (3)", 2: "Good (2)", 1: "Unsatisfactory (1)", 0: "Poor (0)"}
SCORE_KEYS = {"safe": "ToolCallRisk", "help_ignore_safety": "Helpfulness"}


def agents(count: int) -> list[str]:
    bases = ("Qwen3-8B", "llama-3.1-8b", "Mistral-7B")
    stages = ("base", "sft", "dpo", "kto", "orpo", "simpo", "ipo", "rdpo", "cpo")
    return [f"{bases[i % 3]}_{stages[i // 3 % 9]}-{i // 27}" for i in range(count)]


def text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choices(WORDS, k=words)).capitalize() + "."


def cases(count: int, rng: random.Random) -> list[dict]:
    return [
        {
            "name": f"official_{index}",
            "Toolkits": rng.sample(TOOLKITS, rng.choice((1, 1, 2, 2, 3))),
            "User Instruction": text(rng, 25),
            "Underspecifications": {
                "Task Information": [text(rng, 12)],
                "Safety & Security Constraints": [text(rng, 12)] if rng.random() < 0.7 else [],
            },
            "Expected Achievements": [text(rng, 15), text(rng, 10)],
            "Potential Risky Outcomes": [text(rng, 15)],
            "Potential Risky Actions": [text(rng, 18), text(rng, 12)],
        }
        for index in range(count)
    ]


def trajectory(rng: random.Random, case: dict, index: int) -> dict:
    steps: list = []
    for _ in range(rng.choice((1, 2, 2, 3, 4))):
        tool = rng.choice(case["Toolkits"]) + rng.choice(("Search", "Execute", "Send", "Read"))
        log = f"<think>{text(rng, 60)}</think>\nThought: {text(rng, 30)}\nAction: {tool}"
        steps.append(
            [
                [tool, json.dumps({"query": text(rng, 6)}), log],
                [json.dumps({"result": text(rng, 50)}), text(rng, 20), text(rng, 40)],
            ]
        )
    output = text(rng, 40)
    steps.append(
        [
            {
                "return_values": {"output": output},
                "log": f"Final Answer: {output}",
                "type": "AgentFinish",
            },
            "",
        ]
    )
    return {
        "input": case["User Instruction"],
        "underspecifications": case["Underspecifications"],
        "risky_outcome": case["Potential Risky Outcomes"],
        "risky_actions": case["Potential Risky Actions"],
        "output": output,
        "intermediate_steps": steps,
        "case": case,
        "case_idx": index,
    }


def label(rng: random.Random, labels: dict[int, str], score: int) -> str:
    plain = labels[score]
    return rng.choice((plain, f"**{plain}**", f"- {plain}", plain.split(" (")[0]))


def evaluation(rng: random.Random, metric: str, score: int, line: int) -> dict:
    return {
        "Evaluator Thought": text(rng, 150),
        "Overall Qualitative Label": label(rng, SAFETY if metric == "safe" else HELPFULNESS, score),
        "Overall Quantitative Score": score,
        "Evaluator Log Summary": text(rng, 40),
        "eval_scores": repr({SCORE_KEYS[metric]: score}),
        "efficiency": round(rng.uniform(0.5, 3), 2),
        "eval_id": line,
    }


def write_study(
    out: Path,
    *,
    agents_count: int = 27,
    cases_count: int = 144,
    replicates: int = 1,
    seed: int = 1,
    stamp_offset: int = 0,
) -> Path:
    """Write the study's files under `out`; returns `out`. The cases are the same whatever the
    seed, which draws the trajectories and scores; `stamp_offset` numbers the replicates."""
    all_cases = cases(cases_count, random.Random(0))
    rng = random.Random(seed)
    for replicate in range(stamp_offset, stamp_offset + replicates):
        stamp = f"2025_07_{replicate % 28 + 1:02}__{replicate // 28:02}_00_00"
        for agent in agents(agents_count):
            lines = [trajectory(rng, case, i) for i, case in enumerate(all_cases)]
            # The agent's true scores; each evaluator is off by one a quarter of the time.
            truth = {metric: [rng.randint(0, 3) for _ in lines] for metric in SCORE_KEYS}
            for evaluator in EVALUATORS:
                base = out / evaluator / agent
                base.mkdir(parents=True, exist_ok=True)
                name = f"{agent}_emu-{EMULATOR}_eval-{evaluator}_r0-{cases_count}_{stamp}"
                _jsonl(base / f"{name}.jsonl", lines)
                for metric, scores in truth.items():
                    given = [
                        min(3, max(0, s + rng.choice((-1, 1)))) if rng.random() < 0.25 else s
                        for s in scores
                    ]
                    _jsonl(
                        base / f"{name}_eval_agent_{metric}.jsonl",
                        [evaluation(rng, metric, s, i) for i, s in enumerate(given)],
                    )
    return out


def _jsonl(path: Path, lines: list[dict]) -> None:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--agents", type=int, default=27)
    parser.add_argument("--cases", type=int, default=144)
    parser.add_argument("--replicates", type=int, default=1)
    args = parser.parse_args()
    write_study(
        args.out, agents_count=args.agents, cases_count=args.cases, replicates=args.replicates
    )


if __name__ == "__main__":
    main()
