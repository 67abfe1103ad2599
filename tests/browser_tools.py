"""Debian's chromium under Playwright, for the browser tests: where it is, how it starts, and what to do
when it is missing (skip on a learner's laptop, fail in CI where COURSE_REQUIRE_BROWSER=1)."""

import os
import socket
from pathlib import Path

import pytest
from notebook_runs import ROOT

CHROMIUM = os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = ROOT / "test-artifacts"


def skip_or_fail(reason):
    """Skip with the reason on a learner's machine; fail in CI, where COURSE_REQUIRE_BROWSER=1."""
    if os.environ.get("COURSE_REQUIRE_BROWSER") == "1":
        pytest.fail(f"COURSE_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(f"browser test skipped: {reason}")


def browser_or_skip():
    """Playwright's sync API, or a skip that says what is missing and how to get it."""
    if not Path(CHROMIUM).exists():
        skip_or_fail(f"no chromium at {CHROMIUM} (Debian: apt-get install -y chromium; "
                     "or set COURSE_CHROMIUM to a Chromium binary)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        skip_or_fail("the playwright package is missing (pip install -r requirements-dev.txt)")
    return sync_playwright


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
