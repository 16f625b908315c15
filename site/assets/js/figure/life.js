// A figure's life as one state machine: every change of what a figure shows goes through
// ``advance``, which knows the states, the events and the one next state of each (the diagram is
// in docs/architecture.md). The DOM follows: data-life names the state, and data-status keeps the
// contract of docs/contracts.md (static, loading, ready, error).
//
//   built     the build's drawing of the figure's starting settings (the page as it arrived)
//   answered  the build's drawing of the setting the reader moved to (an answer from the build)
//   asking    the reader's setting waits for Python (not started yet, or checking a new input after
//             a refusal); the last drawing stays
//   live      Python's figure of the current setting, drawn by the engine (plotly under a pointer)
//   refused   Python refused the reader's input; the last good drawing stays, with the reason
//   failed    the runtime failed (no wasm, a crash, a stalled download); answers from the build
//             are still drawn, nothing asks Python any more
//
// Events: "answer" (an answer from the build drawn), "back" (the starting settings again, before
// Python), "ask" (a setting that needs Python), "ready" (Python started: a figure showing its
// starting settings is live, since the build computed them with the same Python), "drawn" (a
// figure Python computed is on screen), "refuse", "fail".

export const STATES = ["built", "answered", "asking", "live", "refused", "failed"];

const NEXT = {
  built: { answer: "answered", back: "built", ask: "asking", ready: "live", drawn: "live", refuse: "refused", fail: "failed" },
  answered: { answer: "answered", back: "built", ask: "asking", ready: "asking", drawn: "live", refuse: "refused", fail: "failed" },
  asking: { answer: "answered", back: "built", ask: "asking", ready: "asking", drawn: "live", refuse: "refused", fail: "failed" },
  live: { ask: "live", ready: "live", drawn: "live", refuse: "refused", fail: "failed" },
  refused: { answer: "answered", back: "built", ask: "asking", ready: "refused", drawn: "live", refuse: "refused", fail: "failed" },
  failed: { answer: "failed", back: "failed", ask: "failed", ready: "failed", drawn: "failed", refuse: "failed", fail: "failed" },
};

/** The state after ``event`` in state ``life``; an event a state does not expect is a bug, said on the console. */
export function next(life, event) {
  const to = NEXT[life] && NEXT[life][event];
  if (!to) {
    console.error(`figure life: no transition from ${life} on ${event}`);
    return life;
  }
  return to;
}

/** What data-status says in each state (docs/contracts.md), given whether Python's boot is under way. */
export function status(life, booting) {
  if (life === "live") return "ready";
  if (life === "refused" || life === "failed") return "error";
  if (life === "asking") return "loading";
  return booting ? "loading" : "static";
}
