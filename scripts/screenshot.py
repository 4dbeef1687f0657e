"""A PNG of an HTML report as a reader first sees it (Debian's Chromium through Playwright).

    .venv/bin/python scripts/screenshot.py rocm-audit-report.html report.png [--full-page] [--width 1366]
        [--at '#components'] [--click '#findings button.expand'] [--height 900]
"""
import argparse
import shutil
from pathlib import Path

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("png", type=Path)
    parser.add_argument("--full-page", action="store_true", help="the whole page, not the first screen")
    parser.add_argument("--width", type=int, default=1366)
    parser.add_argument("--height", type=int, default=900)
    parser.add_argument("--at", metavar="SELECTOR", help="scroll this element to the top first")
    parser.add_argument("--click", metavar="SELECTOR", help="click the first element matching this first")
    args = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("screenshot: Chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": args.width, "height": args.height})
        page.goto(args.report.resolve().as_uri())
        if args.click:
            page.locator(args.click).first.click()
        if args.at:
            page.locator(args.at).first.evaluate("e => e.scrollIntoView({block: 'start'})")
        page.screenshot(path=str(args.png), full_page=args.full_page)
        browser.close()
    print(args.png)


if __name__ == "__main__":
    main()
