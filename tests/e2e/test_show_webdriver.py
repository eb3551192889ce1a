"""``cassette show --html`` driven in headless Chromium through ChromeDriver: every message
of the sequence diagram opens when its summary is clicked, showing the message itself.

Speaks the W3C WebDriver protocol to Debian's ``chromedriver`` over plain HTTP (httpx, a
test dependency already), so no browser-automation package is needed. Skips where
``chromium`` or ``chromedriver`` is not installed (``scripts/test.sh`` installs both as
root on Debian).
"""

from __future__ import annotations

import base64
import json
import os
import re
import select
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.helpers.support import CHROMIUM_ARGS, NO_CHROMIUM, PY, ROOT, scaled

EXAMPLE = ROOT / "examples" / "everything.jsonl"
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"  # the W3C key of an element reference


class WebDriver:
    """The few WebDriver commands this test needs, on one session."""

    def __init__(self, base: str, chromium: str, profile: Path) -> None:
        self.http = httpx.Client(base_url=base, timeout=60)
        options = {"binary": chromium, "args": [*CHROMIUM_ARGS, f"--user-data-dir={profile}"]}
        capabilities = {"alwaysMatch": {"goog:chromeOptions": options}}
        value = self._call("POST", "/session", {"capabilities": capabilities})
        self.session = f"/session/{value['sessionId']}"

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        response = self.http.request(method, path, json=body)
        payload = response.json()
        assert response.status_code == 200, json.dumps(payload)[:500]
        return payload["value"]

    def go(self, url: str) -> None:
        self._call("POST", f"{self.session}/url", {"url": url})

    def find_all(self, css: str, within: str | None = None) -> list[str]:
        base = f"{self.session}/element/{within}" if within else self.session
        found = self._call("POST", f"{base}/elements", {"using": "css selector", "value": css})
        return [item[ELEMENT] for item in found]

    def click(self, element: str) -> None:
        self._call("POST", f"{self.session}/element/{element}/click", {})

    def attribute(self, element: str, name: str) -> Any:
        return self._call("GET", f"{self.session}/element/{element}/attribute/{name}")

    def displayed(self, element: str) -> bool:
        return bool(self._call("GET", f"{self.session}/element/{element}/displayed"))

    def text(self, element: str) -> str:
        return str(self._call("GET", f"{self.session}/element/{element}/text"))

    def css(self, element: str, name: str) -> str:
        """The computed value of CSS property ``name`` (colours as ``rgb(...)``)."""
        return str(self._call("GET", f"{self.session}/element/{element}/css/{name}"))

    def rect(self, element: str) -> dict[str, float]:
        rect: dict[str, float] = self._call("GET", f"{self.session}/element/{element}/rect")
        return rect

    def execute(self, script: str, *elements: str) -> Any:
        """Run ``script`` in the page, ``arguments`` being ``elements``; its return value."""
        args = [{ELEMENT: element} for element in elements]
        return self._call("POST", f"{self.session}/execute/sync", {"script": script, "args": args})

    def screenshot(self, element: str) -> bytes:
        """A PNG of ``element`` as the browser drew it (scrolled into view)."""
        shot = self._call("GET", f"{self.session}/element/{element}/screenshot")
        return base64.b64decode(shot)

    def close(self) -> None:
        try:
            self._call("DELETE", self.session)
        finally:
            self.http.close()


def _started(process: subprocess.Popen[bytes], deadline: float) -> int:
    """Wait for chromedriver's "started successfully on port N." line, or fail at the
    deadline; the port it bound (it was given port 0, so it picks one that is free)."""
    assert process.stdout is not None
    fd = process.stdout.fileno()
    seen = b""
    while (found := re.search(rb"started successfully on port (\d+)\.", seen)) is None:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            pytest.fail(f"chromedriver did not start within 30 s: {seen[-300:]!r}")
        chunk = os.read(fd, 4096)
        if not chunk:
            pytest.fail(f"chromedriver exited: {seen[-300:]!r}")
        seen += chunk
    return int(found.group(1))


