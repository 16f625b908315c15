// A figure's one state and its one transition function (site/assets/js/figure/reduce.js): the
// reducer is pure, so the races the browser tests can only chase (an older answer arriving while a
// newer request is in flight, a move during a draw, a link refused, the worker dying mid-move, a
// build answer arriving after Python went live) are played here event by event.
import { test } from "node:test";
import assert from "node:assert/strict";
import { CATCH_UP_MS, EXACT_AFTER_MS, LIVES, answerKey, dataStatus, initial, reduce } from "../../site/assets/js/figure/reduce.js";

const START = { theta: 30 };
const key = (params) => JSON.stringify(params);
const fresh = () => initial({ index: 0, name: "polarizer", startKey: key(START), answered: true });

/** Run ``events`` from ``state``: the last state, and every effect, in order. */
function run(state, ...events) {
  const effects = [];
  for (const event of events) {
    const before = structuredClone(state);
    const out = reduce(state, event);
    assert.deepEqual(state, before, `reduce changed the state it was given (${event.type})`);
    state = out.state;
    effects.push(...out.effects);
  }
  return { state, effects, types: effects.map((e) => e.type) };
}
const move = (params, extra = {}) => ({ type: "move", params, key: key(params), width: 330, ...extra });
const result = (json = '{"svg":"<svg/>"}') => ({ type: "result", json, pythonMs: 5 });
const reply = (params, data, kind = "controls") => ({ type: "reply", kind, params, width: 330, data, timing: {} });
const refusal = (parameter, message = "must be between 0 and 180") => ({ type: "error", error: { kind: "parameter", parameter, message } });
const live = () => run(fresh(), { type: "booting" }, { type: "live" }).state;

test("the state is one plain object: it survives a structured clone unchanged", () => {
  const s = fresh();
  assert.deepEqual(structuredClone(s), s);
  assert.equal(s.life, "built");
  assert.equal(dataStatus(s), "static");
  assert.deepEqual(LIVES, ["built", "answered", "asking", "live", "refused", "failed"]);
});

test("before Python: a move answered by the build is fetched, drawn, and boots Python", () => {
  const build = { url: "/answers/x/theta/3.json", name: "theta" };
  let { state, types } = run(fresh(), move({ theta: 60 }, { build }));
  assert.deepEqual(types, ["readouts", "fetch", "boot"]);
  assert.deepEqual(state.queued, { theta: 60 }); // Python draws it once it is live
  ({ state, types } = run(state, { type: "built", key: key({ theta: 60 }), answer: { svg: "<svg/>" }, width: 330, grid: true }));
  assert.deepEqual(types, ["draw"]);
  assert.equal(state.life, "answered");
  assert.equal(state.answerCount, 1);
  // back to the start: the page's own drawing, no fetch
  ({ state, types } = run(state, move(START)));
  assert.deepEqual(types, ["readouts", "draw", "boot"]);
  assert.equal(state.life, "built");
  assert.equal(state.answerCount, 2);
});

test("a setting the build did not answer waits for Python, and is sent once Python is live", () => {
  let { state } = run(fresh(), { type: "booting" }, move({ theta: 61 }));
  assert.equal(state.life, "asking");
  assert.equal(dataStatus(state), "loading");
  const out = run(state, { type: "live" });
  assert.deepEqual(out.effects.filter((e) => e.type === "post"), [{ type: "post", kind: "controls", params: { theta: 61 } }]);
  assert.equal(out.state.inFlight, "controls");
  ({ state } = run(out.state, reply({ theta: 61 }, result())));
  assert.equal(state.life, "live");
  assert.equal(dataStatus(state), "ready");
  assert.deepEqual(state.shown, { key: key({ theta: 61 }), width: 330 });
});

