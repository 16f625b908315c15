// A resolve hook: Hugo mounts protocol.json from the site's Python package into
// site/assets/js/figure/ (site/hugo.toml); under Node it is read where it lives.
import { fileURLToPath, pathToFileURL } from "node:url";

const PROTOCOL = pathToFileURL(fileURLToPath(new URL("../../site/py/src/headspace_site/protocol.json", import.meta.url))).href;

export async function resolve(specifier, context, next) {
  if (specifier.endsWith("/protocol.json") && context.parentURL?.includes("/site/assets/js/")) {
    return { url: PROTOCOL, format: "json", shortCircuit: true };
  }
  return next(specifier, context);
}
