"""What a learner sees of a results.json: ``python -m course.grade.preview results.json --out page.html``.

Renders Gradescope's or PrairieLearn's results file (from :mod:`.platforms`) as one self-contained HTML page,
a test per panel with its name, score and output, as the platforms lay them out. With ``--before-publishing``
a Gradescope page shows only what a learner sees before the instructor publishes the grades: tests whose
visibility is ``visible``, and no total while any scored test is hidden. Every text is escaped: the outputs
hold learner text.
"""

from __future__ import annotations

import argparse
import html
import json
import sys
from pathlib import Path

STYLE = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px; color: #222;
       max-width: 900px; }
h1 { font-size: 20px; } .total { font-size: 16px; margin-bottom: 16px; color: #444; }
.test { border: 1px solid #ccc; border-radius: 6px; margin: 10px 0; }
.head { padding: 8px 12px; display: flex; justify-content: space-between; font-weight: 600; }
.passed .head { background: #e6f4ea; } .failed .head { background: #fce8e6; }
.info .head { background: #f1f3f4; }
pre { margin: 0; padding: 10px 12px; white-space: pre-wrap; font-size: 12.5px; background: #fafafa;
      border-top: 1px solid #eee; }
.note { color: #666; font-size: 13px; }
"""


def _panel(name: str, score: str, output: str, kind: str) -> str:
    return (f'<div class="test {kind}"><div class="head"><span>{html.escape(name)}</span>'
            f'<span>{html.escape(score)}</span></div><pre>{html.escape(output)}</pre></div>')


def _number(value) -> str:
    return f"{value:g}" if isinstance(value, (int, float)) else "?"


def render(results: dict, before_publishing: bool = False) -> str:
    """The HTML page of a Gradescope or PrairieLearn results file."""
    panels, hidden_points = [], False
    if "gradable" in results:
        title = "PrairieLearn: external grader results"
        if results.get("gradable", True):
            total = f"Score: {100 * float(results.get('score', 0)):.0f}% ({results.get('message', '')})"
        else:
            total = "Not gradable: " + "; ".join(results.get("format_errors") or [])
        for test in results.get("tests", []):
            kind = "passed" if test.get("points") == test.get("max_points") else "failed"
            panels.append(_panel(test.get("name", ""), f"{_number(test.get('points'))} / "
                                 f"{_number(test.get('max_points'))}", test.get("output", ""), kind))
    else:
        title = "Gradescope: autograder results"
        for test in results.get("tests", []):
            if before_publishing and test.get("visibility", "visible") != "visible":
                hidden_points = hidden_points or test.get("max_score", 0) > 0
                continue
            kind = "info" if not test.get("max_score") else test.get("status", "failed")
            panels.append(_panel(test.get("name", ""), f"{_number(test.get('score'))} / "
                                 f"{_number(test.get('max_score'))}", test.get("output", ""), kind))
        scored = sum(test.get("max_score", 0) for test in results.get("tests", []))
        total = ("Total points: hidden until the grades are published" if hidden_points else
                 f"Total points: {_number(results.get('score'))} / {_number(scored)}")
    heading = " (as a learner sees it before the grades are published)" if before_publishing else ""
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head><body><h1>{html.escape(title + heading)}</h1>"
            f"<div class='total'>{html.escape(total)}</div>"
            + (f"<pre class='note'>{html.escape(results['output'])}</pre>" if results.get("output") else "")
            + f"{''.join(panels)}"
            f"</body></html>")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.grade.preview", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--before-publishing", action="store_true")
    args = parser.parse_args(argv)
    page = render(json.loads(args.results.read_text()), args.before_publishing)
    args.out.write_text(page, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