test("race: a build answer arriving after Python went live is not drawn", () => {
  const build = { url: "/answers/x/theta/3.json", name: "theta" };
  const { state } = run(fresh(), move({ theta: 60 }, { build }), { type: "live" },
    { type: "built", key: key({ theta: 60 }), answer: { svg: "<svg/>" }, width: 330, grid: true });
  assert.equal(state.answerCount, 0);
  assert.notEqual(state.showing, "answer");
  // nor one for a setting the reader has left
  const left = run(fresh(), move({ theta: 60 }, { build }), move({ theta: 90 }),
    { type: "built", key: key({ theta: 60 }), answer: { svg: "<svg/>" }, width: 330, grid: true });
  assert.equal(left.state.answerCount, 0);
  assert.equal(left.state.life, "asking");
});

test("race: moves while a call is in flight queue the latest only, sent when the answer comes", () => {
  const { state, effects } = run(live(), move({ theta: 40 }), move({ theta: 50 }), move({ theta: 60 }));
  assert.deepEqual(effects.filter((e) => e.type === "post").map((e) => e.params), [{ theta: 40 }]);
  assert.deepEqual(state.queued, { theta: 60 });
  const after = run(state, reply({ theta: 40 }, result()));
  // the next call goes before the older answer is drawn (Python computes while the page draws)
  assert.deepEqual(after.types, ["keep", "post", "draw"]);
  assert.deepEqual(after.effects[1].params, { theta: 60 });
  assert.equal(after.state.inFlight, "controls");
});

test("race: an older answer arriving while a newer setting was drawn from an answer ahead is kept, not drawn", () => {
  let { state } = run(live(), move({ theta: 40 })); // a call in flight
  const kept = '{"svg":"<svg id=ahead/>"}';
  let out = run(state, move({ theta: 41 }, { kept })); // drawn at once from an answer asked ahead
  assert.deepEqual(out.types, ["readouts", "draw", "frame"]);
  assert.equal(out.state.superseded, true);
  out = run(out.state, reply({ theta: 40 }, result()));
  assert.deepEqual(out.types, ["keep"]); // the late answer is kept for later, never drawn over the newer one
  assert.deepEqual(out.state.shown, { key: key({ theta: 41 }), width: 330 });
  assert.equal(out.state.inFlight, null);
  assert.equal(out.state.superseded, false);
});

test("race: a move during a draw waits for the next frame, and only the latest is drawn", () => {
  const a = '{"svg":"a"}', b = '{"svg":"b"}', c = '{"svg":"c"}';
  let out = run(live(), move({ theta: 41 }, { kept: a }), move({ theta: 42 }, { kept: b }), move({ theta: 43 }, { kept: c }));
  assert.deepEqual(out.effects.filter((e) => e.type === "draw").map((e) => e.json), [a]);
  assert.deepEqual(out.state.nextAnswer, { json: c, shown: { key: key({ theta: 43 }), width: 330 } });
  out = run(out.state, { type: "frame" });
  assert.deepEqual(out.effects.filter((e) => e.type === "draw").map((e) => e.json), [c]);
  assert.equal(out.state.renderCount, 2);
  out = run(out.state, { type: "frame" });
  assert.deepEqual(out.types, []);
  assert.equal(out.state.frameBooked, false);
});

test("an answer ahead for the setting waiting behind a call draws it at once", () => {
  const { state } = run(live(), move({ theta: 40 }), move({ theta: 50 }));
  const k = answerKey(0, key({ theta: 50 }), 330);
  const out = run(state, { type: "aheadAnswer", key: k, json: '{"svg":"x"}', width: 330 });
  assert.deepEqual(out.types, ["draw", "frame"]);
  assert.equal(out.state.queued, null);
  assert.equal(out.state.superseded, true);
  // an answer for another setting changes nothing
  assert.deepEqual(run(state, { type: "aheadAnswer", key: answerKey(0, key({ theta: 70 }), 330), json: "{}", width: 330 }).state, state);
});

