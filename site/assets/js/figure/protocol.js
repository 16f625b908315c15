// The messages between the page and the worker, and Python's errors, as protocol.json declares
// them (written once, in the site's Python package: headspace_site/protocol.json, which Hugo
// mounts beside this file). The page checks every message it sends and receives against it, and
// the worker every one it sends; a message that does not match is a bug, said on the console
// (which fails the browser tests).

import SPEC from "./protocol.json" with { type: "json" };

export { SPEC };
/** Every kind of error, as protocol.json lists them. */
export const KINDS = Object.keys(SPEC.errors);

/** Why ``message`` does not match ``fields`` (a name ending in "?" may be missing), or "". */
function mismatch(fields, message) {
  const required = fields.filter((f) => !f.endsWith("?"));
  const allowed = new Set([...required, ...fields.filter((f) => f.endsWith("?")).map((f) => f.slice(0, -1))]);
  const missing = required.filter((f) => !(f in message));
  const extra = Object.keys(message).filter((f) => !allowed.has(f));
  return [missing.length ? `missing ${missing.join(", ")}` : "", extra.length ? `unexpected ${extra.join(", ")}` : ""].filter(Boolean).join("; ");
}

/** Why ``message`` is not a message of ``direction`` ("page_to_worker" or "worker_to_page"), or "". */
export function problem(direction, message) {
  const spec = SPEC[direction][message && message.type];
  if (!spec) return `${direction}: no message of type ${JSON.stringify(message && message.type)}`;
  const { type, ...fields } = message;
  const why = mismatch(spec.fields, fields) || (type === "error" ? errorProblem(message) : "");
  return why ? `${direction} ${type}: ${why}` : "";
}

function errorProblem({ id, error }) {
  const spec = error && SPEC.errors[error.kind];
  if (!spec) return `no error of kind ${JSON.stringify(error && error.kind)}; its kinds are ${KINDS.join(", ")}`;
  if (id === undefined && !spec.fatal) return `an error of kind ${error.kind} without id`;
  const { kind, ...fields } = error;
  return mismatch(spec.fields, fields);
}

/** ``message``, said on the console if it does not match protocol.json. */
export function checked(direction, message) {
  const why = problem(direction, message);
  if (why) console.error(`protocol.json: ${why}`);
  return message;
}

/** An error of ``kind`` with its ``fields``: {kind, ...fields}. */
export const error = (kind, fields) => ({ kind, ...fields });
/** Whether an error of this kind leaves nothing to answer the page (the boot failed). */
export const fatal = (err) => Boolean(SPEC.errors[err.kind]?.fatal);
