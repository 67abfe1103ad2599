"""Mutation results per task and per operator: the JSON record and its readable Markdown table."""

from __future__ import annotations

from collections import Counter

from .mutator import OPERATORS, Mutant

COUNTS = ("mutants", "killed", "timeouts", "survived", "equivalent", "skipped")
STATUS_COUNT = {"killed": "killed", "timeout": "timeouts", "crashed": "timeouts", "survived": "survived",
                "equivalent": "equivalent", "skipped": "skipped"}


KILL_KINDS = (  # words of the course's check messages -> how the check caught the mutant
    ("refuses it", "CompileError"),
    ("gives wrong results", "wrong values"),
    ("launched wrongly", "launch rule"),
    ("budget is", "budget"),
    ("task asks for at least", "budget"),
)


def kill_kind(message: str) -> str:
    """How a check cell caught a mutant: the gpusim error, "wrong values", "budget"... from its message."""
    for words in ("gpusim stopped the kernel, ", "your code raised an exception, "):
        if words in message:
            return message.split(words, 1)[1].split(":", 1)[0]
    for words, kind in KILL_KINDS:
        if words in message:
            return kind
    return message.split(":", 1)[0]


def score(counts: dict) -> float | None:
    """(killed + timeouts) / (mutants − equivalent − skipped): None when nothing was measured."""
    measured = counts["mutants"] - counts["equivalent"] - counts["skipped"]
    return round((counts["killed"] + counts["timeouts"]) / measured, 3) if measured > 0 else None


def summarize(mutants: list[Mutant], results: dict[str, dict], task_of: dict[tuple[str, int], str],
              header: dict) -> dict:
    """The JSON record: `header` (settings, provenance), totals, per task and per operator counts, and the
    surviving and equivalent mutants with their descriptions and the battery's reasons."""
    tasks: dict[tuple[str, str], dict] = {}
    operators: dict[str, dict] = {name: dict.fromkeys(COUNTS, 0) for name in OPERATORS}
    totals = dict.fromkeys(COUNTS, 0)
    for mutant in mutants:
        record = results.get(mutant.id, {"status": "skipped", "reason": "not run"})
        key = (mutant.notebook, task_of[(mutant.notebook, mutant.cell)])
        entry = tasks.setdefault(key, _task_entry(*key))
        if mutant.grade_id not in entry["solution_cells"]:
            entry["solution_cells"].append(mutant.grade_id)
        count = STATUS_COUNT[record["status"]]
        for counts in (entry, operators.setdefault(mutant.operator, dict.fromkeys(COUNTS, 0)), totals):
            counts["mutants"] += 1
            counts[count] += 1
        item = {"id": mutant.id, "operator": mutant.operator, "description": mutant.description}
        if record["status"] == "killed":
            for grade_id, message in record["failed"].items():
                entry["killed_by"][f"{grade_id}: {kill_kind(message)}"] += 1
            if set(record["failed"]) <= set(record.get("hidden_only", [])):
                entry["hidden_only"].append(item)
        elif record["status"] == "survived":
            entry["survivors"].append({**item, "battery": record.get("reason", "")})
        elif record["status"] == "equivalent":
            entry["equivalents"].append({**item, "reason": record.get("reason", "")})
        elif count == "timeouts":
            entry["timed_out"].append({**item, "reason": record.get("reason", "")})
    for entry in tasks.values():
        entry["score"] = score(entry)
        entry["killed_by"] = dict(entry["killed_by"].most_common())
    for counts in (*operators.values(), totals):
        counts["score"] = score(counts)
    return {**header, "score_rule": "(killed + timeouts) / (mutants - equivalent - skipped)",
            "totals": totals, "tasks": list(tasks.values()),
            "operators": {name: counts for name, counts in operators.items() if counts["mutants"]}}


def _task_entry(notebook: str, task: str) -> dict:
    return {"notebook": notebook, "task": task, "solution_cells": [], **dict.fromkeys(COUNTS, 0),
            "killed_by": Counter(), "survivors": [], "equivalents": [], "timed_out": [], "hidden_only": []}


def _row(name: str, other: str, counts: dict) -> str:
    value = "–" if counts["score"] is None else f"{counts['score']:.0%}"
    cells = [name, other, *(str(counts[c]) for c in COUNTS), value]
    return "| " + " | ".join(cells) + " |"


def markdown(record: dict) -> str:
    """The readable table: per task, per operator, then every surviving, equivalent and timed-out mutant."""
    lines = ["# Mutation score of the exercise checks", "",
             f"{record['note']}", "",
             f"Score = {record['score_rule']}. A survivor is a planted bug every check cell passed; an "
             f"equivalent mutant agreed with the original on the battery (tools/mutation/battery.py).", "",
             "| notebook | task | " + " | ".join(COUNTS) + " | score |",
             "|" + " --- |" * (len(COUNTS) + 3)]
    for entry in record["tasks"]:
        lines.append(_row(entry["notebook"], entry["task"], entry))
    lines += [_row("**all**", "", record["totals"]), "", "## By operator", "",
              "| operator | what it changes | " + " | ".join(COUNTS) + " | score |",
              "|" + " --- |" * (len(COUNTS) + 3)]
    for name, counts in record["operators"].items():
        lines.append(_row(name, OPERATORS.get(name, ""), counts))
    lines += ["", "## Surviving mutants (not equivalent), by task and operator", ""]
    for entry in record["tasks"]:
        if not entry["survivors"]:
            continue
        lines.append(f"### {entry['notebook']}: {entry['task']} ({len(entry['survivors'])})")
        lines.append("")
        for item in sorted(entry["survivors"], key=lambda s: list(OPERATORS).index(s["operator"])):
            lines.append(f"- **{item['operator']}** `{item['id']}` {item['description']}  ")
            lines.append(f"  battery: {item['battery']}")
        lines.append("")
    sections = (("Killed only by hidden tests (the visible checks let them pass)", "hidden_only"),
                ("Equivalent mutants", "equivalents"), ("Timed-out mutants", "timed_out"))
    for title, key in sections:
        found = [(entry, item) for entry in record["tasks"] for item in entry[key]]
        if found:
            lines += [f"## {title}", ""]
            for _, item in found:
                reason = f": {item['reason']}" if "reason" in item else ""
                lines.append(f"- `{item['id']}` {item['description']}{reason}")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"
