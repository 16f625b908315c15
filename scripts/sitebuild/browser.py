"""Debian's Chromium, launched the same way by the browser tests and by scripts/bench: headless,
no sandbox (root in a container), and none of the background networking a fresh profile starts.
Playwright drives it; it never downloads a browser of its own."""

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-default-apps", "--disable-extensions", "--metrics-recording-only",
                 "--no-default-browser-check"]

# A phone, as the phone bench (bench/phone.py) and the throttled browser tests emulate one (issue
# 32): the CSS viewport and pixel ratio of a 6.1-inch phone (iPhone 12 to 15), touch, and Chromium's
# CPU slowdown. The slowdown reaches the page's main thread only: Chromium refuses
# Emulation.setCPUThrottlingRate for a worker target ("Operation is only supported for pages, not
# workers"), and a page's slowdown leaves its dedicated and shared workers at full speed (measured:
# a busy loop 2-4x slower on the page, unchanged in both workers), so Python runs at this machine's
# speed. The network is throttled by the server instead (sitebuild.throttle).
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 3, "is_mobile": True, "has_touch": True}
PHONE_CPU_SLOWDOWN = 4


def phone_page(browser, cpu_slowdown: float = PHONE_CPU_SLOWDOWN, **context_options):
    """A page in a fresh context (empty caches; service workers blocked unless ``context_options``
    says otherwise) emulating a phone, its main thread ``cpu_slowdown`` times slower; returns
    (page, its CDP session). Close it with ``page.context.close()``."""
    context = browser.new_context(**{**PHONE, "service_workers": "block", **context_options})
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    if cpu_slowdown != 1:
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": cpu_slowdown})  # kept across navigations
    return page, cdp
