"""``speedtrap app`` in a real browser: headless Chromium driven by Playwright.

The module starts one app server on a free local port (``speedtrap app --no-browser``). The
browser is Debian's ``chromium`` (Playwright's own browser download is not used): found on the
PATH or named by ``SPEEDTRAP_CHROMIUM``; ``make test`` installs it when it can
(scripts/browser_for_tests.sh). Without it these tests skip, saying how to enable them — except in
CI (``CI=true``), where a missing browser fails, unless ``make test`` could not install it and said
why (``SPEEDTRAP_NO_BROWSER``: they skip with that reason). Screenshots go to
``results/app/``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "results" / "app"
BIN = Path(sys.executable).parent
ENABLE = (
    "install Debian's chromium (apt-get install chromium) and the app extra (pip install -e '.[app]'), "
    "or point SPEEDTRAP_CHROMIUM at a Chromium binary"
)
TIMEOUT_MS = 90_000


def chromium_path() -> str | None:
    return (
        os.environ.get("SPEEDTRAP_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    )


def need(condition: bool, reason: str) -> None:
    """Skip without the browser stack — fail in CI, where it must be there, unless `make test` said
    why it could not install the browser (SPEEDTRAP_NO_BROWSER: then skip with that reason)."""
    if condition:
        return
    cannot = os.environ.get("SPEEDTRAP_NO_BROWSER", "").strip()
    if cannot:
        pytest.skip(f"{reason}: {cannot}")
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI must run the browser tests: .ci/run installs chromium)")
    pytest.skip(f"{reason}: to run the browser tests, {ENABLE}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        need(False, "Playwright is not installed")
    executable = chromium_path()
    need(executable is not None, "no Chromium found")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def server(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    need(importlib.util.find_spec("solara") is not None, "Solara is not installed")
    port = free_port()
    log = tmp_path_factory.mktemp("app") / "server.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [str(BIN / "speedtrap"), "app", "--port", str(port), "--host", "127.0.0.1", "--no-browser"],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}/"
        try:
            deadline = time.monotonic() + 90
            while True:
                try:
                    with urllib.request.urlopen(url, timeout=5) as response:
                        if response.status == 200:
                            break
                except OSError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        pytest.fail(f"the app server did not start:\n{log.read_text()[-3000:]}")
                    time.sleep(0.3)
            yield url
        finally:
            process.terminate()
            process.wait(timeout=30)


class Page:
    """A fresh browser page on the app that records console errors, page errors and failed loads."""

    def __init__(self, browser: Any, url: str) -> None:
        self.errors: list[str] = []
        self.context = browser.new_context(viewport={"width": 1400, "height": 1000})
        self.page = self.context.new_page()
        self.page.set_default_timeout(TIMEOUT_MS)
        self.page.on(
            "console", lambda m: self.errors.append(f"console: {m.text}") if m.type == "error" else None
        )
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        self.page.on(
            "response", lambda r: self.errors.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None
        )
        self.page.goto(url)
        self.page.get_by_text("Choose a scenario and backends").wait_for()

    def type_into(self, field: str, text: str) -> None:
        box = self.page.locator(f".st-{field} input")
        box.fill(text)
        box.press("Enter")

    def run(self) -> None:
        """Press Run and wait until the run is done (after clearing the previous one)."""
        self.page.locator(".st-reset").click()
        self.page.locator(".st-status").wait_for(state="detached")
        self.page.locator(".st-run").click()
        self.page.locator(".st-done").wait_for()

    def value(self, arm: str, key: str) -> float:
        return float(self.page.locator(f".st-{arm}-{key}").inner_text())

    def shot(self, name: str) -> None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)

    def assert_clean(self) -> None:
        """No console or page errors, no failed loads, and no Python traceback shown in the page."""
        assert self.errors == []
        assert self.page.get_by_text("Traceback (most recent call last)").count() == 0

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def page(browser: Any, server: str) -> Iterator[Page]:
    opened = Page(browser, server)
    yield opened
    opened.close()


def test_page_loads_without_console_errors(page: Page) -> None:
    page.page.get_by_text("Failure multiplier of wafer-distilled").wait_for()
    page.shot("loaded")
    page.assert_clean()


def test_failure_multiplier_gives_more_fixing_on_b_and_leaves_a_alone(page: Page) -> None:
    page.type_into("horizon", "4")
    page.run()
    before = {arm: page.value(arm, "fixing") for arm in "ab"}
    assert page.page.locator(".st-finding").inner_text().count("same seed") == 1
    page.page.locator(".st-slider-failure-multiplier [role=slider]").press("End")  # 3× the failures
    page.page.get_by_text("Failure multiplier of wafer-distilled (×): 3").wait_for()
    page.run()
    after = {arm: page.value(arm, "fixing") for arm in "ab"}
    page.shot("compared")
    assert after["b"] > before["b"]  # more mistakes on B: more of the day fixing them
    assert after["a"] == before["a"]  # A meets the same tasks with the same seed: unchanged
    page.page.get_by_role("button", name="wafer-distilled", exact=True).click()
    page.page.get_by_text("Per developer and serving pool on wafer-distilled").wait_for()
    with page.page.expect_download() as download:
        page.page.get_by_text("Download as a Perfetto trace").click()
    trace = json.loads(Path(download.value.path()).read_text())
    assert trace["otherData"]["horizon_s"] == 4 * 3600.0
    assert {e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "process_name"} >= {
        "developers",
        "wafer-distilled replica 0",
    }
    page.assert_clean()


def test_bad_values_show_the_fields_error(page: Page) -> None:
    page.type_into("horizon", "-2")
    page.type_into("seed", "abc")
    page.page.locator(".st-run").click()
    page.page.locator(".st-horizon").get_by_text("the horizon must be more than 0 hours").wait_for()
    page.page.locator(".st-seed").get_by_text("'abc' is not a whole number").wait_for()
    assert page.page.locator(".st-status").count() == 0  # nothing ran
    page.shot("bad_value")
    page.type_into("horizon", "1")
    page.page.locator(".st-horizon").get_by_text("must be more than").wait_for(state="detached")
    page.assert_clean()


def test_step_advances_one_chunk_and_reset_clears(page: Page) -> None:
    page.page.locator(".st-reset").click()  # nothing to reset yet: harmless
    page.type_into("horizon", "1")
    page.page.locator(".st-step").click()
    page.page.get_by_text("paused: 0.04 of 1 h simulated (4%)").wait_for()
    page.page.locator(".st-step").click()
    page.page.get_by_text("paused: 0.08 of 1 h simulated (8%)").wait_for()
    page.page.locator(".st-reset").click()
    page.page.locator(".st-status").wait_for(state="detached")
    page.assert_clean()


def test_a_running_run_shows_its_progress_and_a_partial_view_not_the_hint(page: Page) -> None:
    page.type_into("horizon", "24")  # three developer-days: a run of several seconds
    page.page.locator(".st-run").click()
    running = page.page.locator(".st-running")
    running.wait_for()
    page.page.locator(".st-finding").wait_for()  # the first chunk's views, while the run goes on
    assert page.page.get_by_text("Choose a scenario and backends").count() == 0
    assert " of 24 h simulated (" in running.inner_text()
    assert page.page.locator(".st-done").count() == 0
    page.shot("running")
    page.page.locator(".st-done").wait_for()
    assert page.page.get_by_text("Choose a scenario and backends").count() == 0
    page.assert_clean()


def test_economics_follow_the_developer_cost_and_replicate_with_an_interval(page: Page) -> None:
    assert "BLS" in page.page.locator(".st-value-source").inner_text()
    page.type_into("horizon", "1")
    page.run()
    live = page.page.locator(".st-economics-live")
    assert "wafer-distilled at $90.58 per developer-hour: net" in live.inner_text()
    assert "against gpu-batched (no interval from 1 value)" in live.inner_text()
    page.type_into("usd-per-dev-hour", "200")  # prices the same run again, without running it
    live.get_by_text("wafer-distilled at $200 per developer-hour: net").wait_for()
    page.type_into("usd-per-dev-hour", "abc")
    page.page.locator(".st-economics").get_by_text("Economics: 'abc' is not a number.").wait_for()
    page.type_into("usd-per-dev-hour", "200")
    # one developer-day: in one hour some members' developers complete no task on the baseline, and a
    # member with no net value leaves too few for a behavioural interval (the sentence then says so)
    page.type_into("horizon", "8")
    page.page.locator(".st-replicate").click()
    replicated = page.page.locator(".st-economics-replicated")
    replicated.wait_for()
    text = replicated.inner_text()
    assert "Economics over 10 runs per arm, paired by seed: 5 members of the calibrated ensemble" in text
    assert "--replications 10" in text and "behavioural interval over the ensemble" in text
    assert "wafer-distilled at $200 per developer-hour: net" in text and "95% CI" in text
    page.shot("economics")
    page.assert_clean()


def test_the_settings_export_as_a_scenario_file_and_a_command(page: Page) -> None:
    page.type_into("horizon", "2")
    page.page.get_by_text("Export these settings").click()
    with page.page.expect_download() as download:
        page.page.get_by_text("speedtrap-wafer-distilled.toml (arm wafer-distilled)").click()
    exported = Path(download.value.path()).read_text()
    assert "speedtrap run speedtrap-wafer-distilled.toml --seed 0" in exported
    scenario = tomllib.loads(exported)
    assert scenario["horizon_s"] == 7200.0 and list(scenario["backends"]) == ["wafer-distilled"]
    page.page.get_by_text(
        "speedtrap run experiments/scenarios/headline.toml --backend wafer-distilled"
    ).wait_for()
    page.assert_clean()


def box(page: Page, selector: str) -> dict[str, float]:
    """The bounding box of the first element ``selector`` finds (it must be shown)."""
    found = page.page.locator(selector).first.bounding_box()
    assert found is not None, f"{selector} is not shown"
    return dict(found)


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    """Whether two boxes share some area (touching edges do not count)."""
    return min(a["x"] + a["width"], b["x"] + b["width"]) > max(a["x"], b["x"]) and min(
        a["y"] + a["height"], b["y"] + b["height"]
    ) > max(a["y"], b["y"])


def test_the_progress_bar_is_full_when_the_run_is_done(page: Page) -> None:
    page.type_into("horizon", "1")
    page.run()
    assert page.page.locator(".st-status").inner_text().endswith("(100%)")
    # the bar's inner part spans its track once the width transition has ended
    page.page.wait_for_function(
        """() => {
            const bar = document.querySelector('.st-progress');
            const inner = bar && bar.querySelector('.v-progress-linear__determinate');
            if (!inner || getComputedStyle(bar).visibility === 'hidden') return false;
            const track = bar.getBoundingClientRect().width;
            return track > 0 && Math.abs(inner.getBoundingClientRect().width - track) < 1;
        }"""
    )
    page.page.locator(".st-reset").click()  # no run: the bar is hidden again
    page.page.wait_for_function(
        "() => getComputedStyle(document.querySelector('.st-progress')).visibility === 'hidden'"
    )
    page.assert_clean()


def test_the_open_export_panel_covers_no_view(page: Page) -> None:
    page.type_into("horizon", "1")
    page.run()
    page.page.get_by_text("Export these settings").click()
    page.page.locator(".st-export-commands").wait_for()
    page.page.wait_for_timeout(500)  # the panel's opening transition
    page.shot("export_open")
    views = [box(page, ".st-finding"), box(page, ".st-results"), box(page, ".st-results img")]
    for cover in (".v-navigation-drawer", ".st-export-commands", ".v-expansion-panel"):
        assert not any(overlap(box(page, cover), view) for view in views), f"{cover} covers a view"
    page.assert_clean()


def test_other_hosts_and_ports_are_refused(server: str) -> None:
    """DNS rebinding: the running app answers a request naming the host and port it serves, and
    refuses one naming another host, or another port, with 421."""
    import http.client
    import urllib.parse

    url = urllib.parse.urlsplit(server)

    def status(host: str) -> int:
        connection = http.client.HTTPConnection(url.hostname or "", url.port, timeout=60)
        try:
            connection.request("GET", "/", headers={"Host": host})
            response = connection.getresponse()
            response.read()
            return response.status
        finally:
            connection.close()

    assert status(f"127.0.0.1:{url.port}") == 200
    assert status(f"localhost:{url.port}") == 200
    assert status(f"evil.example:{url.port}") == 421
    assert status("evil.example") == 421
    assert status(f"127.0.0.1:{(url.port or 0) + 1}") == 421
