"""Headless Chromium on a locally served build: the one set-up that `make pdf`
(scripts/make_pdf.py), `make screenshots` (scripts/screenshots.py) and the browser tests
(tests/test_browser.py, tests/test_pdf.py, tests/test_reference_pages.py) share.

:func:`find_browser` finds Debian's ``chromium`` and ``chromium-driver``; :func:`serve` serves a
build's directory on 127.0.0.1 (no network needed); :func:`chrome` opens a headless window of a
given width through selenium.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import shutil
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Optional

#: What to install when the browser is missing.
MISSING = ("needs the Debian packages 'chromium' and 'chromium-driver' "
           "(apt-get install chromium chromium-driver)")


def find_browser() -> Optional[tuple[str, str]]:
    """``(chromium, chromedriver)`` paths, or ``None`` when either (or selenium) is missing."""
    chrome = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    try:
        import selenium  # noqa: F401
    except ImportError:  # pragma: no cover - selenium is in the lock file
        return None
    return (chrome, driver) if chrome and driver else None


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


@contextlib.contextmanager
def serve(directory: Path) -> Iterator[str]:
    """Serve ``directory`` on 127.0.0.1 (a free port) while the block runs; yields its base URL."""
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def chrome(width: int, *, browser: Optional[tuple[str, str]] = None,
           extra_args: Sequence[str] = (), browser_log: bool = False,
           script_timeout: float = 30.0) -> Any:
    """A headless Chromium window ``width`` CSS px wide (900 high), through selenium.

    ``extra_args`` are added to the command line (``--hide-scrollbars``); ``browser_log`` keeps
    the console messages for ``get_log("browser")``. The caller quits it.
    """
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    found = browser or find_browser()
    if found is None:
        raise RuntimeError(MISSING)
    binary, driver = found
    opts = webdriver.ChromeOptions()
    opts.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={width},900", *extra_args):
        opts.add_argument(arg)
    if browser_log:
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(service=Service(driver), options=opts)
    drv.set_script_timeout(script_timeout)
    return drv


#: An async script that returns once MathJax has typeset the page (at once if it has no math):
#: ``"ok"``, ``"error: ..."`` when typesetting failed, or a sentence when MathJax did not load
#: within 20 s.
WAIT_MATHJAX = r"""
const done = arguments[arguments.length - 1];
if (!document.querySelector('.math')) { done('ok'); return; }   // a page without math
const start = Date.now();
(function wait() {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    MathJax.startup.promise.then(() => done('ok')).catch(e => done('error: ' + e));
  } else if (Date.now() - start > 20000) {
    done('did not load within 20 s');
  } else {
    setTimeout(wait, 50);
  }
})();
"""
