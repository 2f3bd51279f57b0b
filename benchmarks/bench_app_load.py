"""Benchmark: how long the app takes to load and to show a default run, under the load it ran under.

Starts ``speedtrap app --no-browser`` on a free local port, as a user would, and drives it in headless
Chromium through Playwright (Debian's ``chromium``, or ``SPEEDTRAP_CHROMIUM``; the browser is started
before the clock). Each repeat times, from the server's start:

* the server answering HTTP;
* the page shown in the browser (its hint, "Choose a scenario and backends");
* Run pressed at once with the page's default controls, the first figure drawn;
* that default run done (its status line says "done");

and, from the press of Run, the first figure and the end of the run. It prints the medians with the
machine's CPU count and its load average (``os.getloadavg``) before and after, so that a figure is
never read without the load it was measured under; and the CPU seconds of the same default run in
this process, without server or browser (on a busy machine, about what an idle one's wall time is).

Run: ``python benchmarks/bench_app_load.py [--repeat 3]`` (needs the ``app`` extra and Chromium).
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

BIN = Path(sys.executable).parent
TIMEOUT_MS = 180_000
STEPS = ("HTTP answered", "page shown", "first figure drawn", "default run done")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} (1, 5, 15 min)"


def measure(browser: Any) -> dict[str, float]:
    """Seconds from the server's start to each of :data:`STEPS`, and from Run to the last two."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    times: dict[str, float] = {}
    with tempfile.TemporaryFile("w+") as log:
        start = time.monotonic()
        process = subprocess.Popen(
            [str(BIN / "speedtrap"), "app", "--port", str(port), "--host", "127.0.0.1", "--no-browser"],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            while True:
                try:
                    with urllib.request.urlopen(url, timeout=5) as response:
                        if response.status == 200:
                            break
                except OSError:
                    if process.poll() is not None or time.monotonic() - start > TIMEOUT_MS / 1000:
                        log.seek(0)
                        raise SystemExit(f"the app server did not start:\n{log.read()[-3000:]}") from None
                    time.sleep(0.05)
            times[STEPS[0]] = time.monotonic() - start
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(url)
            page.get_by_text("Choose a scenario and backends").wait_for()
            times[STEPS[1]] = time.monotonic() - start
            page.locator(".st-run").click()
            pressed = time.monotonic()
            page.locator(".st-results img").first.wait_for()
            times[STEPS[2]] = time.monotonic() - start
            times["Run to first figure"] = time.monotonic() - pressed
            page.locator(".st-done").wait_for()
            times[STEPS[3]] = time.monotonic() - start
            times["Run to done"] = time.monotonic() - pressed
            context.close()
        finally:
            process.terminate()
            process.wait(timeout=30)
    return times


def default_run_cpu_s() -> tuple[float, float]:
    """(CPU seconds, wall seconds) of the page's default run, chunk by chunk as the page runs it."""
    from speedtrap.app.live import LiveComparison
    from speedtrap.app.settings import Settings, build_arms, load_base, settings_for

    arms = build_arms(settings_for(load_base(Settings()), Settings()))
    wall, cpu = time.perf_counter(), time.process_time()
    comparison = LiveComparison(arms.scenarios, arms.seed)
    while not comparison.done:
        comparison.step()
    return time.process_time() - cpu, time.perf_counter() - wall


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="App starts timed (median reported).")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    executable = os.environ.get("SPEEDTRAP_CHROMIUM") or shutil.which("chromium")
    if executable is None:
        raise SystemExit("no Chromium: apt-get install chromium, or set SPEEDTRAP_CHROMIUM")
    print(f"{os.cpu_count()} CPUs; before: {load()}")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        runs = [measure(browser) for _ in range(args.repeat)]
        browser.close()
    for name in [*STEPS, "Run to first figure", "Run to done"]:
        values = [r[name] for r in runs]
        since = "since Run pressed" if name.startswith("Run") else "since the server's start"
        print(
            f"{name:<22} {statistics.median(values):6.1f} s {since} (median of {args.repeat}; "
            f"{min(values):.1f}–{max(values):.1f})"
        )
    cpu = sorted(default_run_cpu_s() for _ in range(args.repeat))[args.repeat // 2]
    print(f"default run in this process: {cpu[0]:.1f} s CPU, {cpu[1]:.1f} s wall (median by CPU)")
    print(f"{os.cpu_count()} CPUs; after: {load()}")


if __name__ == "__main__":
    main()
