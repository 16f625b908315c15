// An embed page inside another site's iframe tells its host how tall it is (static/embed.js
// listens), so the frame fits the figure; a figure's status goes to the host too (status.js).

import { demos, framed } from "./page.js";

export function reportHeight() {
  if (!framed) return;
  const send = () => window.parent.postMessage({ type: "headspace:height",
    height: Math.ceil(document.body.getBoundingClientRect().height), demo: demos[0] && demos[0].dataset.demo }, "*");
  new ResizeObserver(send).observe(document.body);
  window.addEventListener("message", (e) => {
    if (e.source === window.parent && e.data && e.data.type === "headspace:hello") send();
  });
}
