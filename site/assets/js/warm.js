// The head's script on every page with figures: sets an embed page's colour scheme (theme.js),
// skips off-screen prose while the page is parsed (prose-later.js), and starts Python's worker once
// the page is on screen and loaded (issue 13, 32).
//
// demos.js runs once its file has arrived and sends its page's boot once the page is parsed, which
// on a long article can be after the first paint; the interpreter's download and compile then take
// most of a second. This
// script, in the head, waits for the first paint as demos.js does (first-paint.js: started any
// earlier, the wasm compile held that frame back), then connects to the same SharedWorker and
// asks it to start booting ("warm"); demos.js connects when it runs, sends its page's "boot"
// (models, demo modules) and hears the boot's progress from the start. Where there is no
// SharedWorker, or the page runs a dedicated worker, under the browser's data saver, or if
// anything here fails, demos.js boots as it would without it.

import { worker, indexURL, lockFileURL } from "@params";
import { afterPageLoad } from "./first-paint.js";
import { applyTheme } from "./theme.js";
import { skipProseWhileLoading } from "./prose-later.js";

applyTheme();
skipProseWhileLoading();

const dataSaver = Boolean(navigator.connection && navigator.connection.saveData);
if (window.SharedWorker && !dataSaver && (window.HEADSPACE_WORKER || "shared") === "shared") afterPageLoad().then(() => {
  try {
    // The same address, type and name as demos.js's: one worker, one interpreter.
    const shared = new SharedWorker(worker, { type: "module", name: "headspace" });
    shared.onerror = (event) => event.preventDefault(); // demos.js reports what it sees
    shared.port.postMessage({
      type: "warm", indexURL: new URL(indexURL, location.href).href, lockFileURL: new URL(lockFileURL, location.href).href,
    });
  } catch (err) { /* refused (a frame with storage blocked, say): demos.js falls back */ }
});
