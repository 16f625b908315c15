/* headspace embed helper, for the page that hosts our figures.
 *
 * Optional: add it once to a page with one or more
 *   <iframe src="https://<this site>/embed/<figure>/" data-headspace></iframe>
 * and each such iframe takes the height of the figure it shows, and follows it
 * when the figure grows (a reader opens a menu) or the page narrows. Each embed
 * page reports its height with postMessage; this script only accepts a report
 * from the frame it sizes, sent by that frame's own origin. Plain ES5, no
 * dependencies: it runs on any blog (Ghost, WordPress, Hugo, Jekyll).
 */
(function () {
  "use strict";
  if (window.headspaceEmbed) return; // included twice: one listener is enough
  window.headspaceEmbed = { version: 1 };

  function frames() {
    return Array.prototype.slice.call(document.querySelectorAll("iframe[data-headspace]"));
  }

  function originOf(frame) {
    try {
      return new URL(frame.src, location.href).origin;
    } catch (e) {
      return null;
    }
  }

  window.addEventListener("message", function (event) {
    var data = event.data;
    if (!data || data.type !== "headspace:height") return;
    var list = frames();
    for (var i = 0; i < list.length; i++) {
      var frame = list[i];
      if (frame.contentWindow !== event.source || originOf(frame) !== event.origin) continue;
      var height = Math.ceil(Number(data.height));
      if (height > 0 && height < 20000) {
        frame.style.height = height + "px";
        frame.setAttribute("height", String(height));
      }
    }
  });

  // Frames that loaded before this script ran reported their height to no one: ask again.
  function hello() {
    frames().forEach(function (frame) {
      var origin = originOf(frame);
      if (frame.contentWindow && origin) frame.contentWindow.postMessage({ type: "headspace:hello" }, "*"); // the frame may still be blank
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", hello);
  else hello();
  window.addEventListener("load", hello);
})();
