"""The course's website (`make site`) in a real browser: Debian's chromium, driven by Playwright, reads every
page of site/_build/html from a local server and finds no console error, no broken image, no error output, no
broken internal link and no request that leaves the machine; the navigation walks every lesson in order; math
renders. Two screenshots go to test-artifacts/site/.

`make test` builds the site first (`make site`); run alone, the test needs that build and says so.
"""

import functools
import http.server
import re
import threading
import urllib.parse
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import pytest
from browser_tools import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, browser_or_skip, skip_or_fail
from notebook_runs import ROOT

HTML = ROOT / "site" / "_build" / "html"
LESSONS = sorted(ROOT.glob("notebooks/*.ipynb"), key=lambda p: (p.stem != "00_start_here", p.stem))
EXERCISES = sorted(ROOT.glob("exercises/*.ipynb"))
SCREENSHOTS = {"notebooks/05_tiled_matmul.html": "lesson.png", "gpusim/README.html": "gpusim.png"}
ERROR_OUTPUT = ".cell_output .traceback, .cell_output .output.error"
MATH = "span.math, div.math"


class Ids(HTMLParser):
    """Every id and name a link's #fragment may point at, in one HTML page."""

    def __init__(self):
        super().__init__()
        self.ids = set()

    def handle_starttag(self, tag, attrs):
        self.ids.update(value for key, value in attrs if key in ("id", "name") and value)


@functools.cache
def ids_of(path: Path) -> frozenset:
    parser = Ids()
    parser.feed(path.read_text(encoding="utf-8"))
    return frozenset(parser.ids)


def built_site() -> Path:
    if not (HTML / "site" / "index.html").exists():
        skip_or_fail(f"the site is not built ({HTML.relative_to(ROOT)} is missing): run `make site`")
    missing = [p.relative_to(ROOT) for p in LESSONS + EXERCISES
               if not (HTML / p.relative_to(ROOT).with_suffix(".html")).exists()]
    assert not missing, f"no page for {missing}: run `make site` again"
    return HTML


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    """The built site over http on 127.0.0.1, as a static host would serve it."""
    handler = functools.partial(QuietHandler, directory=str(built_site()))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}/"
    httpd.shutdown()
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser():
    sync_playwright = browser_or_skip()
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


class Visit:
    """One page loaded in chromium, with what went wrong while it loaded."""

    def __init__(self, browser, base, path, offline=True):
        self.path, self.problems, self.outside = path, [], []
        self.context = browser.new_context(viewport={"width": 1400, "height": 1000})
        self.page = self.context.new_page()
        self.page.set_default_timeout(30_000)
        self.page.on("console", lambda m: m.type == "error" and self.problems.append(f"console: {m.text}"))
        self.page.on("pageerror", lambda e: self.problems.append(f"script error: {e}"))
        self.page.on("requestfailed", lambda r: self.problems.append(f"request failed: {r.url}"))
        self.page.on("response", lambda r: r.ok or self.problems.append(f"HTTP {r.status}: {r.url}"))
        self.context.route("**/*", self._only_local(base))
        self.page.goto(base + path, wait_until="load")

    def _only_local(self, base):
        def route(route):
            if route.request.url.startswith(base):
                route.continue_()
            else:
                self.outside.append(route.request.url)
                route.abort()
        return route

    def close(self):
        self.context.close()


def pages() -> list[str]:
    """Every page but the root's index.html, which only leads to the start page (see the navigation test)."""
    return sorted(str(p.relative_to(HTML)) for p in HTML.rglob("*.html")
                  if not p.relative_to(HTML).parts[0].startswith("_") and p != HTML / "index.html")


def broken_images(page) -> list[str]:
    return page.eval_on_selector_all("img", "imgs => imgs.filter(i => !i.complete || i.naturalWidth === 0)"
                                            ".map(i => i.getAttribute('src'))")


def internal_links(page, base) -> set[str]:
    hrefs = page.eval_on_selector_all("a[href]", "links => links.map(a => a.href)")
    return {href for href in hrefs if href.startswith(base)}


