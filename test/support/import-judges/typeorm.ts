import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import type { ImportNote } from "../../../src/importers/model.js";
import { entityName, snakeCase } from "../../../src/importers/naming.js";
import { freshDatabase, PG_HOST, PG_PORT, PG_USER, psql } from "../postgres.js";
import { excused, type JudgeResult } from "./code-facts.js";
import { compareCatalogs, generatedCatalog, readCatalog } from "./sql.js";

/**
 * The independent judge of a TypeORM import (issue 38): TypeORM itself builds the schema. The
 * entity files are compiled with decorator metadata (as a TypeORM app is) and loaded in a child
 * Node process, packages other than typeorm stubbed; a DataSource with `synchronize` creates their
 * tables in one fresh PostgreSQL database, and the generated schema.sql is applied to another.
 * The two catalogs are compared fact by fact by the PostgreSQL judge's comparison (columns, type
 * family, length, nullability, default, primary key, unique, foreign keys with their delete rule,
 * checks); a difference no note names (by subject, in the source's or the contract's spelling, and
 * fact) is silent. It shares nothing with the extractor's reading of the decorators.
 *
 * TypeORM's soft delete (@DeleteDateColumn) is a nullable `deleted_at`-style column in its catalog,
 * judged like any column (the soft_deletable mixin's deleted_at carries it).
 */

/** What the child process reports of TypeORM's metadata: which entity each table is, join tables by their owner. */
interface TypeOrmTables {
  /** table name -> entity class name. */
  entities: Record<string, string>;
  /** join table name -> `Entity.relation` that owns it. */
  junctions: Record<string, string>;
}

const RUNNER = `
const Module = require("node:module");
const builtin = new Set(Module.builtinModules);
const load = Module._load;
// Packages of the app other than TypeORM (validators, hashing) are stubs: anything called or
// read on them is a no-op function, so their decorators decorate nothing.
const stub = new Proxy(function () {}, { get: (_t, k) => (k === "__esModule" ? false : stub), apply: () => stub, construct: () => stub });
Module._load = function (request, parent, isMain) {
  const bare = !request.startsWith(".") && !request.startsWith("/") && !request.startsWith("node:") && !builtin.has(request);
  const app = parent && parent.filename && parent.filename.startsWith(__dirname);
  if (app && bare && request !== "typeorm" && !request.startsWith("typeorm/") && request !== "reflect-metadata") return stub;
  return load.call(this, request, parent, isMain);
};
require("reflect-metadata");
const typeorm = require("typeorm");
const [database, ...files] = process.argv.slice(2);
// Only files that declare entities are loaded (not the app's own DataSource, built from its
// settings as it loads). One that fails would leave the judge blind to its entities: say which.
const failed = [];
for (const f of files) {
  try {
    require(f);
  } catch (e) {
    failed.push(f + ": " + (e && e.message ? e.message.split("\\n")[0] : String(e)));
  }
}
if (failed.length > 0) {
  console.error("entity files that do not load:\\n" + failed.join("\\n"));
  process.exit(1);
}
const entities = typeorm.getMetadataArgsStorage().tables.map((t) => t.target).filter((t) => typeof t === "function");
const ds = new typeorm.DataSource({
  type: "postgres", host: ${JSON.stringify(PG_HOST)}, port: ${PG_PORT}, username: ${JSON.stringify(PG_USER)}, database,
  entities, synchronize: true, logging: false,
});
ds.initialize().then(async () => {
  const out = { entities: {}, junctions: {} };
  for (const m of ds.entityMetadatas) {
    if (!m.isJunction) out.entities[m.tableName] = m.targetName;
    for (const r of m.manyToManyRelations)
      if (r.isOwning && r.junctionEntityMetadata) out.junctions[r.junctionEntityMetadata.tableName] = m.targetName + "." + r.propertyName;
  }
  await ds.destroy();
  process.stdout.write(JSON.stringify(out));
}).catch((e) => { console.error(e && e.stack ? e.stack : String(e)); process.exit(1); });
`;

