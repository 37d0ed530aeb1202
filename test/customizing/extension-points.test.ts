import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildNextApp, prepareNextApp, startNextApp } from "../frontend/support/next-app.mjs";
import { type RunningBackend, startGeneratedBackend } from "../support/backend.js";
import { launchChromium } from "../support/chromium.js";
import { REPO_ROOT } from "../support/cli.js";
import { freePort } from "../support/net.js";
import { databaseUrl, freshDatabase } from "../support/postgres.js";
import { ensureVenv, VENV_BIN } from "../support/python.js";

/*
 * The extension points of docs/customizing.md, used as a team would: generate an app through the
 * built CLI, write a custom route, a hook that refuses a write and a custom page into the owned
 * files, change a contract, regenerate, and check that all three still work: over real HTTP on the
 * memory and the PostgreSQL repository, and in headless Chromium after `next build`.
 */

const CLI = join(REPO_ROOT, "dist/cli/charter.js");
const SCENARIO = join(REPO_ROOT, "test/generators/scenarios/item-minimal/domain");
const log = (line: string) => process.stderr.write(`[extension points] ${line}\n`);

const domainDir = mkdtempSync(join(tmpdir(), "charter-custom-domain-"));
const outDir = mkdtempSync(join(tmpdir(), "charter-custom-out-"));
const ENTITY = join(domainDir, "entities/item.contract.yaml");

function forge(...args: string[]): { status: number; output: string } {
  const r = spawnSync(process.execPath, [CLI, "forge", "generate", domainDir, "--target", "all", "-o", outDir, ...args], {
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
    timeout: 120_000,
  });
  return { status: r.status ?? -1, output: `${r.stdout}${r.stderr}` };
}

const CUSTOM_ROUTES = `"""Our own endpoints."""

from fastapi import APIRouter

from app.custom.hooks import item as item_hooks
from app.deps import ItemRepo
from app.repositories.base import ListQuery

router = APIRouter(tags=["custom"])


@router.get("/custom/item-count")
async def item_count(repo: ItemRepo) -> dict[str, int]:
    page = await repo.list(ListQuery())
    return {"items": page.total or 0}


@router.get("/custom/created-seen")
async def created_seen() -> list[str]:
    return item_hooks.SEEN
`;

/**
 * A hooks module as charter wrote it before app/hooks.py existed: every hook defined, the routes
 * calling them all. A team's module of that kind must keep working unchanged.
 */
const LEGACY_HOOKS = `# Written once by charter, now yours: charter never overwrites or removes this file.

"""Hooks around the writes of item records through the API.

The generated routes (app/routes/) call each function below, on the memory and the PostgreSQL
repository alike. A before-hook refuses the write by raising app.errors.Refused: nothing is
written and the client gets a 422 with your message (Refused(message, status=409) for a
conflict). An after-hook runs once the write is stored, with the record as the API returns it.
Keep every function and its parameters: the routes call them all. See charter's
docs/customizing.md.
"""

from uuid import UUID

from app.models.item import ItemCreate, ItemPublic, ItemUpdate
from app.principal import User


async def before_create(data: ItemCreate, user: User) -> None:
    """Before a item is created. For example (with \`from app.errors import Refused\`):

    if user.role != "admin":
        raise Refused("only an administrator may create a item")
    """


async def after_create(record: ItemPublic, user: User) -> None:
    """After a item was created."""


async def before_update(record_id: UUID, changes: ItemUpdate, user: User) -> None:
    """Before a item is changed; \`changes\` holds the fields sent (\`changes.model_fields_set\`)."""


async def after_update(record: ItemPublic, user: User) -> None:
    """After a item was changed."""


async def before_delete(record_id: UUID, user: User) -> None:
    """Before a item is deleted."""


async def after_delete(record_id: UUID, user: User) -> None:
    """After a item was deleted."""


async def before_transition(record_id: UUID, state: str, user: User) -> None:
    """Before a item moves to \`state\` (only when the item has a state machine)."""


async def after_transition(record: ItemPublic, user: User) -> None:
    """After a item moved to another state."""
`;

/**
 * The user's hooks: the earlier generated module with a before-hook that refuses and an after-hook
 * that notes the record it was given; the other six stay empty, as written then.
 */
function refusingHooks(generated: string): string {
  const withImport = generated.replace("\nfrom app.models.item import", "\nfrom app.errors import Refused\nfrom app.models.item import");
  return withImport
    .replace(
      /(async def before_create\(data: ItemCreate, user: User\) -> None:\n {4}"""[\s\S]*?"""\n)/,
      `$1    if data.name.startswith("forbidden"):\n        raise Refused(f"{data.name} is not a name we accept", status=409)\n`,
    )
    .replace(
      /(async def after_create\(record: ItemPublic, user: User\) -> None:\n {4}"""[\s\S]*?"""\n)/,
      `$1    SEEN.append(f"{type(record).__name__} {record.name} {record.links['self']}")\n`,
    )
    .replace("\n\n\nasync def before_create", "\n\nSEEN: list[str] = []\n\n\nasync def before_create");
}

