// protocol.json is the one declaration of the messages between page and worker: every kind of
// message and error passes the check both ends run (figure/protocol.js), a wrong one fails it, and
// every message the page's and the worker's code build, and every error Python builds, is declared.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { KINDS, SPEC, checked, fatal, problem } from "../../site/assets/js/figure/protocol.js";

const read = (path) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

// A message of each declared type, its fields filled in (optional ones too).
const example = (spec) => Object.fromEntries(spec.fields.map((f) => [f.replace(/\?$/, ""), 1]));
const errorOf = (kind) => ({ kind, ...example(SPEC.errors[kind]) });

test("every message kind passes the check, in both directions", () => {
  for (const direction of ["page_to_worker", "worker_to_page"]) {
    for (const [type, spec] of Object.entries(SPEC[direction])) {
      const message = { type, ...example(spec) };
      if (type === "error") for (const kind of KINDS) assert.equal(problem(direction, { ...message, error: errorOf(kind) }), "", kind);
      else assert.equal(problem(direction, message), "", type);
    }
  }
});

test("optional fields may be left out, required ones may not", () => {
  assert.equal(problem("page_to_worker", { type: "call", id: 1, name: "polarizer", params: {}, width: 330 }), "");
  assert.match(problem("page_to_worker", { type: "call", id: 1, name: "polarizer", params: {} }), /missing width/);
  assert.match(problem("worker_to_page", { type: "ready", ms: 1, clients: 1, extra: 0 }), /unexpected extra/);
  assert.match(problem("worker_to_page", { type: "nonesuch" }), /no message of type "nonesuch"/);
});

test("an error carries a kind of the one enumeration and that kind's fields, never bare text", () => {
  const error = (e, ...id) => problem("worker_to_page", { type: "error", id: id.length ? id[0] : 3, error: e });
  assert.equal(error({ kind: "parameter", parameter: "theta", message: "θ must be ..." }), "");
  assert.match(error({ kind: "parameter", message: "θ must be ..." }), /missing parameter/);
  assert.match(error({ kind: "oops", message: "x" }), /no error of kind "oops"/);
  assert.match(problem("worker_to_page", { type: "error", id: 3, message: "text" }), /missing error/);
  // only a fatal kind (the boot failed) comes without the id of a call
  assert.equal(error({ kind: "boot", message: "Python could not start: x" }, undefined), "");
  assert.match(error({ kind: "python", message: "x" }, undefined), /without id/);
  assert.ok(fatal({ kind: "boot" }) && !fatal({ kind: "python" }));
});

test("a message that does not match is said on the console and passed on unchanged", (t) => {
  const said = t.mock.method(console, "error", () => {});
  const message = { type: "ahead", key: "0@330:{}" };
  assert.equal(checked("worker_to_page", message), message);
  assert.equal(said.mock.callCount(), 1);
  assert.match(said.mock.calls[0].arguments[0], /^protocol.json: worker_to_page ahead: missing json/);
});

test("every message the page and the worker post is declared", () => {
  const code = (source) => source.replace(/^\s*\/\/.*$|\s\/\/ .*$/gm, ""); // comments name messages too
  const posted = (source) => [...code(source).matchAll(/\{\s*type: "([\w-]+)"/g)].map((m) => m[1])
    .filter((type) => type !== "module"); // a Worker's own option ({type: "module"}), not a message
  const worker = posted(read("site/assets/js/worker.js"));
  const page = [...posted(read("site/assets/js/figure/python.js")), ...posted(read("site/assets/js/warm.js")),
    ...posted(read("site/assets/js/score-model.js"))];
  assert.ok(worker.length >= 6 && page.length >= 4);
  for (const type of worker) assert.ok(type in SPEC.worker_to_page, `worker.js posts ${type}`);
  for (const type of page) assert.ok(type in SPEC.page_to_worker, `the page posts ${type}`);
  for (const type of Object.keys(SPEC.worker_to_page)) assert.ok(worker.includes(type), `worker.js never posts ${type}`);
  for (const type of Object.keys(SPEC.page_to_worker)) assert.ok(page.includes(type), `the page never posts ${type}`);
});

test("every error kind is given by the end protocol.json says, and by no other", () => {
  const given = (source, pattern) => new Set([...source.matchAll(pattern)].map((m) => m[1]));
  const python = new Set(["site/py/src/headspace_site/runtime.py", "site/py/src/headspace_site/own_model.py"]
    .flatMap((path) => [...given(read(path), /protocol\.error\("([\w-]+)"/g)]));
  const worker = given(read("site/assets/js/worker.js"), /error\("([\w-]+)"/g);
  for (const [kind, spec] of Object.entries(SPEC.errors)) {
    assert.equal(python.has(kind), spec.from === "python", `${kind} from ${spec.from}`);
    assert.equal(worker.has(kind), spec.from === "worker" || kind === "python", `${kind} from ${spec.from}`);
  }
});

test("the Score-your-model page's messages: a checkpoint op with its files, its answer, its error", () => {
  assert.equal(problem("page_to_worker", { type: "checkpoint", id: 4, op: "open", args: { limitBytes: 1e9 }, files: [] }), "");
  assert.equal(problem("page_to_worker", { type: "checkpoint", id: 5, op: "step", args: { step: 0 } }), "");
  assert.match(problem("page_to_worker", { type: "checkpoint", id: 5, args: {} }), /missing op/);
  assert.equal(problem("worker_to_page", { type: "checkpoint", id: 5, json: "{}", pythonMs: 3 }), "");
  assert.match(problem("worker_to_page", { type: "checkpoint", id: 5, json: "{}" }), /missing pythonMs/);
  const refused = { type: "error", id: 4, error: { kind: "checkpoint", message: "not a safetensors file: ..." } };
  assert.equal(problem("worker_to_page", refused), "");
  assert.ok(!fatal(refused.error)); // the page keeps working
  assert.match(problem("worker_to_page", { ...refused, error: { kind: "checkpoint" } }), /missing message/);
});
