// A resolve hook: Hugo mounts protocol.json and figure/widths.json from the site's Python package
// into site/assets/js/figure/ (site/hugo.toml); under Node each is read where it lives.
import { fileURLToPath, pathToFileURL } from "node:url";

const PACKAGE = "../../site/py/src/headspace_site/";
const MOUNTED = Object.fromEntries(["protocol.json", "figure/widths.json"].map((path) => [
  path.split("/").pop(), pathToFileURL(fileURLToPath(new URL(PACKAGE + path, import.meta.url))).href]));

export async function resolve(specifier, context, next) {
  const name = specifier.split("/").pop();
  if (MOUNTED[name] && context.parentURL?.includes("/site/assets/js/")) {
    return { url: MOUNTED[name], format: "json", shortCircuit: true };
  }
  return next(specifier, context);
}
