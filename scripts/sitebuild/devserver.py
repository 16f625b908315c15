"""Serve site/public on localhost with the headers netlify.toml declares.

Tests, benchmarks and scripts/serve all use it, so the CSP, the wasm MIME
type and the caching rules they see are the ones the deploy sends.

    python -m sitebuild.devserver --port 1313
"""

from __future__ import annotations

import argparse
import collections
import fnmatch
import functools
import gzip
import http.server
import io
import sys
import threading
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PUBLIC = ROOT / "site" / "public"


def header_rules(path: Path = ROOT / "netlify.toml", public: Path = PUBLIC) -> list[tuple[str, dict]]:
    """[(glob, headers)]: netlify.toml's rules in file order, then the built site's _headers file
    (Netlify reads both); later matching rules override earlier ones."""
    rules = [(rule["for"], rule["values"]) for rule in tomllib.loads(path.read_text()).get("headers", [])]
    headers_file = public / "_headers"
    return rules + (parse_headers_file(headers_file.read_text()) if headers_file.exists() else [])


def parse_headers_file(text: str) -> list[tuple[str, dict]]:
    r"""Netlify's _headers syntax: a path on its own line, then indented ``Name: value`` lines.

    >>> parse_headers_file("# c\n/a/*\n  X-A: 1\n  X-B: two: 2\n/b\n  X-A: 3\n")
    [('/a/*', {'X-A': '1', 'X-B': 'two: 2'}), ('/b', {'X-A': '3'})]
    """
    rules: list[tuple[str, dict]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            rules.append((line.strip(), {}))
        elif rules and ":" in line:
            name, value = line.strip().split(":", 1)
            rules[-1][1][name.strip()] = value.strip()
        else:
            raise ValueError(f"_headers line {number}: expected a path or an indented 'Name: value'; got {line!r}")
    return rules


# What the deploy's host compresses in transit: text, and wasm (docs/architecture.md gives the
# sizes); wheels, zips, npz and the runtime's .xz files are compressed already and go as they are. Only
# the benchmarks and the throttled tests turn it on (serve(compress=True)), to weigh pages as a
# reader receives them.
COMPRESSIBLE = (".html", ".css", ".js", ".mjs", ".json", ".svg", ".txt", ".xml", ".wasm")


@functools.lru_cache(maxsize=64)
def _gzipped(path: Path, mtime_ns: int) -> bytes:
    """A file's gzip body, made once per version of the file: compressing the wasm on every
    request would slow the server a benchmark measures."""
    return gzip.compress(path.read_bytes(), compresslevel=6, mtime=0)


class Handler(http.server.SimpleHTTPRequestHandler):
    rules: list = []
    compress = False
    bytes_served: collections.Counter = collections.Counter()  # url path -> body bytes (benchmarks)
    requested: collections.Counter = collections.Counter()  # url path -> requests, 304s included (tests)
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".wasm": "application/wasm", ".mjs": "text/javascript", ".js": "text/javascript",
                      ".whl": "application/octet-stream", ".json": "application/json",
                      ".xz": "application/x-xz"}  # the runtime's xz files: sent as they are, never gzipped

    def _merge_rules(self):
        url = self.path.split("?", 1)[0]
        merged = {}
        for pattern, values in self.rules:
            if fnmatch.fnmatch(url, pattern):
                merged.update(values)
        for key, value in merged.items():
            if key.lower() != "content-type":  # already sent from extensions_map (same values)
                self.send_header(key, value)

    def end_headers(self):
        self._merge_rules()
        super().end_headers()

    def send_head(self):
        """With ``compress``, send text files gzipped to clients that accept it, as the deploy's host
        does (a revalidation still gets its 304 from the base class)."""
        type(self).requested[self.path.split("?", 1)[0]] += 1
        path = Path(self.translate_path(self.path))
        if path.is_dir() and self.path.split("?", 1)[0].endswith("/"):
            path = path / "index.html"
        if not (self.compress and path.is_file() and path.name.endswith(COMPRESSIBLE)
                and "gzip" in self.headers.get("Accept-Encoding", "") and "If-Modified-Since" not in self.headers):
            return super().send_head()
        body = _gzipped(path, path.stat().st_mtime_ns)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Vary", "Accept-Encoding")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Last-Modified", self.date_time_string(int(path.stat().st_mtime)))
        self.end_headers()
        return io.BytesIO(body)

    def copyfile(self, source, outputfile):
        data = source.read()
        type(self).bytes_served[self.path.split("?", 1)[0]] += len(data)
        outputfile.write(data)

    def log_message(self, *args):  # quiet: tests print their own failures
        pass


class _Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        """A browser that drops a download it no longer needs (a test's page closed, a fetch
        cancelled) is no server error: only other exceptions print their traceback."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def serve(port: int = 0, directory: Path = PUBLIC, compress: bool = False,
          handler_base: type[Handler] = Handler, **attrs) -> http.server.ThreadingHTTPServer:
    """Start serving in a background thread; returns the server (``server.server_port``).
    ``compress`` gzips text files as the deploy's host does (benchmarks). ``handler_base`` (a
    subclass of Handler) and ``attrs`` (its class attributes for this server) let sitebuild.throttle
    serve the same files with the same headers through an emulated link."""
    if not (directory / "index.html").exists():
        raise SystemExit(f"{directory} has no index.html; run scripts/build first")
    handler = type("SiteHandler", (handler_base,),  # per server
                   {"rules": header_rules(public=directory), "compress": compress, **attrs})
    server = _Server(("127.0.0.1", port), functools.partial(handler, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=1313)
    args = parser.parse_args()
    server = serve(args.port)
    print(f"headspace is served at http://127.0.0.1:{server.server_port}/  (Ctrl-C stops)", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.shutdown()
        sys.exit(0)


if __name__ == "__main__":
    main()