/** The `.ts` files under `path` that declare TypeORM entities (`@Entity(` with an import of typeorm). */
export function entityFiles(path: string): string[] {
  const out: string[] = [];
  const walk = (p: string): void => {
    if (statSync(p).isDirectory()) {
      for (const f of readdirSync(p).sort()) if (f !== "node_modules" && !f.startsWith(".")) walk(join(p, f));
    } else if (p.endsWith(".ts") && !p.endsWith(".d.ts")) {
      const text = readFileSync(p, "utf8");
      if (/from\s+['"]typeorm['"]/.test(text) && /@(Entity|ViewEntity|ChildEntity)\s*\(/.test(text)) out.push(p);
    }
  };
  walk(path);
  return out;
}

/**
 * The input's entities compiled to CommonJS with decorator metadata (TypeORM reads a column's
 * type from `design:type`), run by TypeORM with `synchronize` into `db`.
 */
function synchronize(inputPath: string, db: string): TypeOrmTables {
  const root = statSync(inputPath).isDirectory() ? inputPath : dirname(inputPath);
  const out = mkdtempSync(join(tmpdir(), "charter-judge-typeorm-"));
  try {
    const compiled: string[] = [];
    // Every .ts file is compiled, so an entity's relative imports (enums, other entities) resolve.
    const all: string[] = [];
    const walk = (p: string): void => {
      if (statSync(p).isDirectory()) {
        for (const f of readdirSync(p).sort()) if (f !== "node_modules" && !f.startsWith(".")) walk(join(p, f));
      } else if (p.endsWith(".ts") && !p.endsWith(".d.ts")) all.push(p);
    };
    walk(root);
    const entities = new Set(entityFiles(inputPath));
    for (const file of all) {
      const js = ts.transpileModule(readFileSync(file, "utf8"), {
        compilerOptions: {
          module: ts.ModuleKind.CommonJS,
          target: ts.ScriptTarget.ES2021,
          experimentalDecorators: true,
          emitDecoratorMetadata: true,
          esModuleInterop: true,
        },
        fileName: basename(file),
      }).outputText;
      const target = join(out, relative(root, file)).replace(/\.ts$/, ".js");
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, js);
      if (entities.has(file)) compiled.push(target);
    }
    writeFileSync(join(out, "package.json"), '{"type": "commonjs"}\n');
    writeFileSync(join(out, "runner.cjs"), RUNNER);
    const stdout = execFileSync(process.execPath, [join(out, "runner.cjs"), db, ...compiled], {
      encoding: "utf8",
      env: { ...process.env, NODE_PATH: resolve("node_modules") },
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 60_000,
    });
    return JSON.parse(stdout) as TypeOrmTables;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** `UserEntity` is the user: the NestJS class-name suffix, as notes name the entity. */
const className = (c: string): string => (/^.+Entity$/.test(c) ? c.replace(/Entity$/, "") : c);

export async function judge(args: { inputPath: string; domainDir: string; notes: ImportNote[] }): Promise<JudgeResult> {
  const tag = `typeorm_${snakeCase(basename(args.domainDir)).slice(0, 30)}`;
  const inputDb = freshDatabase(`${tag}_in`);
  const outDb = freshDatabase(`${tag}_out`);
  try {
    const tables = synchronize(args.inputPath, inputDb);
    const a = readCatalog(inputDb);
    const { b, ir } = generatedCatalog(args.domainDir, outDb);
    // Every difference, then those a note names (by the class's name, the table's or the owning relation's).
    const all = compareCatalogs(a, b, ir, []);
    const silent = all.silent.filter((s) => {
      const [table, column] = s.subject.split(".") as [string, string | undefined];
      const owner = tables.junctions[table];
      const cls = tables.entities[table];
      // The contract's spelling too: the entity named after the table (`follows` is `follow`).
      const subjects = [s.subject, column === undefined ? entityName(table) : `${entityName(table)}.${column}`];
      if (owner) subjects.push(`${className(owner.split(".")[0] as string)}.${owner.split(".")[1]}`);
      if (cls) subjects.push(column === undefined ? className(cls) : `${className(cls)}.${column}`);
      // A join table is the many-to-many relation its owner declares: a note on the relation names it.
      const fact = owner && (s.fact === "table" || s.fact === "column") ? "reference" : s.fact;
      return !excused(args.notes, subjects, fact);
    });
    return { compared: all.compared, silent };
  } finally {
    for (const db of [inputDb, outDb]) psql("postgres", `DROP DATABASE IF EXISTS ${db} WITH (FORCE);`);
  }
}
