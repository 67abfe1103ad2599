"""Screenshots of a Gradescope results.json as a learner sees it, for the README's instructor section.

    python tools/screenshot_results.py RESULTS.json [--out tools/screenshots]

Renders the file with course.grade.preview, after publishing and before, and photographs both pages with
Playwright's Chromium (/usr/bin/chromium, or COURSE_CHROMIUM): gradescope_results.png and
gradescope_results_before_publishing.png. The example in tools/screenshots/ is the fixture class's `partial`
learner graded by the Gradescope entry point (tests/test_grading_scale.py lays the platform out so).
"""

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from course.grade import preview  # noqa: E402

CHROMIUM = os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", type=Path)
    parser.add_argument("--out", type=Path, default=ROOT / "tools" / "screenshots")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    results = json.loads(args.results.read_text())
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 960, "height": 600})
        shots = ((False, "gradescope_results.png"), (True, "gradescope_results_before_publishing.png"))
        for before, name in shots:
            html = Path(scratch) / "page.html"
            html.write_text(preview.render(results, before), encoding="utf-8")
            page.goto(html.as_uri())
            page.screenshot(path=str(args.out / name), full_page=True)
            print(args.out / name)
        browser.close()


if __name__ == "__main__":
    main()
