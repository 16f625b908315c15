// Everything a figure knows, as one plain object, and the one function that changes it:
// reduce(state, event) -> {state, effects}. It is pure: it reads nothing but its arguments, and
// what is to be done (post to the worker, fetch a build answer, draw, wait for a frame or for the
// page to be idle) comes back as effects, which demos.js carries out; what the figure says
// (data-life, data-status, its error, note and line) is written from the state by status.js.
// Its lives (built, answered, asking, live, refused, failed) and events are drawn and tabled in
// docs/architecture.md; tests/js/reduce.test.mjs plays the races.

const NEXT = {
  built: { answer: "answered", back: "built", ask: "asking", ready: "live", drawn: "live", refuse: "refused", fail: "failed" },
  answered: { answer: "answered", back: "built", ask: "asking", ready: "asking", drawn: "live", refuse: "refused", fail: "failed" },
  asking: { answer: "answered", back: "built", ask: "asking", ready: "asking", drawn: "live", refuse: "refused", fail: "failed" },
  live: { ask: "live", ready: "live", drawn: "live", refuse: "refused", fail: "failed" },
  refused: { answer: "answered", back: "built", ask: "asking", ready: "refused", drawn: "live", refuse: "refused", fail: "failed" },
  failed: { answer: "failed", back: "failed", ask: "failed", ready: "failed", drawn: "failed", refuse: "failed", fail: "failed", revive: "built", retry: "asking" },
};
export const LIVES = Object.keys(NEXT);

/** How long a live move waits for Python's answer before the figure shows the nearest answer the
 * page has and says it is catching up: about what a reader still takes for "at once", and twice the
 * phone's 95th-percentile target for a move, so a move Python answers within the targets is drawn
 * once, in place (a stand-in costs two drawings, the second not in place), and a slow one is
 * answered within it. */
export const CATCH_UP_MS = 100;
/** How long a live move waits before the build's answer of its very setting, where the build made
 * one, is fetched to be drawn until Python's comes: a frame. It is the same answer (one engine), so
 * it needs no patience, only none wasted: a move Python answers within a frame fetches and draws
 * nothing more, and a slow one (a model or a seed not computed yet) is drawn a fetch later. */
export const EXACT_AFTER_MS = 16;
// A move of a drop-down or a tick box (``build.atOnce``) requests that answer with the call, and it
// is read and drawn after the same frame's wait if Python has not drawn it: such a move is where
// Python is slow (another model, mode or checkpoint to load and compute), and the request's trip
// then overlaps the frame's wait instead of following it. Only a click: a drag would request every
// value it passes; and only the request: reading it costs the page time Python's answer, when it
// comes within the frame, does not need (docs/decisions/0012).

/** The key of Python's answer for figure ``index`` at the settings ``paramsKey`` (their JSON), ``width`` px wide. */
export const answerKey = (index, paramsKey, width) => `${index}@${width}:${paramsKey}`;

/** A figure as the page arrives: the build's drawing of its starting settings (``startKey``, their JSON). */
export function initial({ index, name, startKey, answered = false }) {
  return {
    index, name, startKey, answered, // answered: the build answers its controls moved one at a time
    python: "off", // off, booting, live, failed, stalled (failed, and started again on a move or a reconnection)
    life: "built", error: null, note: "", // what it says: error {about, ...} is words for status.js
    // the request pipeline: at most one call in flight, the latest setting queued behind it
    lastKey: startKey, queued: null, inFlight: null, superseded: false, nextAnswer: null, frameBooked: false,
    // answers asked ahead: the control reached for, and the sweep of its values the worker has
    missed: false, aheadWanted: false, aheadSoon: false, ahead: null, reach: null,
    // a link to a state: its settings until Python has checked them, and those it refused
    link: null, linkProblems: null, linkApplied: false, linkText: {}, fromLink: false,
    // what is shown: start, answer, python or plotly; the settings and width of the answer shown
    showing: "start", shown: null, width: null, lastFigure: null, renderCount: 0, answerCount: 0,
    // Python live but slow for the latest setting: {key, exact} while the nearest answer the page has
    // stands in for it (exact: the build's answer for this very setting); the drawings it made
    catching: null, catchCount: 0,
  };
}

/** What data-status says (docs/contracts.md): static, loading, ready or error. */
export function dataStatus(s) {
  if (s.error || s.life === "refused" || s.life === "failed") return "error";
  if (s.life === "live") return "ready";
  return s.life === "asking" || s.python !== "off" ? "loading" : "static";
}

