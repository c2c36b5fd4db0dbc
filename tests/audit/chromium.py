"""Headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`: no port,
no websocket library): open a page, evaluate JavaScript in it, type, resize, take screenshots.
Every network request is refused, so a page that fetched anything would show it."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
    "--host-resolver-rules=MAP * ~NOTFOUND",
)


class Browser:
    def __init__(self, profile: Path) -> None:
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def fds() -> None:  # the child reads commands on fd 3 and answers on fd 4
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)

        self.proc = subprocess.Popen(
            [CHROMIUM, *FLAGS, "--remote-debugging-pipe", f"--user-data-dir={profile}", "about:blank"],
            preexec_fn=fds,
            pass_fds=(3, 4),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._id = 0
        self.session = ""
        self.errors: list[str] = []

    def send(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None, timeout: float = 60
    ) -> Any:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session if session is not None else self.session:
            msg["sessionId"] = session if session is not None else self.session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" not in self._buf:
                if time.monotonic() > deadline:
                    raise TimeoutError(method)
                chunk = os.read(self._from_child, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed the pipe")
                self._buf += chunk
            raw, self._buf = self._buf.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("method") == "Runtime.exceptionThrown":
                self.errors.append(json.dumps(reply["params"]["exceptionDetails"])[:2000])
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def open(self, url: str, width: int = 1280, height: int = 900, mobile: bool = False) -> None:
        target = self.send("Target.createTarget", {"url": "about:blank"}, session="")["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True}, session="")[
            "sessionId"
        ]
        self.send("Runtime.enable")
        self.send("Page.enable")
        self.resize(width, height, mobile)
        self.send("Page.navigate", {"url": url})
        self.wait("document.readyState === 'complete' && !!document.getElementById('shown')")

    def resize(self, width: int, height: int, mobile: bool = False) -> None:
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
        )

    def eval(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in result:
            raise RuntimeError(json.dumps(result["exceptionDetails"])[:2000])
        return result["result"].get("value")

    def wait(self, condition: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not self.eval(f"!!({condition})"):
            if time.monotonic() > deadline:
                raise TimeoutError(condition)
            time.sleep(0.05)

    def type(self, selector: str, text: str) -> None:
        """Focus the field, clear it and type `text` as keyboard input (the page's input events fire)."""
        self.eval(
            f"(function(e){{e.focus(); e.value=''; e.dispatchEvent(new Event('input'));}})(document.querySelector({json.dumps(selector)}))"
        )
        self.send("Input.insertText", {"text": text})

    def screenshot(self, path: Path, full: bool = True, top: int = 0, height: int = 16000) -> None:
        """The page from `top` down (`height` pixels at most); `full=False`: the viewport only."""
        params: dict[str, Any] = {"format": "png", "captureBeyondViewport": full}
        if full:
            w, h = self.eval("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
            params["clip"] = {"x": 0, "y": top, "width": w, "height": max(1, min(h - top, height)), "scale": 1}
        path.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", params)["data"]))

    def close(self) -> None:
        try:
            self.send("Browser.close", session="", timeout=10)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_child)
        os.close(self._from_child)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
