"""sitebuild.throttle: the emulated phone link the phone bench and the throttled browser tests use.
The link's schedule is tested with a clock of the test's own (``Link.reserve``); transfers through the
server are held only to lower bounds, which a shared 2-core machine's late threads cannot break."""

from __future__ import annotations

import threading
import time
import urllib.request

import pytest

from sitebuild.throttle import PROFILES, Link, Profile, profile, serve

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


def test_a_lone_transfer_is_never_faster_than_the_link(server):
    """Through the server: the body whole, its first byte after the round trip and its last no sooner than
    the link allows. (Only lower bounds: a busy machine's late threads make a transfer slower, never
    faster; the schedule that sets the rate is tested below with a clock of the test's own.)"""
    body, first, last = fetch(server.url + "/a.bin")
    assert len(body) == 200_000
    assert first >= RTT
    assert last >= RTT + 0.95 * (200_000 / RATE - Link(RATE).slack)  # (the first slot may start a slack early)
    assert server.traffic.total() == {"sent": 200_000, "raw": 200_000, "responses": 1}


def test_concurrent_transfers_share_one_link(server):
    """Two transfers at once both finish, and together take no less than one link needs for both (a link
    per connection would take half as long)."""
    done = {}

    def get(name):
        done[name] = fetch(server.url + f"/{name}.bin")
    threads = [threading.Thread(target=get, args=(n,)) for n in "bc"]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    total = time.perf_counter() - t0
    assert [len(done[n][0]) for n in "bc"] == [100_000, 100_000]
    assert total - RTT >= 0.95 * (200_000 / RATE - Link(RATE).slack), total


def slots(link, senders, rounds, late=None):
    """The link's schedule for ``senders`` that each ask for their next slice when their last one ends
    (plus ``late[name]`` seconds), all first asking at 0; {name: [(start, end), ...]}."""
    late = late or {}
    asks = {name: 0.0 for name in senders}
    out = {name: [] for name in senders}
    for _ in range(rounds):
        for name in sorted(senders, key=lambda n: asks[n]):   # who asks first is served first
            start, end = link.reserve(link.slice_bytes, asks[name])
            out[name].append((start, end))
            asks[name] = end + late.get(name, 0.0)
    return out


def test_a_timely_sender_gets_the_whole_rate():
    link = Link(RATE)
    (got,) = slots(link, ["a"], 20).values()
    assert all(b[0] == pytest.approx(a[1]) for a, b in zip(got, got[1:]))     # back to back
    assert got[-1][1] - got[0][0] == pytest.approx(20 * link.slice_bytes / RATE)


def test_two_senders_take_turns_and_end_together():
    link = Link(RATE)
    got = slots(link, ["b", "c"], 10)
    turns = sorted((s, name) for name in got for s, _ in got[name])
    assert [name for _, name in turns] == ["b", "c"] * 10                    # one slice each in turn
    assert abs(got["b"][-1][1] - got["c"][-1][1]) == pytest.approx(link.slice_bytes / RATE)
    assert max(e for name in got for _, e in got[name]) == pytest.approx(20 * link.slice_bytes / RATE)


def test_a_sender_back_late_within_the_slack_loses_no_link_time():
    """A thread woken 15 ms late (under the 20 ms slack) keeps its rate; 50 ms late, the link idles 30 ms."""
    for lateness, idle in ((0.015, 0.0), (0.05, 0.03)):
        link = Link(RATE, slack=0.02)
        (got,) = slots(link, ["a"], 5, late={"a": lateness}).values()
        gaps = [b[0] - a[1] for a, b in zip(got, got[1:])]
        assert gaps == pytest.approx([idle] * 4), (lateness, gaps)


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