test("a refused input says why under its control; the next setting drawn clears it", () => {
  let { state } = run(live(), move({ theta: 999 }), reply({ theta: 999 }, refusal("theta")));
  assert.equal(state.life, "refused");
  assert.equal(dataStatus(state), "error");
  assert.equal(state.error.about, "theta");
  ({ state } = run(state, move({ theta: 45 })));
  assert.equal(state.life, "asking"); // being checked
  ({ state } = run(state, reply({ theta: 45 }, result())));
  assert.equal(state.life, "live");
  assert.equal(state.error, null);
});

test("race: a link with two bad settings is asked again without each, and names both at the top", () => {
  const link = { theta: 999, show_components: "maybe", phi: 10 };
  let out = run(fresh(), { type: "link", params: link, text: { theta: "999", show_components: "maybe", phi: "10" } });
  assert.match(out.state.note, /until Python has started/);
  out = run(out.state, { type: "booting" }, { type: "live" });
  assert.deepEqual(out.effects.find((e) => e.type === "post"), { type: "post", kind: "link", params: link });
  assert.equal(out.state.life, "built"); // loading until Python has checked the link
  out = run(out.state, reply(link, refusal("theta"), "link"));
  assert.deepEqual(out.effects, [{ type: "post", kind: "link", params: { show_components: "maybe", phi: 10 } }]);
  out = run(out.state, reply({ show_components: "maybe", phi: 10 }, refusal("show_components", "must be true or false"), "link"));
  assert.deepEqual(out.effects, [{ type: "post", kind: "link", params: { phi: 10 } }]);
  const controls = { phi: { text: "10" } };
  out = run(out.state, { ...reply({ phi: 10 }, result(), "link"), result: { controls, svg: "<svg/>" } });
  assert.deepEqual(out.types, ["keep", "controls"]); // the accepted settings go into the controls
  out = run(out.state, { type: "linked", params: { theta: 30, phi: 10 }, key: key({ theta: 30, phi: 10 }), asked: key({ phi: 10 }), result: { svg: "<svg/>" }, width: 330 });
  // the controls hold other values than Python computed (the defaults of the refused ones): asked again
  assert.deepEqual(out.effects, [{ type: "post", kind: "controls", params: { theta: 30, phi: 10 } }]);
  out = run(out.state, reply({ theta: 30, phi: 10 }, result()));
  assert.equal(out.state.life, "refused");
  assert.equal(out.state.error.about, "top");
  assert.deepEqual(out.state.error.problems.map((p) => [p.name, p.raw]), [["theta", "999"], ["show_components", "maybe"]]);
  assert.equal(out.state.error.applied, true);
  assert.equal(out.state.note, "");
});

test("race: a link refused whole (no parameter to leave out) says so, at its defaults", () => {
  let out = run(fresh(), { type: "link", params: { theta: 20 }, text: { theta: "20" } }, { type: "live" });
  out = run(out.state, reply({ theta: 20 }, { type: "error", error: { kind: "python", message: "boom" } }, "link"));
  assert.equal(out.state.life, "refused");
  assert.deepEqual(out.state.error, { about: "top", linkError: "boom" });
});

test("race: the reader's own move wins over a link still waiting for Python", () => {
  const { state, effects } = run(fresh(), { type: "link", params: { theta: 20 }, text: { theta: "20" } }, move({ theta: 61 }), { type: "live" });
  assert.equal(state.link, null);
  assert.equal(state.note, "");
  assert.deepEqual(effects.filter((e) => e.type === "post").map((e) => e.kind), ["controls"]);
});

test("race: the worker dying mid-move fails the figure; the build's answers are still drawn, nothing is sent", () => {
  let { state } = run(live(), move({ theta: 40 }), move({ theta: 50 }));
  ({ state } = run(state, { type: "fail", message: "The Python worker crashed: x." }));
  assert.equal(state.life, "failed");
  assert.equal(dataStatus(state), "error");
  assert.equal(state.inFlight, null);
  assert.equal(state.queued, null);
  assert.match(state.error.message, /crashed: x\. The figure shows the values computed when the page was built\./);
  const build = { url: "/answers/x/theta/3.json", name: "theta" };
  const out = run(state, move({ theta: 60 }, { build }), { type: "built", key: key({ theta: 60 }), answer: { svg: "s" }, width: 330, grid: true });
  assert.deepEqual(out.types, ["readouts", "fetch", "draw"]); // no boot, no post
  assert.equal(out.state.life, "failed");
  assert.ok(out.state.error);
});

