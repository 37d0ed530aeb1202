import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { blockHeader, hashHeader, slashHeader } from "../header.js";

/** Where the backend serves its API documentation's scripts and styles from (app/main.py mounts it). */
export const DOCS_STATIC_DIR = "app/static/docs";

/**
 * The files of Swagger UI and ReDoc that /docs and /redoc load, copied from the npm packages
 * Charter depends on (pinned exactly in package.json, so the same Charter writes the same bytes).
 * FastAPI's default pages load them from a CDN, which leaves /docs blank without internet. The
 * licence texts the bundles point to travel with them.
 */
const ASSETS: readonly { pkg: string; from: string; to: string }[] = [
  { pkg: "swagger-ui-dist", from: "swagger-ui-bundle.js", to: "swagger-ui-bundle.js" },
  { pkg: "swagger-ui-dist", from: "swagger-ui-bundle.js.LICENSE.txt", to: "swagger-ui-bundle.js.LICENSE.txt" },
  { pkg: "swagger-ui-dist", from: "swagger-ui.css", to: "swagger-ui.css" },
  { pkg: "swagger-ui-dist", from: "LICENSE", to: "swagger-ui-LICENSE.txt" },
  { pkg: "swagger-ui-dist", from: "NOTICE", to: "swagger-ui-NOTICE.txt" },
  { pkg: "redoc", from: "bundles/redoc.standalone.js", to: "redoc.standalone.js" },
  { pkg: "redoc", from: "bundles/redoc.standalone.js.LICENSE.txt", to: "redoc.standalone.js.LICENSE.txt" },
  { pkg: "redoc", from: "LICENSE", to: "redoc-LICENSE.txt" },
];

/** The header in the file's own comment syntax: every vendored format has one. */
function header(name: string): string {
  if (name.endsWith(".js")) return slashHeader();
  if (name.endsWith(".css")) return blockHeader();
  return hashHeader();
}

const require = createRequire(import.meta.url);
let cache: [string, string][] | null = null;

/** Path under backend/ -> content, header first; read once per process. */
export function docsAssets(): readonly [string, string][] {
  if (cache) return cache;
  cache = ASSETS.map(({ pkg, from, to }) => {
    const root = dirname(require.resolve(`${pkg}/package.json`));
    const text = readFileSync(join(root, from), "utf8").replace(/\r\n/g, "\n");
    return [`${DOCS_STATIC_DIR}/${to}`, header(to) + (text.endsWith("\n") ? text : `${text}\n`)];
  });
  return cache;
}
