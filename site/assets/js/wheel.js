// A wheel (a zip archive) written into Pyodide's files by the worker itself, instead of Pyodide's
// loadPackage: that one unpacks it in Python (importing zipfile and tarfile, inflating with the
// interpreter's wasm zlib), where the browser's own inflater (DecompressionStream) does it here
// in native code. The wheel's bytes are checked first (its sha256 against the site lockfile's) by
// the worker; this file reads a zip and installs it. Shared by the worker, the Pyodide tests
// (tests/pyodide/run_registry.mjs) and the standard library's measure (scripts/sitebuild/stdlib.mjs),
// so that all three install the wheels alike and import the same modules doing it.

const EOCD = 0x06054b50, CENTRAL = 0x02014b50, LOCAL = 0x04034b50;
const utf8 = new TextDecoder();

// Each entry of a zip: {name, method, size (compressed), offset (of its local header)}.
function entries(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let end = bytes.byteLength - 22; // the end-of-central-directory record: 22 bytes and a comment
  while (end >= 0 && view.getUint32(end, true) !== EOCD) end--;
  if (end < 0) throw new Error("not a zip archive (no central directory)");
  const count = view.getUint16(end + 10, true);
  let at = view.getUint32(end + 16, true);
  const list = [];
  for (let i = 0; i < count; i++) {
    if (view.getUint32(at, true) !== CENTRAL) throw new Error("a damaged zip archive (central directory)");
    const nameLength = view.getUint16(at + 28, true);
    list.push({
      method: view.getUint16(at + 10, true), size: view.getUint32(at + 20, true),
      offset: view.getUint32(at + 42, true), name: utf8.decode(bytes.subarray(at + 46, at + 46 + nameLength)),
    });
    at += 46 + nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
  }
  return list.map((entry) => {
    const o = entry.offset;
    if (view.getUint32(o, true) !== LOCAL) throw new Error(`a damaged zip archive (${entry.name})`);
    const start = o + 30 + view.getUint16(o + 26, true) + view.getUint16(o + 28, true);
    return { ...entry, data: bytes.subarray(start, start + entry.size) };
  });
}

function inflate(entry) {
  if (entry.method === 0) return Promise.resolve(entry.data);
  if (entry.method !== 8) throw new Error(`${entry.name}: zip compression method ${entry.method} is not supported`);
  const stream = new Blob([entry.data]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  return new Response(stream).arrayBuffer().then((buffer) => new Uint8Array(buffer));
}

// Write every file of the wheel `bytes` (a Uint8Array) under `dir` in `FS` (Emscripten's).
export async function unpackWheel(FS, bytes, dir) {
  const files = entries(bytes).filter((e) => !e.name.endsWith("/"));
  const contents = await Promise.all(files.map(inflate));
  const made = new Set();
  const libraries = [];
  files.forEach((file, i) => {
    const path = `${dir}/${file.name}`;
    const folder = path.slice(0, path.lastIndexOf("/"));
    if (!made.has(folder)) {
      FS.mkdirTree(folder);
      made.add(folder);
    }
    FS.writeFile(path, contents[i]);
    if (file.name.endsWith(".so")) libraries.push(path);
  });
  return libraries;
}

// The packages of the site lockfile, in the order they are installed (each after what it needs: numpy, the library, the site's Python).
export const WHEELS = ["numpy", "headspace", "headspace_site"];

/** Install a wheel (its bytes, already checked) as Pyodide's loadPackage does, minus the Python:
 * its files written into site-packages and its shared libraries linked, by Pyodide's own folder
 * and linker (pyodide._api, safe while Pyodide stays pinned at 0.27.7 by vendor.py). Run
 * FILES_ADDED once the last one is in. */
export async function installWheel(pyodide, bytes) {
  const libraries = await unpackWheel(pyodide.FS, bytes, pyodide._api.sitepackages);
  for (const library of libraries) await pyodide._api.loadDynlib(library, false, []);
}

// The wheels' files are new to Python's path finders (each caches its folder's listing). What
// importlib.invalidate_caches() does, without importing importlib.metadata (and with it email,
// calendar and more) only to clear that module's own caches, which nothing has made yet.
export const FILES_ADDED = `
import sys
for finder in list(sys.path_importer_cache.values()):
    if hasattr(finder, "invalidate_caches"):
        finder.invalidate_caches()
`;
