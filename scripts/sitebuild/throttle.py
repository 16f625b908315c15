"""Serve site/public through an emulated phone link: one downlink shared by every request, and a
round trip before each response's first byte.

Chromium's network emulation (DevTools throttling, CDP ``Network.emulateNetworkConditions``)
reaches a page's own requests but not those of the page's worker, which fetches Python's runtime
(most of a cold visit's bytes): a page throttled that way fetches the runtime at full speed. So the server
throttles, and everything the browser asks for (page, worker, service worker) shares one link.

What the link models:

- one downlink of ``rate`` bytes a second, shared by every response in flight and fair between
  them (processor sharing: the body is sent in slices of about 10 ms of link time, handed out in
  turn, so n active responses get ``rate / n`` each); an idle link saves nothing up (no burst);
- ``rtt`` seconds before each response's first byte (the request going up, the first byte coming
  down), as on one warm HTTP/2 connection, which is how the deploy's host serves the site.

What it leaves out: TCP and TLS handshakes, slow start, the uplink, loss. Chromium opens at most
six HTTP/1 connections to the server, so a seventh request waits for a free one (HTTP/2 would
not), which costs at most a round trip per queued request. The profiles are Lighthouse's mobile
throttling (slow 4G, Lighthouse's default: 1.6 Mbps, 150 ms) and DevTools' fast 4G (9 Mbps,
60 ms), a Mbps counted as Lighthouse counts it, 1024 x 1024 bits a second:

>>> PROFILES["slow4g"]
Profile(name='slow4g', rate=209715, rtt=0.15)
>>> profile("3g")
Traceback (most recent call last):
ValueError: unknown link profile '3g'; choose one of: slow4g, fast4g (or Profile(name, rate, rtt))

A server of a folder (site/public by default) whose text is gzipped as the deploy does, and what
it sent (``server.traffic``, each slice with its time, so "bytes before a moment" is a sum):

>>> import pathlib, tempfile, time, urllib.request
>>> site = pathlib.Path(tempfile.mkdtemp())
>>> _ = (site / "index.html").write_text("<p>hi</p>")
>>> _ = (site / "big.bin").write_bytes(bytes(100_000))
>>> server = serve(Profile("test", rate=1_000_000, rtt=0.05), directory=site)
>>> t0 = time.time()
>>> len(urllib.request.urlopen(server.url + "/big.bin").read())
100000
>>> 0.12 < time.time() - t0 < 3  # 0.05 s of round trip, then 0.1 s on the link (wide: a busy machine)
True
>>> server.traffic.total()
{'sent': 100000, 'raw': 100000, 'responses': 1}
>>> server.traffic.before(t0)
{'sent': 0, 'raw': 0}
>>> server.shutdown()

Run ``python -m sitebuild.throttle --profile slow4g`` to browse the built site as a phone would.
"""

from __future__ import annotations

import argparse
import dataclasses
import threading
import time
from pathlib import Path

from sitebuild import devserver


@dataclasses.dataclass(frozen=True)
class Profile:
    """A link: ``rate`` bytes a second down, shared; ``rtt`` seconds before each first byte."""

    name: str
    rate: int
    rtt: float

    def __post_init__(self):
        if not self.rate > 0:
            raise ValueError(f"Profile {self.name!r}: rate must be a positive number of bytes a second; got {self.rate!r}")
        if not self.rtt >= 0:
            raise ValueError(f"Profile {self.name!r}: rtt must be seconds >= 0; got {self.rtt!r}")


MBPS = 1024 * 1024 / 8  # bytes a second in one Mbps, as Lighthouse counts (throughputKbps * 1024)
PROFILES = {
    "slow4g": Profile("slow4g", round(1.6 * MBPS), 0.150),  # Lighthouse's mobile default
    "fast4g": Profile("fast4g", round(9 * MBPS), 0.060),  # DevTools' "Fast 4G"
}