test("values ahead are asked for when idle, not while a call is in flight, then once drawn", () => {
  let out = run(live(), { type: "reach", control: "theta" });
  assert.equal(out.state.aheadSoon, true);
  out = run(out.state, move({ theta: 40 }), { type: "idle", usable: true, hasValues: true, params: { theta: 40 }, width: 330 });
  assert.equal(out.state.aheadWanted, true); // a call in flight: asked again once drawn
  assert.ok(!out.types.includes("ahead"));
  out = run(out.state, reply({ theta: 40 }, result()));
  assert.ok(out.types.includes("idle"));
  out = run(out.state, { type: "idle", usable: true, hasValues: true, params: { theta: 40 }, width: 330 });
  assert.deepEqual(out.effects.at(-1), { type: "ahead", control: "theta", width: 330 });
  // the same sweep is not asked twice, unless a move missed it
  const again = run(out.state, { type: "reach", control: "theta" }, { type: "idle", usable: true, hasValues: true, params: { theta: 40 }, width: 330 });
  assert.ok(!again.types.includes("ahead"));
});

test("before Python, a control reached for has the build's nearest answers fetched; once live, Python's", () => {
  const idle = { type: "idle", usable: true, hasValues: true, params: START, width: 330 };
  let out = run(fresh(), { type: "reach", control: "theta" }, idle);
  assert.deepEqual(out.effects.at(-1), { type: "prefetch", control: "theta" });
  assert.ok(!out.types.includes("ahead"));
  out = run(fresh(), { type: "reach", control: "theta" }, { ...idle, usable: false }); // disabled: nothing
  assert.ok(!out.types.includes("prefetch"));
  out = run(live(), { type: "reach", control: "theta" }, idle);
  assert.ok(!out.types.includes("prefetch") && out.types.includes("ahead"));
});

test("a resize to another drawing width asks Python again for what it drew", () => {
  const { state } = run(live(), move({ theta: 40 }), reply({ theta: 40 }, result()));
  assert.deepEqual(run(state, { type: "resize", width: 330 }).types, []);
  const out = run(state, { type: "resize", width: 500 });
  assert.deepEqual(out.types, ["ask"]);
  assert.equal(out.state.lastKey, null);
});

test("a plotly failure is said without a change of life, and the next drawing clears it", () => {
  let { state } = run(live(), { type: "plotlyFailed", message: "The drawing library (plotly.js) could not be loaded." });
  assert.equal(state.life, "live");
  assert.equal(dataStatus(state), "error");
  ({ state } = run(state, move({ theta: 40 }), reply({ theta: 40 }, result())));
  assert.equal(state.error, null);
});

test("an event a life does not expect is refused loudly, and the state is left as it was", () => {
  const s = { ...live(), lastKey: null, python: "booting" }; // live, as no event leads: the start drawn again
  const before = structuredClone(s);
  assert.throws(() => reduce(s, move(START)), /no transition from live on back/);
  assert.deepEqual(s, before);
  assert.throws(() => reduce(s, { type: "nonesuch" }), /no event nonesuch/);
});