/** A hooks module in today's style: only the hooks the team needs, the others left to app/hooks.py. */
const PARTIAL_HOOKS = `"""Our hooks: one after-hook, nothing else."""

from app.models.item import ItemPublic
from app.principal import User

SEEN: list[str] = []


async def after_update(record: ItemPublic, user: User) -> None:
    SEEN.append(record.name)
`;

const CUSTOM_PAGE = `export default function ReportsPage() {
  return (
    <main className="p-6">
      <h1 data-testid="custom-reports">Our reports</h1>
    </main>
  );
}
`;

const CUSTOM_NAV = `import type { NavItem } from "@/components/app-shell";
import { LayoutDashboard } from "@/components/icons";

export const customNav: readonly NavItem[] = [{ title: "Reports", url: "/reports", icon: <LayoutDashboard />, testId: "nav-reports" }];
`;

/** Every file under `dir`, relative path -> bytes. */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (abs: string): void => {
    for (const name of readdirSync(abs)) {
      const p = join(abs, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.set(relative(dir, p), readFileSync(p, "utf8"));
    }
  };
  walk(dir);
  return out;
}

const owned = {
  routes: join(outDir, "backend/app/custom/routes.py"),
  hooks: join(outDir, "backend/app/custom/hooks/item.py"),
  nav: join(outDir, "frontend/src/custom/nav.tsx"),
  page: join(outDir, "frontend/src/app/(custom)/reports/page.tsx"),
};
let userFiles = new Map<string, string>();
/** The hooks module as charter writes it today, before the team replaces it. */
let freshHooks = "";
const backends: RunningBackend[] = [];

beforeAll(() => {
  cpSync(SCENARIO, domainDir, { recursive: true });
  // The frontend needs a Page contract; the scenario has none.
  mkdirSync(join(domainDir, "pages"));
  writeFileSync(
    join(domainDir, "pages/items.contract.yaml"),
    "apiVersion: charter/v1\nkind: Page\nmetadata:\n  name: items\n  domain: bench\nspec:\n  route: /items\n  entity: entity/bench/item\n  generation_tier: mechanical\n",
  );
  const first = forge();
  expect(first.status, first.output).toBe(0);

  // The user's edits, as in docs/customizing.md.
  writeFileSync(owned.routes, CUSTOM_ROUTES);
  // The generated module defines no hook (app/hooks.py then does nothing); the team's is one
  // written in the earlier style, every hook defined.
  freshHooks = readFileSync(owned.hooks, "utf8");
  expect(freshHooks).not.toMatch(/^async def /m);
  writeFileSync(owned.hooks, refusingHooks(LEGACY_HOOKS));
  writeFileSync(owned.nav, CUSTOM_NAV);
  mkdirSync(join(owned.page, ".."), { recursive: true });
  writeFileSync(owned.page, CUSTOM_PAGE);
  userFiles = new Map(Object.values(owned).map((p) => [p, readFileSync(p, "utf8")]));
  expect(userFiles.get(owned.hooks)).toContain('    if data.name.startswith("forbidden"):\n        raise Refused(f"');

  // A contract change: a new field, then a regeneration through the CLI.
  writeFileSync(ENTITY, readFileSync(ENTITY, "utf8").replace("    priority:\n", "    note:\n      type: string\n    priority:\n"));
  const second = forge();
  expect(second.status, second.output).toBe(0);
}, 300_000);

afterAll(async () => {
  for (const b of backends) await b.stop();
});

