import type { DomainIR } from "../../compiler/index.js";
import { kebabCase } from "../../compiler/index.js";
import { GENERATED_NOTICE } from "../header.js";

/**
 * Exact versions, never ranges: the same contracts must give the same package.json and, with it,
 * the same install. Checked against the npm registry on 2026-11-22. TypeScript stays on 5.9:
 * Next's type-check step drives the TypeScript compiler API, which the native 7.x line reshaped.
 * No icon library: it would cost First Load JS on every page (templates/src/components/icons.tsx);
 * tailwind-merge runs with a trimmed configuration for the same reason (templates/src/lib/utils.ts);
 * @dnd-kit/core is imported only by the lazily loaded kanban board.
 */
export const NEXTJS_DEPENDENCIES: Readonly<Record<string, string>> = {
  "@dnd-kit/core": "6.3.1",
  "class-variance-authority": "0.7.1",
  clsx: "2.1.1",
  next: "16.4.6",
  react: "19.3.1",
  "react-dom": "19.3.1",
  "tailwind-merge": "3.7.0",
};

export const NEXTJS_DEV_DEPENDENCIES: Readonly<Record<string, string>> = {
  "@tailwindcss/postcss": "4.3.5",
  "@types/node": "22.20.5",
  "@types/react": "19.3.0",
  "@types/react-dom": "19.3.0",
  tailwindcss: "4.3.5",
  typescript: "5.9.3",
};

/** package.json cannot hold comments, so the `@generated` notice is its first key, "//". */
export function renderPackageJson(ir: DomainIR): string {
  const pkg = {
    "//": GENERATED_NOTICE,
    name: `${kebabCase(ir.domain)}-frontend`,
    version: "0.1.0",
    private: true,
    scripts: {
      dev: "next dev",
      build: "next build",
      start: "next start",
      typecheck: "tsc --noEmit",
    },
    dependencies: NEXTJS_DEPENDENCIES,
    devDependencies: NEXTJS_DEV_DEPENDENCIES,
    engines: { node: ">=20.9.0" },
  };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}