def link_problem(href: str, base: str) -> str | None:
    """Why a link into the site does not resolve (no file, or no element with its #fragment), or None."""
    url, _, fragment = href.partition("#")
    path = urllib.parse.unquote(urllib.parse.urlparse(url).path).lstrip("/")
    target = HTML / path
    if target.is_dir():
        target = target / "index.html"
    if not target.is_file():
        return f"{href}: no such file"
    if fragment and target.suffix == ".html" and urllib.parse.unquote(fragment) not in ids_of(target):
        return f"{href}: no element with id {fragment!r}"
    return None


def wait_for_math(page) -> dict:
    """Let MathJax typeset the page; how many formulas there are, how many it rendered, and its errors."""
    page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
    page.evaluate("() => MathJax.startup.promise")
    return page.evaluate(f"""() => ({{
        formulas: document.querySelectorAll('{MATH}').length,
        rendered: document.querySelectorAll('mjx-container').length,
        errors: [...document.querySelectorAll('mjx-merror')].map(e => e.textContent).slice(0, 5)}})""")


@pytest.mark.timeout(600)
def test_every_page_loads_offline_with_images_math_and_no_errors(server, browser):
    problems, links, math_pages = [], set(), []
    ARTIFACTS.joinpath("site").mkdir(parents=True, exist_ok=True)
    for path in pages():
        visit = Visit(browser, server, path)
        try:
            page = visit.page
            found = visit.problems + [f"request leaving the machine: {url}" for url in visit.outside]
            found += [f"image does not show: {src}" for src in broken_images(page)]
            errors = page.locator(ERROR_OUTPUT)
            found += [f"error output: {errors.nth(i).inner_text()[:300]}" for i in range(errors.count())]
            if page.locator(MATH).count():
                math = wait_for_math(page)
                math_pages.append(path)
                if math["rendered"] < math["formulas"] or math["errors"]:
                    found.append(f"math: {math}")
            if path.split("/")[0] in ("notebooks", "exercises", "gpusim", "site"):
                note = page.locator(".course-page-note")
                if not note.count() or not note.first.inner_text().startswith("Outputs: "):
                    found.append("no line under the title saying where the outputs come from")
            links |= internal_links(page, server)
            if path in SCREENSHOTS:
                page.screenshot(path=str(ARTIFACTS / "site" / SCREENSHOTS[path]), full_page=False)
            problems += [f"{path}: {problem}" for problem in found]
        finally:
            visit.close()
    problems += [problem for href in sorted(links) if (problem := link_problem(href, server))]
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:40])
    assert math_pages, "no page has math: the check of MathJax saw nothing"
    assert all((ARTIFACTS / "site" / name).stat().st_size > 10_000 for name in SCREENSHOTS.values())


def next_page(page) -> str | None:
    link = page.locator("a.right-next")
    return link.first.get_attribute("href") if link.count() else None


@pytest.mark.timeout(300)
def test_the_navigation_walks_every_lesson_then_every_exercise_in_order(server, browser):
    """The site's root leads to the start page; from there the "next" link leads through the lessons in order,
    then the exercises."""
    visit = Visit(browser, server, "")
    walked = []
    try:
        page = visit.page
        page.wait_for_url(server + "site/index.html")
        while (href := next_page(page)) is not None and len(walked) < 100:
            page.goto(urllib.parse.urljoin(page.url, href), wait_until="load")
            walked.append(urllib.parse.urlparse(page.url).path.lstrip("/"))
    finally:
        visit.close()
    expected = [str(p.relative_to(ROOT).with_suffix(".html")) for p in LESSONS + EXERCISES]
    notebooks = [path for path in walked if re.match(r"(notebooks|exercises)/", path)]
    assert notebooks == expected, f"the navigation walked {walked}"


def test_each_lesson_page_names_its_mode_and_links_to_jupyterlab():
    built_site()
    for lesson in LESSONS:
        text = (HTML / lesson.relative_to(ROOT).with_suffix(".html")).read_text(encoding="utf-8")
        note = re.search(r'<div class="course-page-note[^"]*">(.*?)</div>', text, re.S)
        assert note, f"{lesson.name}: no note under the title"
        assert re.search(r"Outputs: CPU mode, on .+, run by", note.group(1)), note.group(1)[:500]
        assert f'href="http://localhost:8888/lab/tree/notebooks/{lesson.name}"' in note.group(1)