describe("extension points after a contract change and a regeneration", () => {
  it("keeps every owned and user file byte for byte, regenerates the rest, and reports no drift", () => {
    for (const [path, text] of userFiles) expect(readFileSync(path, "utf8"), path).toBe(text);
    expect(readFileSync(join(outDir, "backend/app/models/item.py"), "utf8")).toContain("note:");
    const check = forge("--check");
    expect(check.status, check.output).toBe(0);
    // A third run writes nothing at all.
    const before = snapshot(outDir);
    expect(forge().status).toBe(0);
    expect(snapshot(outDir)).toEqual(before);
  });

  it("passes ruff check, ruff format --check and mypy with the user's edits", () => {
    ensureVenv();
    const backendDir = join(outDir, "backend");
    const tool = (name: string, args: string[]) => {
      const r = spawnSync(join(VENV_BIN, name), args, { cwd: backendDir, encoding: "utf8" });
      return { status: r.status, output: `${r.stdout}${r.stderr}` };
    };
    for (const args of [
      ["check", "--no-cache", "."],
      ["format", "--check", "--no-cache", "."],
    ]) {
      const r = tool("ruff", args);
      expect(r.status, r.output).toBe(0);
    }
    const mypy = tool("mypy", ["--cache-dir", join(outDir, ".mypy"), "app"]);
    expect(mypy.status, mypy.output).toBe(0);
  }, 300_000);

  it("calls the hooks a module defines and does nothing for the others (app/hooks.py)", () => {
    // The routes build the record for an after-hook only when it is not app.hooks.nothing: for a
    // hook the module defines, whatever its body. Checked on the team's module (every hook
    // defined), on a module defining one hook, and on the module charter writes today (none).
    const script = `
import asyncio, json, types, uuid
from app import hooks
from app.custom.hooks import item
from app.models.item import ItemPublic
from app.principal import ANONYMOUS

def module(text):
    m = types.ModuleType("user_hooks")
    exec(text, m.__dict__)
    return m

def kept(h):
    return sorted(name for name in ("before_create", "after_create", "before_update", "after_update", "before_delete",
        "after_delete", "before_transition", "after_transition") if getattr(h, name) is not hooks.nothing)

partial = module(${JSON.stringify(PARTIAL_HOOKS)})
fresh = module(${JSON.stringify(freshHooks)})
team = hooks.Hooks(**hooks.defined_in(item))
record = ItemPublic.model_validate({"id": str(uuid.uuid4()), "name": "n", "state": "open", "_links": {"self": "/items/x"},
    "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"})
asyncio.run(hooks.Hooks(**hooks.defined_in(partial)).after_update(record, ANONYMOUS))
asyncio.run(team.before_delete(uuid.uuid4(), ANONYMOUS))
print(json.dumps({"team": kept(team), "routes": kept(hooks.ITEM), "partial": kept(hooks.Hooks(**hooks.defined_in(partial))),
    "fresh": kept(hooks.Hooks(**hooks.defined_in(fresh))), "seen": partial.SEEN}))
`;
    const r = spawnSync(join(VENV_BIN, "python"), ["-c", script], {
      cwd: join(outDir, "backend"),
      env: { ...process.env, APP_ENV: "development" },
      encoding: "utf8",
    });
    expect(r.status, r.stderr).toBe(0);
    const all = [
      "after_create",
      "after_delete",
      "after_transition",
      "after_update",
      "before_create",
      "before_delete",
      "before_transition",
      "before_update",
    ];
    expect(JSON.parse(r.stdout)).toEqual({ team: all, routes: all, partial: ["after_update"], fresh: [], seen: ["n"] });
  });

  for (const backend of ["memory", "postgres"] as const) {
    it(`answers the custom route and refuses through the hook on the ${backend} repository`, async () => {
      const running = await startGeneratedBackend({
        domainDir,
        outDir,
        backend,
        skipGenerate: true,
        ...(backend === "postgres" ? { databaseUrl: databaseUrl(freshDatabase("charter_extension_points")) } : {}),
      });
      backends.push(running);
      const post = (body: unknown) =>
        fetch(`${running.url}/items`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

      const refused = await post({ name: "forbidden thing", note: "new field" });
      expect(refused.status).toBe(409);
      expect(await refused.json()).toMatchObject({ error: "refused", message: "forbidden thing is not a name we accept" });

      const created = await post({ name: "fine", note: "new field" });
      expect(created.status, await created.clone().text()).toBe(201);
      expect(await created.json()).toMatchObject({ name: "fine", note: "new field", state: "open" });

      const count = await fetch(`${running.url}/custom/item-count`);
      expect(count.status).toBe(200);
      // The refused write left nothing behind.
      expect(await count.json()).toEqual({ items: 1 });
      // The edited after-hook ran once, for the stored record, with the public model and its links.
      const { id } = (await (await fetch(`${running.url}/items?limit=1`)).json()).items[0];
      const seen = await fetch(`${running.url}/custom/created-seen`);
      expect(await seen.json()).toEqual([`ItemPublic fine /items/${id}`]);
      await running.stop();
    }, 180_000);
  }

  it("renders the custom page, linked from the generated sidebar, after next build", async () => {
    const files = [...snapshot(join(outDir, "frontend"))].map(([path, content]) => ({ path: `frontend/${path}`, content }));
    const { appDir } = prepareNextApp(files, { slot: "extension-points", log });
    // The user's files pass the app's own lint settings (its biome.jsonc) as they stand.
    const biome = spawnSync(join(REPO_ROOT, "node_modules/.bin/biome"), ["check", "src/custom", "src/app/(custom)"], {
      cwd: appDir,
      encoding: "utf8",
    });
    expect(biome.status, `${biome.stdout}${biome.stderr}`).toBe(0);
    // The pages call no API; a fixed address keeps the build cached between runs.
    const build = buildNextApp(appDir, { apiUrl: "http://127.0.0.1:9", log });
    if (build.built) log(`next build took ${(build.ms / 1000).toFixed(1)} s`);
    const web = await startNextApp(appDir, await freePort());
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const response = await page.goto(`${web.url}/reports`);
      expect(response?.status()).toBe(200);
      expect(await page.getByTestId("custom-reports").textContent()).toBe("Our reports");
      await page.getByTestId("nav-reports").first().waitFor({ state: "attached" });
      expect(await page.getByTestId("nav-reports").first().getAttribute("href")).toBe("/reports");
    } finally {
      await browser.close();
      await web.stop();
    }
  }, 900_000);
});
