// The width a figure is drawn at: the widest of the drawing widths that fits its plot box, else
// the narrowest. The widths are the one table's (site/py/src/headspace_site/figure/widths.json,
// mounted by Hugo), which Python lays figures out for and the build's CSS shows drawings by;
// headspace_site.figure.widths.drawing_width is the same lookup, and tests/unit/test_widths.py
// checks the two give the same width for every plot box.
import TABLE from "./widths.json" with { type: "json" };

export const WIDTHS = Object.freeze([...TABLE.widths].sort((a, b) => a - b));

/** The width to draw at in a plot box ``room`` px wide. */
export function drawingWidth(room) {
  return WIDTHS.filter((w) => w <= room).pop() ?? WIDTHS[0];
}
