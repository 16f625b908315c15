// The runtime's files as the worker fetches them: compressed with xz at build time
// (scripts/sitebuild/xz.py says why), decoded here as their bytes arrive, by xz-decompress (a
// WebAssembly build of xz-embedded from npm, bundled into the worker: nothing is fetched to run it).
// Shared by the worker and the Node test that decodes the built files (tests/js/xz.test.mjs).

import * as xzDecompress from "xz-decompress";

// A CommonJS module that marks itself as compiled from ES modules: the bundler (esbuild) gives its
// exports as the namespace, Node as its default.
const { XzReadableStream } = xzDecompress.XzReadableStream ? xzDecompress : xzDecompress.default;

// xz-embedded's return codes (xz.h), for a readable error.
const CODES = { 2: "unsupported check", 3: "out of memory", 4: "dictionary over the decoder's limit",
  5: "not xz data", 6: "unsupported options", 7: "damaged data", 8: "truncated data" };

function readable(err) {
  const code = /error code (\d+)/.exec(String(err && err.message))?.[1];
  return new Error(code ? `its xz stream could not be decoded: ${CODES[code] || `xz-embedded error ${code}`}` : String(err && err.message || err));
}

/** The decoded bytes of the xz stream ``stream`` (a ReadableStream of Uint8Array), as a stream.
 * The decoder runs one stream at a time (its streams share one WebAssembly memory), so each input
 * is read into a queue as fast as it arrives: a download never waits for another one's decoding.
 * A damaged or truncated stream errors with a readable message. */
export function xzDecoded(stream) {
  const queued = stream.pipeThrough(new TransformStream(undefined, { highWaterMark: Infinity }));
  return new XzReadableStream(queued).pipeThrough(errorsReadable());
}

// Pass chunks through; an error from upstream arrives as the pipe's abort reason, rewritten.
function errorsReadable() {
  let controllerRef;
  return {
    writable: new WritableStream({
      write: (chunk) => controllerRef.enqueue(chunk),
      close: () => controllerRef.close(),
      abort: (reason) => controllerRef.error(readable(reason)),
    }),
    readable: new ReadableStream({ start: (c) => { controllerRef = c; } }),
  };
}

const hex = (buffer) => Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
/** The sha256 of ``bytes`` in hex, as the site lockfile writes it. */
export const sha256Hex = async (bytes) => hex(await crypto.subtle.digest("SHA-256", bytes));

async function collect(stream) {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** The decoded bytes of an xz ``response``, after checking the bytes fetched against ``xzSha256``
 * and the decoded bytes against ``sha256`` (hex, the site lockfile's). Decoding runs while the
 * file arrives; the checks run on the whole. Throws "... did not match its sha256 ..." or the
 * decoder's readable error. */
export async function xzChecked(response, { xzSha256, sha256 }) {
  const [forHash, forDecoder] = response.body.tee();
  const decoding = collect(xzDecoded(forDecoder));
  decoding.catch(() => {}); // a file that does not match its sha256 says so first
  const compressed = await collect(forHash);
  if (await sha256Hex(compressed) !== xzSha256) {
    throw new Error(`${response.url || "the file"} did not match its sha256 in pyodide-lock.json`);
  }
  const decoded = await decoding;
  if (sha256 && await sha256Hex(decoded) !== sha256) {
    throw new Error(`${response.url || "the file"} decoded to bytes that do not match their sha256 in pyodide-lock.json`);
  }
  return decoded;
}
