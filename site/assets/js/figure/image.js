// A figure as an image, as it is on screen now: the drawing shown (plotly's, or the build's SVG),
// in the page's colour scheme, on its background, with a caption under it: the figure's title and
// the link to its state. SVG as drawn; PNG at twice its size.

const NS = "http://www.w3.org/2000/svg";
const PAD = 12, TITLE_PX = 15, LINK_PX = 11;

/** The SVG text of ``fig`` now, captioned with ``title`` and ``link``. */
export function figureSVG(fig, title, link) {
  const plot = fig.querySelector('[data-role="plot"]');
  // plotly draws in layers of SVG, one over the other (the plot; legend, titles and notes; hover);
  // the build draws one SVG at each width, and the page shows the one that fits.
  const layers = [...plot.querySelectorAll("svg.main-svg")];
  if (!layers.length) layers.push([...plot.querySelectorAll("svg.static-figure")].find((s) => s.checkVisibility()));
  const drawing = layers[0];
  if (!drawing) throw new Error("this figure has no drawing to export yet");
  const css = getComputedStyle(document.documentElement);
  const color = (name) => css.getPropertyValue(name).trim();
  const box = drawing.getBoundingClientRect();
  const width = Math.round(Number(drawing.getAttribute("width")) || box.width);
  const height = Math.round(Number(drawing.getAttribute("height")) || box.height * (width / box.width));
  const lines = [...wrap(title, width - 2 * PAD, TITLE_PX).map((t) => [t, TITLE_PX, color("--fg"), 600]),
    ...wrap(link, width - 2 * PAD, LINK_PX, true).map((t) => [t, LINK_PX, color("--muted"), 400])];
  const total = height + PAD + lines.reduce((sum, [, px]) => sum + px * 1.4, 0) + PAD;

  const svg = el("svg", { xmlns: NS, width, height: Math.ceil(total), viewBox: `0 0 ${width} ${Math.ceil(total)}` });
  // The build's SVG takes its text colour from the page's stylesheet: the same rule, inside the image.
  svg.append(el("style", {}, `.static-figure { color: ${color("--fg")}; } .static-figure text { fill: ${color("--fg")}; }`));
  svg.append(el("rect", { width: "100%", height: "100%", fill: color("--panel") || color("--bg") }));
  for (const layer of layers) {
    const copy = layer.cloneNode(true);
    Object.entries({ x: 0, y: 0, width, height }).forEach(([k, v]) => copy.setAttribute(k, v));
    copy.removeAttribute("style"); // plotly's absolute position, the page's CSS size
    svg.append(copy);
  }
  let y = height + PAD;
  for (const [text, px, fill, weight] of lines) {
    y += px * 1.4;
    svg.append(el("text", { x: PAD, y: y - px * 0.35, fill, "font-size": px, "font-weight": weight,
      "font-family": "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif" }, text));
  }
  return new XMLSerializer().serializeToString(svg);
}

/** A PNG (Blob) of an SVG text, ``scale`` times its size. */
export function toPNG(svgText, scale = 2) {
  return new Promise((resolve, reject) => {
    // A data: address: the Content-Security-Policy lets images come from the site or data:, not blob:.
    const url = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svgText)}`;
    const image = new Image();
    image.onload = () => {
      const canvas = Object.assign(document.createElement("canvas"), { width: image.naturalWidth * scale, height: image.naturalHeight * scale });
      const context = canvas.getContext("2d");
      context.scale(scale, scale);
      context.drawImage(image, 0, 0);
      canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error("the PNG could not be written"))), "image/png");
    };
    image.onerror = () => reject(new Error("the SVG could not be drawn"));
    image.src = url;
  });
}

function el(name, attrs, text) {
  const node = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) if (k !== "xmlns") node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

// Lines of at most ``room`` px at ``px`` (about 0.55 em a character): by words, or anywhere (a link).
function wrap(text, room, px, anywhere = false) {
  const most = Math.max(10, Math.floor(room / (px * (anywhere ? 0.6 : 0.55))));
  if (anywhere) return text.match(new RegExp(`.{1,${most}}`, "g")) || [""];
  const lines = [];
  for (const word of text.split(/\s+/)) {
    const last = lines.length ? lines[lines.length - 1] : null;
    if (last !== null && `${last} ${word}`.length <= most) lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  return lines;
}
