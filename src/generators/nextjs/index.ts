import type { DomainIR } from "../../compiler/index.js";
import { compareText } from "../../shared/text.js";
import type { GeneratedFile, Generator } from "../types.js";
import {
  CUSTOM_NAV,
  renderCreatePage,
  renderCustomNav,
  renderDashboard,
  renderDetailPage,
  renderLayout,
  renderListPage,
  renderSidebar,
  renderTitleLayout,
} from "./emit-app.js";
import { renderEntityComponents } from "./emit-entity.js";
import { renderApi, renderFieldTypes, renderTypes } from "./emit-lib.js";
import { buildFrontendModel } from "./model.js";
import { renderPackageJson } from "./package-json.js";
import { withHeader } from "./source.js";
import { staticTemplates } from "./templates.js";

export { NEXTJS_DEPENDENCIES, NEXTJS_DEV_DEPENDENCIES } from "./package-json.js";

/** Everything lands under `frontend/` of the output root. */
export const FRONTEND_DIR = "frontend";

/**
 * The Next.js frontend: static files copied from ./templates, and the IR-dependent ones (API
 * client, types, sidebar, dashboard, per-entity components, per-page routes) rendered here. A
 * domain without a Page contract gets no frontend at all.
 */
export function generateNextjs(ir: DomainIR): GeneratedFile[] {
  if (ir.pages.length === 0) return [];
  const model = buildFrontendModel(ir);
  const files: { path: string; content: string; owned?: boolean; preformatted?: true }[] = [];
  for (const t of staticTemplates(
    model.auth,
    model.clients.some((c) => c.agentRuns !== null),
  ))
    files.push({ path: t.path, content: withHeader(t.path, t.content), preformatted: true });
  const add = (path: string, content: string): void => {
    files.push({ path, content: withHeader(path, content) });
  };
  files.push({ path: "package.json", content: renderPackageJson(ir) });
  add("src/lib/field-types.ts", renderFieldTypes());
  add("src/lib/types.ts", renderTypes(model));
  add("src/lib/api.ts", renderApi(model));
  add("src/components/app-sidebar.tsx", renderSidebar(model));
  files.push({ path: CUSTOM_NAV, content: renderCustomNav(), owned: true });
  add("src/app/layout.tsx", renderLayout(model));
  add("src/app/page.tsx", renderDashboard(model));
  for (const f of renderEntityComponents(model)) add(f.path, f.content);
  for (const p of model.pages) {
    const dir = `src/app/${p.segments.join("/")}`;
    add(`${dir}/layout.tsx`, renderTitleLayout(p.component, p.page.title));
    add(`${dir}/new/layout.tsx`, renderTitleLayout(`${p.component}Create`, `New ${p.ui.entity.label.toLowerCase()}`));
    add(`${dir}/[id]/layout.tsx`, renderTitleLayout(`${p.component}Detail`, p.ui.entity.label));
    add(`${dir}/page.tsx`, renderListPage(p));
    add(`${dir}/[id]/page.tsx`, renderDetailPage(p, model.title));
    add(`${dir}/new/page.tsx`, renderCreatePage(p));
  }
  const seen = new Set<string>();
  for (const f of files) {
    if (seen.has(f.path)) throw new Error(`nextjs generator produced ${f.path} twice (two pages on one route?)`);
    seen.add(f.path);
  }
  return files
    .map((f) => ({ ...f, path: `${FRONTEND_DIR}/${f.path}`, content: f.content.endsWith("\n") ? f.content : `${f.content}\n` }))
    .sort((a, b) => compareText(a.path, b.path));
}

export const nextjsGenerator: Generator = {
  target: "nextjs",
  description: "Next.js App Router frontend (frontend/): typed API client, shadcn-style UI, list, detail, create and kanban pages",
  generate: ({ ir }) => generateNextjs(ir),
};
