"""Write one full-page PNG per page of the built book to ``_build/screenshots/``.

Usage: ``python scripts/screenshots.py [--width PX] [--html DIR] [--out DIR] [PAGE ...]`` after
``make book`` (default width 1280 px; ``make screenshots`` also writes a 400 px set). ``PAGE``
selects pages whose path contains it (``intro``, ``04_``); ``--html`` shoots another build, e.g.
an older version of the book for a before/after comparison. Serves ``_build/html`` on 127.0.0.1 and drives
headless Chromium (Debian packages ``chromium`` and ``chromium-driver``) through selenium,
waiting for MathJax before each capture.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from headless import MISSING, WAIT_MATHJAX, chrome, find_browser, serve

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
OUT = ROOT / "_build" / "screenshots"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=1280, help="viewport width in CSS px")
    parser.add_argument("--html", type=Path, default=HTML, help="the built book's HTML directory")
    parser.add_argument("--out", type=Path, default=OUT, help="where the PNGs go")
    parser.add_argument("pages", nargs="*", help="only pages whose path contains one of these")
    args = parser.parse_args(argv)
    browser = find_browser()
    if browser is None:
        print(MISSING, file=sys.stderr)
        return 1
    if not (args.html / "book" / "intro.html").exists():
        print(f"no book in {args.html}; run `make book` first", file=sys.stderr)
        return 1
    with serve(args.html) as base:
        drv = chrome(args.width, browser=browser, extra_args=("--hide-scrollbars",))
        try:
            _shoot(drv, base, args)
        finally:
            drv.quit()
    return 0


def _shoot(drv, base: str, args) -> None:
    """One PNG per selected page of the build served at ``base``."""
    from selenium.common.exceptions import TimeoutException

    width, html, out = args.width, args.html, args.out
    out.mkdir(parents=True, exist_ok=True)
    pages = sorted((html / "book").rglob("*.html")) + sorted((html / "notebooks").glob("*.html"))
    if args.pages:
        pages = [p for p in pages if any(sel in p.relative_to(html).as_posix() for sel in args.pages)]

    def wait_for_math(page):
        try:
            drv.execute_async_script(WAIT_MATHJAX)
        except TimeoutException:
            print(f"{page}: MathJax did not finish within 30 s; capturing the page as it is",
                  file=sys.stderr)

    def set_size(height):
        # Headless Chromium keeps windows at least 500 px wide: narrower widths are emulated.
        drv.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    for page in pages:
        rel = page.relative_to(html).as_posix()
        set_size(900)
        drv.get(f"{base}/{rel}")
        wait_for_math(rel)
        height = drv.execute_script("return document.documentElement.scrollHeight")
        set_size(min(int(height), 30000))
        wait_for_math(rel)
        name = page.relative_to(html / page.relative_to(html).parts[0]).with_suffix("").as_posix()
        target = out / f"{name.replace('/', '-')}-{width}px.png"
        drv.save_screenshot(str(target))
        print(target)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