def profile(spec: str | Profile) -> Profile:
    """A named profile (``slow4g``, ``fast4g``), or ``spec`` itself when it is a Profile."""
    if isinstance(spec, Profile):
        return spec
    if spec not in PROFILES:
        raise ValueError(f"unknown link profile {spec!r}; choose one of: {', '.join(PROFILES)} (or Profile(name, rate, rtt))")
    return PROFILES[spec]


class Link:
    """One downlink: ``send(n)`` returns once ``n`` bytes have crossed it.

    Each caller reserves the link for ``n / rate`` seconds after every reservation made before
    its own, then sleeps to the end of its slot: slices from concurrent responses take turns
    (first come, first served, and each response asks for its next slice only after its last
    one), so the link is shared fairly. A slot may start up to ``slack`` seconds in the past: a
    sender that comes back late for its next slice (a thread woken late, a socket write) loses no
    link time, which would otherwise lower the rate a lone transfer sees.
    """

    def __init__(self, rate: float, slack: float = 0.02):
        self.rate = rate
        self.slack = slack
        self._lock = threading.Lock()
        self._free_at = 0.0  # time.monotonic() when the last reserved slot ends

    @property
    def slice_bytes(self) -> int:
        """About 10 ms of the link (between 1 kB and 64 kB): the unit of sharing."""
        return int(min(65536, max(1024, self.rate / 100)))

    def reserve(self, n: int, now: float) -> tuple[float, float]:
        """The slot ``(start, end)`` of ``n`` bytes asked for at ``now`` (time.monotonic()): after every
        slot reserved before, or up to ``slack`` in the past. The schedule alone, no waiting (tested
        with a clock of the test's own: a busy machine's late threads cannot change it).

        >>> link = Link(1000, slack=0.02)
        >>> link.reserve(10, now=5.0), link.reserve(10, now=5.0)      # back to back: 10 ms each
        ((4.98, 4.99), (4.99, 5.0))
        """
        with self._lock:
            start = max(self._free_at, now - self.slack)
            self._free_at = end = start + n / self.rate
        return start, end

    def send(self, n: int) -> None:
        _, end = self.reserve(n, time.monotonic())
        delay = end - time.monotonic()
        if delay > 0:
            time.sleep(delay)


@dataclasses.dataclass
class Response:
    """One response: its path, when the request arrived, when its body began and ended
    (time.time(), seconds since the epoch, as a page's performance.timeOrigin), and its body's
    bytes as sent (gzipped for text) and raw (as the file is on disk)."""

    path: str
    requested: float
    first_byte: float | None = None
    end: float | None = None
    sent: int = 0
    raw: int = 0
    size: int = 0  # the body's bytes to send (gzipped for text); ``sent`` stops short of it if aborted
    aborted: bool = False  # the client closed the connection before the body's end


class Traffic:
    """What one server sent: every response, and every slice of a body with the time it was sent.

    Times are time.time() seconds, comparable with a page's ``performance.timeOrigin / 1000``."""

    def __init__(self):
        self._lock = threading.Lock()
        self.responses: list[Response] = []
        self.slices: list[tuple[float, Response, int]] = []  # (time, response, bytes sent)

    def clear(self) -> None:
        with self._lock:
            self.responses.clear()
            self.slices.clear()

    def _start(self, path: str) -> Response:
        response = Response(path, time.time())
        with self._lock:
            self.responses.append(response)
        return response

    def _sent(self, response: Response, n: int) -> None:
        now = time.time()
        with self._lock:
            response.first_byte = response.first_byte or now
            response.sent += n
            self.slices.append((now, response, n))

    def before(self, t: float | None = None) -> dict:
        """Bytes sent before time ``t`` (all of them for None): ``sent`` as they went over the link,
        ``raw`` as they would be uncompressed (a gzipped body's slices in proportion)."""
        with self._lock:
            chosen = [(r, n) for when, r, n in self.slices if t is None or when < t]
        return {"sent": sum(n for _, n in chosen),
                "raw": round(sum(n * r.raw / r.size for r, n in chosen if r.size))}

    def total(self) -> dict:
        """Bytes sent in all (``raw`` in proportion for a body cut short), and how many responses."""
        with self._lock:
            return {"sent": sum(r.sent for r in self.responses),
                    "raw": round(sum(r.sent * r.raw / r.size for r in self.responses if r.size)),
                    "responses": len(self.responses)}

    def by_path(self, t: float | None = None) -> dict[str, dict]:
        """{path: {"sent", "raw"}} for the bytes sent before ``t`` (all for None)."""
        out: dict[str, dict] = {}
        with self._lock:
            chosen = [(r, n) for when, r, n in self.slices if t is None or when < t]
        for r, n in chosen:
            entry = out.setdefault(r.path, {"sent": 0, "raw": 0})
            entry["sent"] += n
            entry["raw"] += n * r.raw / r.size
        return {path: {"sent": e["sent"], "raw": round(e["raw"])} for path, e in out.items()}


