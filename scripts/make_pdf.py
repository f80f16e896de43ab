"""Print the whole book to one PDF: ``_build/pdf/book.pdf``.

Usage: ``python scripts/make_pdf.py [--html DIR] [--out FILE]`` after a ``singlehtml`` build of
the book (``make pdf`` runs both). The single-page build holds every chapter in reading order;
headless Chromium (Debian packages ``chromium`` and ``chromium-driver``, driven through selenium)
opens it from a local server, waits until MathJax has typeset every formula, and prints it with
the book's print stylesheet (``_static/book.css``: no sidebars, buttons or folded code) on A4
pages numbered in the footer. Nothing is fetched from the network.
"""

from __future__ import annotations

import argparse
import base64
import functools
import http.server
import shutil
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "singlehtml"
OUT = ROOT / "_build" / "pdf" / "book.pdf"

WAIT_MATHJAX = """
const done = arguments[arguments.length - 1];
if (!document.querySelector('.math')) { done('ok'); return; }
(function wait() {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    MathJax.startup.promise.then(() => done('ok'), e => done('error: ' + e));
  } else { setTimeout(wait, 50); }
})();
"""

FOOTER = ('<div style="font-size:8px; width:100%; text-align:center; color:#555;">'
          '<span class="pageNumber"></span> / <span class="totalPages"></span></div>')


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, default=HTML, help="the singlehtml build's directory")
    parser.add_argument("--out", type=Path, default=OUT, help="the PDF to write")
    args = parser.parse_args(argv)
    page = args.html / "book" / "intro.html"
    chrome, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chrome and driver_path):
        print("needs the Debian packages chromium and chromium-driver", file=sys.stderr)
        return 1
    if not page.exists():
        print(f"no single-page book at {page}; run `make pdf` (it builds one first)",
              file=sys.stderr)
        return 1
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(args.html)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    opts = webdriver.ChromeOptions()
    opts.binary_location = chrome
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,900"):
        opts.add_argument(arg)
    drv = webdriver.Chrome(service=Service(driver_path), options=opts)
    # typesetting every formula of the book in one page takes minutes on two busy cores: the
    # script and the HTTP requests of the driver may take that long
    drv.set_script_timeout(1200)
    drv.command_executor.client_config.timeout = 1200
    # The single page is written to book/intro.html but links its styles, scripts and images
    # relative to the build's root: it is served from there under another name.
    printed = args.html / "_print.html"
    printed.write_text(page.read_text(encoding="utf-8"), encoding="utf-8")
    start = time.monotonic()
    try:
        drv.get(f"http://127.0.0.1:{server.server_address[1]}/{printed.name}")
        state = drv.execute_async_script(WAIT_MATHJAX)
        if state != "ok":
            print(f"MathJax: {state}", file=sys.stderr)
            return 1
        errors = drv.execute_script("return document.querySelectorAll('mjx-merror').length")
        if errors:
            print(f"MathJax could not typeset {errors} formulas", file=sys.stderr)
            return 1
        pdf = drv.execute_cdp_cmd("Page.printToPDF", {
            "paperWidth": 8.27, "paperHeight": 11.69,          # A4, inches
            "marginTop": 0.5, "marginBottom": 0.6, "marginLeft": 0.5, "marginRight": 0.5,
            # 80%: the column is then about 870 CSS px wide, as on a laptop screen
            "scale": 0.8,
            "printBackground": True, "preferCSSPageSize": False,
            "displayHeaderFooter": True, "headerTemplate": "<div></div>",
            "footerTemplate": FOOTER,
        })
    finally:
        drv.quit()
        server.shutdown()
        printed.unlink()
    data = base64.b64decode(pdf["data"])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(data)
    print(f"{args.out}: {len(data) / 1e6:.1f} MB in {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
