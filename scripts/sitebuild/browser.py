"""Debian's Chromium, launched the same way by the browser tests and by scripts/bench: headless,
no sandbox (root in a container), and none of the background networking a fresh profile starts.
Playwright drives it; it never downloads a browser of its own."""

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-default-apps", "--disable-extensions", "--metrics-recording-only",
                 "--no-default-browser-check"]