class ThrottledHandler(devserver.Handler):
    """devserver's handler (headers, gzip, counts), its responses sent through ``link``."""

    link: Link
    rtt: float = 0.0
    traffic: Traffic
    # Each slice is written as it crosses the link: Nagle's algorithm would hold a small write
    # back until the last one is acknowledged, and the body would arrive later than the link allows.
    disable_nagle_algorithm = True

    def send_head(self):
        self._response = self.traffic._start(self.path.split("?", 1)[0])
        self._gzipped = False
        if self.rtt:
            time.sleep(self.rtt)  # the request's trip up and the first byte's trip down
        return super().send_head()

    def send_header(self, keyword, value):
        if keyword.lower() == "content-encoding" and value == "gzip":
            self._gzipped = True
        super().send_header(keyword, value)

    def copyfile(self, source, outputfile):
        data = source.read()
        type(self).bytes_served[self.path.split("?", 1)[0]] += len(data)  # as devserver counts
        response = self._response
        # a gzip member ends with the uncompressed size (mod 2**32; our files are far smaller)
        response.raw = int.from_bytes(data[-4:], "little") if self._gzipped and len(data) >= 18 else len(data)
        response.size = len(data)
        step = self.link.slice_bytes
        for i in range(0, len(data), step):
            piece = data[i:i + step]
            self.link.send(len(piece))
            self.traffic._sent(response, len(piece))  # (counted first: a client that has it all sees it counted)
            try:
                outputfile.write(piece)
            except ConnectionError:  # the browser went away (a test or a visit ended mid-download)
                response.aborted = True
                self.close_connection = True
                return
        response.end = time.time()


def serve(link_profile: str | Profile, port: int = 0, directory: Path = devserver.PUBLIC,
          compress: bool = True):
    """Serve ``directory`` in a background thread through one link of ``link_profile``.

    Returns devserver's server with ``url`` (``http://127.0.0.1:<port>``), ``profile``, ``link``
    and ``traffic`` (a Traffic). ``compress`` (on by default here) gzips text and wasm as the
    deploy's host does; wheels, zips and models go as they are."""
    spec = profile(link_profile)
    link, traffic = Link(spec.rate), Traffic()
    server = devserver.serve(port, directory, compress, handler_base=ThrottledHandler,
                             link=link, rtt=spec.rtt, traffic=traffic)
    server.url = f"http://127.0.0.1:{server.server_port}"
    server.profile, server.link, server.traffic = spec, link, traffic
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=1314)
    parser.add_argument("--profile", default="slow4g", help=f"one of: {', '.join(PROFILES)}")
    args = parser.parse_args()
    server = serve(args.profile, args.port)
    p = server.profile
    print(f"headspace through {p.name} ({p.rate * 8 / 1e6:.2f} Mbit/s shared, {p.rtt * 1000:.0f} ms round trip)"
          f" at {server.url}/  (Ctrl-C stops)", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.shutdown()


if __name__ == "__main__":
    main()
