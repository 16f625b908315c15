// Node's runs of the page's modules (node --import ./tests/js/register.mjs --test tests/js): the
// files Hugo mounts beside them (site/hugo.toml) are found where they live.
import { register } from "node:module";

register("./mounts.mjs", import.meta.url);