/** The state after ``event``, and the effects to carry out, in order. ``state`` is left as it was. */
export function reduce(state, event) {
  const s = { ...state }, effects = [];
  const on = EVENTS[event.type];
  if (!on) throw new Error(`figure: no event ${event.type}`);
  on(s, event, effects);
  return { state: s, effects };
}

// A change of life; ``error`` goes with it (a refusal, a failure), and any other change clears the
// last one, except in the lives that are about an error.
function advance(s, event, error) {
  const to = NEXT[s.life][event];
  if (!to) throw new Error(`figure life: no transition from ${s.life} on ${event}`);
  s.life = to;
  if (error) s.error = error;
  else if (to !== "refused" && to !== "failed") s.error = null;
}

// Python live, and its answer for the latest setting ``key`` not drawn yet (nor refused).
const waitingFor = (s, key) => s.python === "live" && s.lastKey === key && (s.life === "live" || s.life === "asking") &&
  (s.showing !== "python" || s.shown?.key !== key);

function post(s, fx, kind, params) {
  s.inFlight = kind;
  fx.push({ type: "post", kind, params });
}

function send(s, fx) {
  post(s, fx, "controls", s.queued);
  s.queued = null;
}

// Python's answer drawn; a link's settings drawn without the ones Python refused say which.
function render(s, fx, answer, shown, timing) {
  fx.push({ type: "draw", from: "python", ...answer, timing });
  Object.assign(s, { showing: "python", shown, width: shown.width, lastFigure: null, renderCount: s.renderCount + 1, catching: null });
  advance(s, "drawn");
  if (s.linkProblems) {
    advance(s, "refuse", { about: "top", problems: s.linkProblems, applied: s.linkApplied });
    s.linkProblems = null;
  }
  if (s.aheadWanted) reach(s, fx);
}

// An answer kept or asked ahead, drawn now; one that comes before the next frame waits for it (the
// latest wins), so a pointer faster than frames costs one drawing per frame.
function showKept(s, fx, json, shown) {
  if (s.frameBooked) return void (s.nextAnswer = { json, shown });
  render(s, fx, { json }, shown, { ahead: true });
  s.frameBooked = true;
  fx.push({ type: "frame" });
}

// The reader reaches for a control: its other values are asked for once the page is idle.
function reach(s, fx, control) {
  if (control) s.reach = control;
  if (s.aheadSoon) return;
  s.aheadSoon = true;
  fx.push({ type: "idle" });
}

