// figure/widths.js: the page's lookup of the width a figure is drawn at, from the one table
// (site/py/src/headspace_site/figure/widths.json). tests/unit/test_widths.py holds it against
// Python's drawing_width and the build's CSS for every plot box.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { WIDTHS, drawingWidth } from "../../site/assets/js/figure/widths.js";

const TABLE = JSON.parse(readFileSync(new URL("../../site/py/src/headspace_site/figure/widths.json", import.meta.url), "utf8"));

test("the widths are the table's, narrowest first", () => {
  assert.deepEqual(WIDTHS, [...TABLE.widths].sort((a, b) => a - b));
  assert.ok(WIDTHS.length >= 2);
});

test("a plot box draws at the widest width it holds, and a box narrower than all at the narrowest", () => {
  for (const [i, w] of WIDTHS.entries()) {
    assert.equal(drawingWidth(w), w, `a box exactly ${w} wide`);
    assert.equal(drawingWidth(w - 0.5), i ? WIDTHS[i - 1] : WIDTHS[0], `a box just under ${w}`);
  }
  assert.equal(drawingWidth(0), WIDTHS[0]);
  assert.equal(drawingWidth(1e6), WIDTHS.at(-1));
});

test("the page draws through this lookup, with no rule of its own", () => {
  const draw = readFileSync(new URL("../../site/assets/js/figure/draw.js", import.meta.url), "utf8");
  assert.match(draw, /from "\.\/widths\.js"/);
  assert.doesNotMatch(draw, /\b(330|600|840)\b/, "draw.js names a drawing width");
});