test("a stalled boot (offline, say) starts again on a reader's move, and the figure catches up", () => {
  let { state } = run(fresh(), { type: "booting" }, move({ theta: 61 }), { type: "fail", message: "You are offline.", retryable: true });
  assert.equal(state.python, "stalled");
  assert.equal(state.life, "failed");
  let out = run(state, move({ theta: 62 }));
  assert.deepEqual(out.types, ["readouts", "retry"]); // still failed until the boot starts again
  out = run(out.state, { type: "retry", params: { theta: 62 }, key: key({ theta: 62 }) });
  assert.equal(out.state.life, "asking");
  assert.equal(out.state.error, null);
  out = run(out.state, { type: "live" });
  assert.deepEqual(out.effects.find((e) => e.type === "post").params, { theta: 62 });
  out = run(out.state, reply({ theta: 62 }, result()));
  assert.equal(out.state.life, "live");
  // a figure at its start is "built" again, going live
  const start = run(fresh(), { type: "booting" }, { type: "fail", message: "x", retryable: true }, { type: "retry", params: START, key: key(START) });
  assert.equal(start.state.life, "built");
  assert.equal(dataStatus(start.state), "loading");
  // a failure that is not a stall (a crash) is never retried
  const crash = run(live(), { type: "fail", message: "The Python worker crashed." }, move({ theta: 62 }), { type: "retry", params: { theta: 62 }, key: key({ theta: 62 }) });
  assert.ok(!crash.types.includes("retry"));
  assert.equal(crash.state.life, "failed");
});

// ---------- catching up: a live move Python cannot answer within CATCH_UP_MS ----------
const near = (params, shown, extra = {}) => ({ type: "nearAnswer", key: key(params), width: 330, shown: key(shown), answer: { svg: `<svg id=${key(shown)}/>` }, ...extra });
const late = (params) => ({ type: "late", key: key(params) });

test("catching up: a slow move shows the nearest answer at once, says so, and Python's answer ends it", () => {
  let out = run(live(), move({ theta: 40 }));
  assert.deepEqual(out.types, ["readouts", "post", "late"]); // the timer of CATCH_UP_MS
  assert.ok(CATCH_UP_MS > 0 && CATCH_UP_MS <= 100); // what a reader still takes for "at once"
  out = run(out.state, late({ theta: 40 }));
  assert.deepEqual(out.effects, [{ type: "near", key: key({ theta: 40 }) }]); // the page looks for the nearest
  out = run(out.state, near({ theta: 40 }, { theta: 45 }));
  assert.deepEqual(out.effects, [{ type: "draw", from: "near", answer: { svg: `<svg id=${key({ theta: 45 })}/>` } }]);
  assert.deepEqual(out.state.catching, { key: key({ theta: 40 }), exact: false });
  assert.deepEqual(out.state.shown, { key: key({ theta: 45 }), width: 330 });
  assert.equal(out.state.catchCount, 1);
  assert.equal(out.state.renderCount, 0); // not Python's drawing of this setting
  assert.equal(out.state.inFlight, "controls"); // still asked
  assert.equal(dataStatus(out.state), "ready");
  out = run(out.state, reply({ theta: 40 }, result()));
  assert.deepEqual(out.types, ["keep", "draw"]);
  assert.equal(out.state.catching, null);
  assert.equal(out.state.renderCount, 1);
  assert.deepEqual(out.state.shown, { key: key({ theta: 40 }), width: 330 });
});

test("catching up: a move Python answers within CATCH_UP_MS is drawn once, and never says it", () => {
  const out = run(live(), move({ theta: 40 }), reply({ theta: 40 }, result()), late({ theta: 40 }));
  assert.deepEqual(out.types, ["readouts", "post", "late", "keep", "draw"]);
  assert.equal(out.state.catching, null);
  assert.equal(out.state.catchCount, 0);
  // nor does a stand-in found after Python's drawing (the page looked while the answer came)
  assert.deepEqual(run(out.state, near({ theta: 40 }, { theta: 45 })).types, []);
});