const EVENTS = {
  /** A link to this figure in a state: ``params`` for Python to check, ``text`` as the link wrote them. */
  link(s, { params, text, problems = null }) {
    Object.assign(s, { link: params, linkText: text, linkApplied: Object.keys(params).length > 0, linkProblems: problems, fromLink: true });
    s.note = "Showing the default settings until Python has started; then this figure opens with the settings in the link.";
  },

  /** Python's boot starts again after a stall: the setting the controls hold (``params``, ``key``) waits for it. */
  retry(s, { params, key }) {
    if (s.python !== "stalled") return;
    s.python = "booting";
    if (key === s.startKey && s.showing === "start") return advance(s, "revive");
    Object.assign(s, { queued: params, lastKey: key });
    advance(s, "retry");
  },

  /** The reader's move to ``params`` (``key``: their JSON): ``kept`` Python's answer if the page has
   * one, ``build`` where the build's is ({url, name}; before Python is live, or while it computes
   * this setting); ``again``: the same setting, now answerable. */
  move(s, { params, key, width, kept = null, build = null, again = false }, fx) {
    s.link = s.linkProblems = null; // the reader's own move wins over a link still waiting for Python
    s.note = "";
    if (key === s.lastKey && !again) return; // a slider's "change" after its last "input": nothing new
    Object.assign(s, { lastKey: key, queued: params, nextAnswer: null });
    if (!again) fx.push({ type: "readouts" });
    if (s.python === "live") {
      if (kept) {
        s.queued = null;
        if (s.inFlight) s.superseded = true; // its answer is older than this one
        return showKept(s, fx, kept, { key, width });
      }
      s.missed = true; // a call: the values ahead are asked for again, nearest this one first
      if (s.life === "refused") advance(s, "ask");
      if (!s.inFlight) send(s, fx);
      // if Python has not drawn it a frame later, the build's answer of this very setting is fetched
      // (if it made one; a click's was requested now); CATCH_UP_MS later, the nearest answer stands in
      if (build?.atOnce) fx.push({ type: "request", url: build.url });
      fx.push({ type: "late", key, build });
      return;
    }
    // Before Python is live: the build's drawing for this setting, if it made one. The setting
    // stays queued, so Python draws it once it is live.
    if (key === s.startKey) {
      fx.push({ type: "draw", from: "start" });
      Object.assign(s, { showing: "start", answerCount: s.answerCount + 1 });
      advance(s, "back");
    } else if (build) fx.push({ type: "fetch", ...build, key });
    else advance(s, "ask");
    if (s.life !== "failed") fx.push({ type: "boot" });
    else if (s.python === "stalled") fx.push({ type: "retry" }); // the reader asks for Python again
  },

  /** The build's answer for the setting ``key`` came (``grid``: on the grid this page knows). */
  built(s, { key, answer, width, grid }, fx) {
    if (s.lastKey !== key || s.python === "live") return; // the reader moved on, or Python answers now
    if (!grid) return advance(s, "ask"); // another grid: a stale build
    fx.push({ type: "draw", from: "answer", answer });
    Object.assign(s, { showing: "answer", shown: { key, width }, answerCount: s.answerCount + 1 });
    advance(s, "answer");
  },
  /** The build's answer for ``key`` could not be fetched. */
  unbuilt: (s, { key }) => s.lastKey === key && advance(s, "ask"),

  /** The next frame has begun: the answer that waited for it is drawn. */
  frame(s, event, fx) {
    const next = s.nextAnswer;
    Object.assign(s, { frameBooked: false, nextAnswer: null });
    if (next) showKept(s, fx, next.json, next.shown);
  },

  /** Python's boot began. */
  booting: (s) => void (s.python === "off" && (s.python = "booting")),
  /** Python is live: a link is checked, a waiting setting sent, the control reached for asked ahead. */
  live(s, event, fx) {
    s.python = "live";
    if (s.link) { // stays "loading" until Python has checked the link
      post(s, fx, "link", s.link);
      s.link = null;
    } else {
      if (!(s.error && s.life === "built")) advance(s, "ready"); // (a plotly failure keeps its words)
      if (s.queued && !s.inFlight) send(s, fx);
    }
    reach(s, fx);
  },
  /** ``CATCH_UP_MS`` after a live move to ``key``: if Python has not drawn it yet, the page looks
   * for the nearest answer it has. */
  late(s, { key }, fx) {
    if (waitingFor(s, key)) fx.push({ type: "near", key });
  },
  /** ``EXACT_AFTER_MS`` after a live move to ``key``, which the build answered (``build``: {url,
   * name}): if Python has not drawn it yet, the build's answer is fetched (to stand in as exact). */
  lateExact(s, { key, build }, fx) {
    if (waitingFor(s, key)) fx.push({ type: "exact", ...build, key });
  },
  /** The nearest answer the page has for ``key`` (``answer``: an answer's drawing and outputs, or
   * null for the page's own drawing of its start), computed for the settings ``shown`` (their JSON;
   * ``exact``: the very setting); ``shown`` null: none nearer than what is shown. It stands in,
   * and the figure says it is catching up, until Python's answer for the latest setting is drawn. */
  nearAnswer(s, { key, shown = null, answer = null, exact = false, width }, fx) {
    if (!waitingFor(s, key)) return;
    s.catching = { key, exact };
    if (shown === null || (s.shown?.key === shown && s.showing !== "start") || (answer === null && s.showing === "start")) return;
    fx.push({ type: "draw", from: "near", answer });
    Object.assign(s, answer === null ? { showing: "start", shown: null } : { showing: "answer", shown: { key: shown, width } });
    s.catchCount += 1;
  },

  /** The runtime failed (its boot, or a crash later): nothing will answer, unless it is ``retryable``. */
  fail(s, { message, retryable = false }) {
    Object.assign(s, { python: retryable ? "stalled" : "failed", inFlight: null, queued: null, nextAnswer: null, link: null, note: "", catching: null });
    advance(s, "fail", { about: "figure", message: `${message} The figure shows the values computed when the page was built.` });
  },

  /** Python's reply (``data``) to a call of ``kind`` (controls, link); ``result``: a link's, parsed. */
  reply(s, { kind, params, width, data, result, timing }, fx) {
    s.inFlight = null;
    if (data.type === "result") fx.push({ type: "keep", key: answerKey(s.index, JSON.stringify(params), width), json: data.json });
    if (s.superseded) { // the reader moved on and that figure was drawn from an answer ahead
      s.superseded = false;
      if (s.queued) send(s, fx);
      else if (s.aheadWanted) reach(s, fx);
      return;
    }
    if (kind === "link") s.note = "";
    const error = data.error;
    if (data.type === "result") {
      // A link's settings go into the controls (Python's texts), which are read back (linked)
      if (kind === "link" && !s.queued) fx.push({ type: "controls", result, params, width });
      else if (kind === "controls") {
        if (s.queued) send(s, fx); // Python computes the next figure while this one is drawn
        const key = JSON.stringify(params);
        // An older setting's answer while a nearer one stands in for the latest: kept, not drawn
        // (it may be the nearest now: looked for again)
        if (s.catching && key !== s.lastKey) fx.push({ type: "near", key: s.lastKey });
        else render(s, fx, { json: data.json }, { key, width }, timing);
      }
    } else if (kind === "link" && error.kind === "parameter" && error.parameter in params && !s.queued) {
      // Leave the refused parameter out and ask again: every bad one is named, the good ones applied.
      const { [error.parameter]: refused, ...rest } = params;
      const raw = s.linkText[error.parameter] ?? JSON.stringify(refused);
      s.linkProblems = [...(s.linkProblems || []), { name: error.parameter, raw, message: error.message }];
      s.linkApplied = Object.keys(rest).length > 0;
      post(s, fx, "link", rest);
    } else if (kind === "link") {
      const problems = s.linkProblems;
      s.linkProblems = null;
      advance(s, "refuse", problems ? { about: "top", problems, applied: s.linkApplied } : { about: "top", linkError: error.message });
    } else {
      // A parameter Python refused (a mistyped token, say) is the reader's input, not a fault: the
      // message sits under its control until a setting is drawn. The figure shown stays (the last
      // good one, or the nearest answer that stood in), and no longer claims to be catching up.
      advance(s, "refuse", { about: error.kind === "parameter" ? error.parameter : "figure", refused: error });
      s.catching = null;
    }
    if (s.queued && !s.inFlight) send(s, fx);
  },

  /** A link's settings are in the controls, which hold ``params``: drawn if Python computed those
   * (``asked``), else asked for (a value between a slider's steps snapped to a step). */
  linked(s, { params, key, asked, result, width }, fx) {
    s.lastKey = key;
    if (key === asked) render(s, fx, { result }, { key, width }, {});
    else s.queued = params;
    if (s.queued && !s.inFlight) send(s, fx);
  },

  /** Python computed ``key`` ahead (``json``): a reader waiting there behind a call is drawn now. */
  aheadAnswer(s, { key, json, width }, fx) {
    const waiting = s.queued && JSON.stringify(s.queued);
    if (waiting && answerKey(s.index, waiting, width) === key) EVENTS.move(s, { params: s.queued, key: waiting, width, kept: json, again: true }, fx);
  },
  /** The reader reached for ``control`` (a pointer over the figure, focus, a move). */
  reach: (s, { control }, fx) => reach(s, fx, control),
  /** The page is idle: the values of the control reached for are asked for (if ``usable``: there and
   * enabled, and ``hasValues``); while a call is on its way, once the figure is drawn. Before Python
   * is live, the build's answers nearest its value are fetched instead. */
  idle(s, { usable, hasValues, params, width }, fx) {
    s.aheadSoon = false;
    if (usable && s.python !== "live") fx.push({ type: "prefetch", control: s.reach }); // the build's, nearest first
    if (!usable || s.python !== "live") return;
    s.aheadWanted = Boolean(s.inFlight || s.queued);
    if (s.aheadWanted) return;
    const sweep = `${s.reach}@${width}:${JSON.stringify({ ...params, [s.reach]: null })}`;
    if ((s.ahead === sweep && !s.missed) || !hasValues) return;
    Object.assign(s, { missed: false, ahead: sweep });
    fx.push({ type: "ahead", control: s.reach, width });
  },
  /** The worker's list of values ahead is another figure's now, or none. */
  aheadDropped: (s) => void (s.ahead = null),

  /** The column now takes drawings ``width`` px wide: Python's figure is laid out again. */
  resize(s, { width }, fx) {
    if (!["python", "plotly"].includes(s.showing) || width === s.width) return;
    if (s.renderCount > 0) {
      s.lastKey = null;
      fx.push({ type: "ask" }); // the current setting, again, as a move
    } else fx.push({ type: "plot", start: true });
  },
  /** plotly drew ``figure`` (for its hover values) at ``width``. */
  plotted: (s, { figure, width = s.width }) => Object.assign(s, { showing: "plotly", lastFigure: figure, width }),
  /** plotly could not be loaded: the figure says so, and still answers every move. */
  plotlyFailed(s, { message }) {
    s.error = { about: "figure", message: `${message} Values under the pointer are not shown; the controls still redraw the figure.` };
  },
};
