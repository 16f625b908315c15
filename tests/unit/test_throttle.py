"""sitebuild.throttle: the emulated phone link the phone bench and the throttled browser tests use.
Timings are measured with wide tolerances (a shared 2-core machine) on transfers of a few tenths
of a second."""

from __future__ import annotations

import threading
import time
import urllib.request

import pytest

from sitebuild.throttle import PROFILES, Profile, profile, serve

RATE = 1_000_000  # bytes a second
RTT = 0.05


@pytest.fixture
def site(tmp_path):
    (tmp_path / "index.html").write_text("<p>index</p>")
    (tmp_path / "a.bin").write_bytes(bytes(200_000))
    (tmp_path / "b.bin").write_bytes(bytes(100_000))
    (tmp_path / "c.bin").write_bytes(bytes(100_000))
    (tmp_path / "page.js").write_text("const x = 1;\n" * 20_000)  # 260 kB of very compressible text
    return tmp_path


@pytest.fixture
def server(site):
    s = serve(Profile("test", RATE, RTT), directory=site)
    yield s
    s.shutdown()


def fetch(url: str, headers=None) -> tuple[bytes, float, float]:
    """(body, seconds to the first byte, seconds to the last)."""
    t0 = time.perf_counter()
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {})) as r:
        first = r.read(1)
        t1 = time.perf_counter()
        body = first + r.read()
    return body, t1 - t0, time.perf_counter() - t0


def test_a_lone_transfer_gets_the_rate_after_one_round_trip(server):
    body, first, last = fetch(server.url + "/a.bin")
    assert len(body) == 200_000
    assert RTT <= first < RTT + 0.1
    rate = 200_000 / (last - RTT)
    assert 0.7 * RATE < rate < 1.1 * RATE, f"{rate:.0f} B/s through a {RATE} B/s link"
    assert server.traffic.total() == {"sent": 200_000, "raw": 200_000, "responses": 1}


def test_concurrent_transfers_share_one_link_fairly(server):
    done = {}

    def get(name):
        done[name] = fetch(server.url + f"/{name}.bin")[2]
    threads = [threading.Thread(target=get, args=(n,)) for n in "bc"]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    total = time.perf_counter() - t0
    # 200 kB over one 1 MB/s link: 0.2 s after the round trip, not 0.1 s as with a link each
    assert 0.2 * 0.85 < total - RTT < 0.2 * 2, total
    # fair: two equal transfers started together end together (each at half the rate throughout)
    assert abs(done["b"] - done["c"]) < 0.1, done


def test_text_is_gzipped_and_counted_raw_and_as_sent(server):
    body, _, _ = fetch(server.url + "/page.js", {"Accept-Encoding": "gzip"})
    total = server.traffic.total()
    assert total["raw"] == 260_000 and total["sent"] == len(body) < 10_000
    assert server.traffic.by_path() == {"/page.js": {"sent": len(body), "raw": 260_000}}


def test_bytes_before_a_moment(server):
    t0 = time.time()
    fetch(server.url + "/a.bin")
    # half way through the body as the server sent it (its own clock: a busy machine may start late)
    first, last = server.traffic.slices[0][0], server.traffic.slices[-1][0]
    half = server.traffic.before((first + last) / 2)["sent"]
    assert 0 < half < 200_000, half
    assert server.traffic.before(t0) == {"sent": 0, "raw": 0}
    assert server.traffic.before(first) == {"sent": 0, "raw": 0}  # strictly before the first slice
    assert server.traffic.before()["sent"] == 200_000


def test_a_gzipped_body_half_sent_counts_half_its_raw_size(server):
    t0 = time.time()
    fetch(server.url + "/page.js", {"Accept-Encoding": "gzip"})
    (response,) = server.traffic.responses
    response.sent = response.size // 2  # as if the browser had gone away half way
    assert server.traffic.total()["raw"] == round(response.sent * 260_000 / response.size)  # about 130 kB
    assert server.traffic.before(t0 + 60)["raw"] == 260_000  # (the slices: all of it)


def test_profiles_are_lighthouses_and_devtools_numbers():
    assert PROFILES["slow4g"] == Profile("slow4g", 209_715, 0.15)  # 1.6 Mbps, Lighthouse's mobile default
    assert PROFILES["fast4g"] == Profile("fast4g", 1_179_648, 0.06)  # 9 Mbps
    assert profile("fast4g") is PROFILES["fast4g"]


@pytest.mark.parametrize("bad", ["3g", "Slow4G", ""])
def test_an_unknown_profile_is_named_with_the_choices(bad):
    with pytest.raises(ValueError, match=rf"unknown link profile '{bad}'; choose one of: slow4g, fast4g"):
        profile(bad)


def test_a_bad_profile_says_which_value():
    with pytest.raises(ValueError, match="rate must be a positive"):
        Profile("x", 0, 0.1)
    with pytest.raises(ValueError, match="rtt must be seconds"):
        Profile("x", 1000, -1)