test("catching up: the build's answer of this very setting stands in as exact; the start as itself", () => {
  let out = run(live(), move({ theta: 60 }), late({ theta: 60 }), near({ theta: 60 }, { theta: 60 }, { exact: true }));
  assert.deepEqual(out.state.catching, { key: key({ theta: 60 }), exact: true });
  out = run(live(), move({ theta: 41 }), late({ theta: 41 }), near({ theta: 41 }, START, { answer: null }));
  assert.deepEqual(out.types.slice(-1), ["near"]); // the start is what is shown: nothing to draw
  assert.ok(out.state.catching);
  assert.equal(out.state.catchCount, 0);
  // none nearer than what is shown: the figure stays, and says it is catching up
  out = run(live(), move({ theta: 42 }), late({ theta: 42 }), { type: "nearAnswer", key: key({ theta: 42 }), width: 330 });
  assert.ok(out.state.catching);
  assert.ok(!out.types.includes("draw"));
});

test("catching up: the build's answer of the very setting is fetched a frame after the call, not CATCH_UP_MS", () => {
  const build = { url: "/answers/x/theta/4.json", name: "theta" };
  const lateExact = (params) => ({ type: "lateExact", key: key(params), build });
  assert.ok(EXACT_AFTER_MS > 0 && EXACT_AFTER_MS < CATCH_UP_MS);
  let out = run(live(), move({ theta: 60 }, { build }));
  assert.deepEqual(out.effects.slice(1), [{ type: "post", kind: "controls", params: { theta: 60 } },
    { type: "late", key: key({ theta: 60 }), build }]);
  out = run(out.state, lateExact({ theta: 60 })); // a frame later, Python has not drawn it
  assert.deepEqual(out.effects, [{ type: "exact", ...build, key: key({ theta: 60 }) }]);
  // it comes before Python's: drawn at once, said as the build's, and Python's answer ends it
  out = run(out.state, near({ theta: 60 }, { theta: 60 }, { exact: true }));
  assert.deepEqual(out.types, ["draw"]);
  assert.deepEqual(out.state.catching, { key: key({ theta: 60 }), exact: true });
  out = run(out.state, late({ theta: 60 })); // the timer finds it shown: nothing nearer to look for
  assert.deepEqual(out.types, ["near"]);
  assert.deepEqual(run(out.state, near({ theta: 60 }, { theta: 60 }, { exact: true })).types, []);
  out = run(out.state, reply({ theta: 60 }, result()));
  assert.deepEqual(out.types, ["keep", "draw"]);
  assert.equal(out.state.catching, null);
  // Python's came within the frame: nothing fetched; the build's, arriving after Python's, not drawn
  out = run(live(), move({ theta: 60 }, { build }), reply({ theta: 60 }, result()), lateExact({ theta: 60 }));
  assert.deepEqual(out.types.slice(-2), ["keep", "draw"]);
  out = run(live(), move({ theta: 60 }, { build }), lateExact({ theta: 60 }), reply({ theta: 60 }, result()),
    near({ theta: 60 }, { theta: 60 }, { exact: true }));
  assert.deepEqual(out.types.slice(-3), ["exact", "keep", "draw"]);
  assert.equal(out.state.catchCount, 0);
  // the reader moved on within the frame: nothing fetched for the setting left
  assert.deepEqual(run(live(), move({ theta: 60 }, { build }), move({ theta: 70 }), lateExact({ theta: 60 })).types.slice(-1), ["late"]);
  // an answer kept (asked ahead) is drawn at once: nothing fetched
  assert.ok(!run(live(), move({ theta: 60 }, { build, kept: '{"svg":"<svg/>"}' })).types.includes("exact"));
});

test("catching up: a click's move (a drop-down, a tick box) requests the build's answer with the call", () => {
  const build = { url: "/answers/x/model/1.json", name: "model", atOnce: true };
  const lateExact = (params) => ({ type: "lateExact", key: key(params), build });
  let out = run(live(), move({ theta: 60 }, { build }));
  assert.deepEqual(out.effects.slice(1), [{ type: "post", kind: "controls", params: { theta: 60 } },
    { type: "request", url: build.url }, { type: "late", key: key({ theta: 60 }), build }]);
  // read a frame later only if Python has not drawn it, as a slider's is fetched then
  assert.deepEqual(run(out.state, lateExact({ theta: 60 })).types, ["exact"]);
  assert.deepEqual(run(out.state, reply({ theta: 60 }, result()), lateExact({ theta: 60 })).types.slice(-2), ["keep", "draw"]);
  // a slider's move requests nothing ahead; nor a kept answer; before Python, the build's fetch as ever
  assert.ok(!run(live(), move({ theta: 60 }, { build: { ...build, atOnce: false } })).types.includes("request"));
  assert.ok(!run(live(), move({ theta: 60 }, { build, kept: '{"svg":"<svg/>"}' })).types.includes("request"));
  assert.deepEqual(run(initial({ index: 0, name: "x", startKey: key({ theta: 30 }), answered: true }), move({ theta: 60 }, { build })).types.slice(0, 2), ["readouts", "fetch"]);
});

