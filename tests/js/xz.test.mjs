// The runtime's xz files (scripts/sitebuild/xz.py) decode, with the worker's decoder (xz.js), to
// the archives and wasm they stand for, byte for byte; a damaged or mismatched one fails readably.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { xzChecked, xzDecoded } from "../../site/assets/js/xz.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const STATIC = join(ROOT, "site", "static");
const CONTRACT = join(ROOT, "site", "data", "contract.json");
const built = existsSync(CONTRACT) && JSON.parse(readFileSync(CONTRACT, "utf8"));
const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");
const response = (bytes) => new Response(new Blob([bytes]).stream());

// Every file the worker fetches as xz: [xz path, the file it decodes to, their lockfile entry].
function runtimeFiles() {
  const lockPath = join(STATIC, built.lockfile);
  const lock = JSON.parse(readFileSync(lockPath, "utf8"));
  const index = join(STATIC, built.pyodide_dir);
  const files = Object.values(lock.packages).map((p) => [join(index, p.xz.file_name), join(index, p.file_name), p]);
  files.push([join(dirname(lockPath), lock.stdlib.xz.file_name), join(dirname(lockPath), lock.stdlib.file_name), lock.stdlib]);
  return files;
}

test("each runtime .xz file decodes to the file it stands for, whose sha256 the lockfile pins", { skip: !built && "no build" }, async () => {
  for (const [xzPath, original, entry] of runtimeFiles()) {
    const xz = readFileSync(xzPath);
    const expected = readFileSync(original);
    assert.equal(sha256(xz), entry.xz.sha256, xzPath);
    assert.equal(sha256(expected), entry.sha256, original);
    const decoded = await xzChecked(response(xz), { xzSha256: entry.xz.sha256, sha256: entry.sha256 });
    assert.equal(sha256(decoded), sha256(expected), xzPath);
  }
});

test("a damaged, truncated or foreign .xz file fails with a readable message", { skip: !built && "no build" }, async () => {
  const [xzPath, , entry] = runtimeFiles().find(([, , e]) => e && e.file_name.endsWith("python_stdlib.zip"));
  const good = readFileSync(xzPath);
  const damaged = new Uint8Array(good);
  damaged[Math.floor(good.length / 2)] ^= 0xff;
  const decode = (bytes) => new Response(xzDecoded(new Blob([bytes]).stream())).arrayBuffer();
  await assert.rejects(decode(damaged), /its xz stream could not be decoded: damaged data/);
  await assert.rejects(decode(good.subarray(0, good.length >> 1)), /its xz stream could not be decoded: truncated data/);
  await assert.rejects(decode(new TextEncoder().encode("PK\x03\x04 not xz at all")), /its xz stream could not be decoded: not xz data/);
  // Through the worker's check, a file that is not the one the lockfile pins says so first.
  await assert.rejects(xzChecked(response(damaged), { xzSha256: entry.xz.sha256, sha256: entry.sha256 }),
    /did not match its sha256 in pyodide-lock\.json/);
  // and a good file decodes again after the failures (the decoder's one-at-a-time lock was released)
  assert.equal(sha256(await xzChecked(response(good), { xzSha256: entry.xz.sha256, sha256: entry.sha256 })), entry.sha256);
});
