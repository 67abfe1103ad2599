"""The thread-map widget in a real browser: JupyterLab on localhost, Debian's chromium driven by Playwright.

Skipped, with the reason, where chromium or playwright is missing (a learner's laptop); `.ci/run`
installs both and sets COURSE_REQUIRE_BROWSER=1, so in CI it runs every time (or fails).
The screenshot goes to test-artifacts/ (git-ignored).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest
from browser_tools import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, browser_or_skip, free_port
from notebook_runs import ROOT

NOTEBOOK = "tests/browser/thread_map_demo.ipynb"
FACTS = ".gpusim-thread-map-facts"


def quiet_settings(home):
    """JupyterLab settings for the test: never autosave the demo notebook, no news pop-up."""
    settings = {"@jupyterlab/docmanager-extension/plugin": {"autosave": False},
                "@jupyterlab/apputils-extension/notification": {"fetchNews": "false"}}
    for plugin, values in settings.items():
        folder, name = plugin.rsplit("/", 1)
        path = home / "settings" / folder / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


def start_lab(port, token, home):
    quiet_settings(home)
    jupyter = Path(sys.executable).with_name("jupyter")
    command = [str(jupyter), "lab", "--no-browser", f"--ServerApp.port={port}", "--ServerApp.ip=127.0.0.1",
               f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={ROOT}",
               "--ServerApp.port_retries=0"]
    if os.geteuid() == 0:
        command.append("--allow-root")
    env = {**os.environ, "COURSE_MODE": "cpu", "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
           "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"), "JUPYTER_RUNTIME_DIR": str(home / "runtime")}
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    env.pop("MPLBACKEND", None)
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)


def wait_for_lab(lab, port, token, seconds=60):
    url = f"http://127.0.0.1:{port}/api/contents/{NOTEBOOK}?content=0&token={token}"
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return json.load(response)
        except OSError:
            assert lab.poll() is None, f"jupyter lab exited:\n{lab.stdout.read().decode()}"
            assert time.monotonic() < deadline, f"jupyter lab did not answer within {seconds} s"
            time.sleep(0.5)


def facts(page):
    return page.get_attribute(FACTS, "data-facts")


def move_thread_slider(page, steps):
    """Focus the thread slider's handle (the second slider of the widget) and press the right arrow."""
    handle = page.locator(".gpusim-thread-map .widget-slider").nth(1).locator(".noUi-handle")
    handle.focus()
    for _ in range(steps):
        handle.press("ArrowRight")


def run_and_move_the_slider(page):
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for()  # the kernel has started
    page.locator(".jp-Notebook .jp-Cell").first.click()
    page.keyboard.press("Escape")  # command mode
    for _ in range(page.locator(".jp-Notebook .jp-Cell").count() - 1):
        page.keyboard.press("Shift+Enter")  # run the cell, move to the next
    page.keyboard.press("Control+Enter")  # run the last cell without adding a new one
    page.wait_for_selector(FACTS)
    before = facts(page)
    assert before.startswith("block (0, 0), thread (0, 0): reads a[0], b[0]; writes out[0]"), before
    move_thread_slider(page, 3)
    changed = "s => document.querySelector(s)?.dataset.facts.includes('thread (3, 0)')"
    page.wait_for_function(changed, arg=FACTS)
    after = facts(page)
    assert after == "block (0, 0), thread (3, 0): reads a[3], b[3]; writes out[3]", after
    page.locator(".gpusim-thread-map").scroll_into_view_if_needed()


@pytest.mark.timeout(150)
def test_thread_map_slider_moves_the_highlight_in_jupyterlab():
    sync_playwright = browser_or_skip()
    port, token = free_port(), "course-browser-test"
    home = Path(tempfile.mkdtemp(prefix="course-browser-"))
    lab = start_lab(port, token, home)
    ARTIFACTS.mkdir(exist_ok=True)
    try:
        assert wait_for_lab(lab, port, token)["type"] == "notebook"
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch_persistent_context(
                str(home / "chromium"), executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True,
                viewport={"width": 1400, "height": 1000})
            try:
                page = browser.new_page()
                page.set_default_timeout(40_000)
                page.goto(f"http://127.0.0.1:{port}/lab/tree/{NOTEBOOK}?reset&token={token}")
                page.wait_for_selector(".jp-Notebook .jp-Cell")
                try:
                    run_and_move_the_slider(page)
                except Exception:
                    page.screenshot(path=str(ARTIFACTS / "thread_map_widget_failed.png"), full_page=True)
                    raise
                page.screenshot(path=str(ARTIFACTS / "thread_map_widget.png"), full_page=True)
            finally:
                browser.close()
    finally:
        os.killpg(lab.pid, 15)
        lab.wait(timeout=30)
        shutil.rmtree(home, ignore_errors=True)