test("catching up: a newer move supersedes it, is drawn without waiting for the older answer, which is kept not drawn", () => {
  const A = { theta: 40, seed: 5 }, B = { theta: 70, seed: 5 };
  let out = run(live(), move(A), late(A), near(A, { theta: 40, seed: 0 }));
  out = run(out.state, move(B)); // the reader moves on while Python computes A
  assert.deepEqual(out.types, ["readouts", "late"]); // queued behind A: nothing posted, nothing blocks
  assert.deepEqual(out.state.queued, B);
  out = run(out.state, late(A)); // A's timer: the reader has left A
  assert.deepEqual(out.types, []);
  out = run(out.state, late(B), near(B, { theta: 70, seed: 0 }));
  assert.deepEqual(out.types, ["near", "draw"]); // drawn while A is still in flight
  assert.equal(out.state.inFlight, "controls");
  assert.deepEqual(out.state.catching, { key: key(B), exact: false });
  assert.equal(out.state.catchCount, 2);
  assert.equal(out.state.renderCount, 0);
  // A's answer: kept, B sent, the nearest looked for again (A's answer may be nearer now); not drawn
  out = run(out.state, reply(A, result('{"svg":"A"}')));
  assert.deepEqual(out.effects, [{ type: "keep", key: answerKey(0, key(A), 330), json: '{"svg":"A"}' },
    { type: "post", kind: "controls", params: B }, { type: "near", key: key(B) }]);
  assert.equal(out.state.renderCount, 0);
  assert.ok(out.state.catching);
  // a stand-in for A arriving late (its fetch was slow) is not drawn over B's
  assert.deepEqual(run(out.state, near(A, A)).types, []);
  out = run(out.state, near(B, A)); // A's answer is as near as the last, and agrees on the seed
  assert.deepEqual(out.types, ["draw"]);
  out = run(out.state, reply(B, result('{"svg":"B"}')));
  assert.deepEqual(out.types, ["keep", "draw"]);
  assert.equal(out.state.catching, null);
  assert.deepEqual(out.state.shown, { key: key(B), width: 330 });
  assert.equal(out.state.renderCount, 1);
});

test("catching up: an error for the latest setting keeps the last good figure and stops saying it", () => {
  let out = run(live(), move({ theta: 40 }), reply({ theta: 40 }, result('{"svg":"good"}')));
  out = run(out.state, move({ theta: 999 }), late({ theta: 999 }), near({ theta: 999 }, { theta: 45 }));
  const shown = out.state.shown;
  out = run(out.state, reply({ theta: 999 }, refusal("theta")));
  assert.ok(!out.types.includes("draw")); // the figure on screen stays
  assert.deepEqual(out.state.shown, shown);
  assert.equal(out.state.catching, null);
  assert.equal(out.state.life, "refused");
  assert.equal(out.state.error.about, "theta");
  // Python failing while it catches up: the figure stays, and says why
  out = run(live(), move({ theta: 40 }), late({ theta: 40 }), near({ theta: 40 }, { theta: 45 }), { type: "fail", message: "The Python worker crashed." });
  assert.equal(out.state.catching, null);
  assert.equal(out.state.life, "failed");
  assert.deepEqual(out.state.shown, { key: key({ theta: 45 }), width: 330 });
});