@pytest.fixture
def driver(tmp_path: Path) -> Iterator[WebDriver]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    chromedriver = shutil.which("chromedriver")
    if chromium is None or chromedriver is None:
        pytest.skip(NO_CHROMIUM)
    process = subprocess.Popen(
        [chromedriver, "--port=0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    try:
        port = _started(process, time.monotonic() + 30)
        web = WebDriver(f"http://127.0.0.1:{port}", chromium, tmp_path / "profile")
        try:
            yield web
        finally:
            web.close()
    finally:
        process.terminate()
        process.wait(timeout=scaled(30))


def test_every_message_opens_when_its_summary_is_clicked(driver: WebDriver, tmp_path: Path) -> None:
    page = tmp_path / "session.html"
    made = subprocess.run(
        [PY, "-m", "cassette", "show", str(EXAMPLE), "--html", str(page)],
        capture_output=True,
        timeout=scaled(60),
        check=False,
    )
    assert made.returncode == 0, made.stderr
    driver.go(page.as_uri())
    messages = driver.find_all("details.msg")
    recorded = [line for line in EXAMPLE.read_text().splitlines()[1:] if '"kind":"message"' in line]
    session = [line for line in recorded if '"probe":' not in line]  # probes are drawn apart
    assert len(session) < len(recorded)
    assert len(messages) == len(session)
    for element in messages:
        (summary,) = driver.find_all("summary", within=element)
        (body,) = driver.find_all("pre", within=element)
        assert driver.attribute(element, "open") is None
        assert not driver.displayed(body)
        driver.click(summary)
        assert driver.attribute(element, "open") is not None
        assert driver.displayed(body)
        assert '"jsonrpc"' in driver.text(body)


def _visible(driver: WebDriver, element: str) -> bool:
    """What the reader sees: the browser's own ``checkVisibility`` (WebDriver's
    "displayed" calls anything inside a closed ``<details>`` hidden, even when CSS shows
    it, as the expand-all switch does)."""
    return bool(driver.execute("return arguments[0].checkVisibility()", element))


def test_rows_show_method_and_arguments_expand_all_and_misses_in_place(
    driver: WebDriver, tmp_path: Path
) -> None:
    rerun = tmp_path / "rerun.jsonl"
    rerun.write_text(EXAMPLE.read_text().replace('"hello from a cassette"}}', '"elsewhere"}}', 1))
    page = tmp_path / "session.html"
    made = subprocess.run(
        [PY, "-m", "cassette", "show", str(EXAMPLE), "--html", str(page), "--against", str(rerun)],
        capture_output=True,
        timeout=scaled(60),
        check=False,
    )
    assert made.returncode == 1, made.stderr  # the miss
    driver.go(page.as_uri())
    # a result row names the method it answers; a collapsed request previews its arguments
    (answer,) = driver.find_all('details.msg[data-line="10"] summary .method')
    assert driver.text(answer) == "tools/call echo"
    (preview,) = driver.find_all('details.msg[data-line="9"] summary .preview')
    assert driver.displayed(preview)
    assert driver.text(preview) == '{"message":"hello from a cassette"}'
    # expand all: every message's body shows, and the previews step aside
    bodies = driver.find_all("details.msg pre")
    assert not any(_visible(driver, body) for body in bodies)
    (toggle,) = driver.find_all('label[for="expand-all"]')
    driver.click(toggle)
    assert all(_visible(driver, body) for body in bodies)
    assert all(driver.rect(body)["height"] > 0 for body in bodies)
    assert not _visible(driver, preview)
    # the miss, at the row of the recording closest to it
    (miss,) = driver.find_all(".miss")
    assert driver.attribute(miss, "data-closest") == "9"
    assert "not recorded: arguments differ at /message" in driver.text(miss)
    (closest,) = driver.find_all('details.msg[data-line="9"]')
    (following,) = driver.find_all('details.msg[data-line="10"]')
    assert driver.rect(closest)["y"] < driver.rect(miss)["y"] < driver.rect(following)["y"]
