import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { ImportNote } from "../../../src/importers/model.js";
import { entityName, snakeCase } from "../../../src/importers/naming.js";
import { type ContractEntity, implicitColumn, type JudgeResult, readEntities, sameValue, Tally } from "./code-facts.js";
import { entityFiles, judge as judgeTypeOrm } from "./typeorm.js";

/**
 * The independent judge of `charter extract` on a Django code base: Django itself (pip `django`
 * in a throwaway venv, .cache/django-judge-venv) imports the apps and reports each model's fields
 * as its `_meta` sees them (django_facts.py); every fact is compared with the written contracts. A
 * difference no note names is silent. An app Django cannot import (a dependency that is not
 * installed, a module a trimmed copy lacks) is left out and named in `unjudged`.
 * SQLModel and SQLAlchemy tables are read likewise by SQLAlchemy itself (sqlalchemy_facts.py,
 * sqlmodel in the same venv). TypeORM entities are judged by TypeORM itself (typeorm.ts).
 */

const HERE = dirname(fileURLToPath(import.meta.url));
const VENV = resolve(HERE, "../../../.cache/django-judge-venv");

interface DjangoField {
  name: string;
  attname: string;
  column: string;
  type: string;
  /** The field's class (EmailField), where `type` is its storage (CharField). */
  cls: string;
  null: boolean;
  blank: boolean;
  hasDefault: boolean;
  default?: unknown;
  defaultCallable?: boolean;
  defaultName?: string | null;
  maxLength: number | null;
  unique: boolean;
  primaryKey: boolean;
  autoCreated: boolean;
  autoNow: boolean;
  autoNowAdd: boolean;
  choices?: unknown[];
  relatedModel?: string;
  onDelete?: string;
}
interface DjangoModel {
  name: string;
  table: string;
  file: string;
  fields: DjangoField[];
  manyToMany: { name: string; relatedModel: string }[];
}

/** The judge venv's python (made by scripts/setup.sh; tests never reach for the network to make it). */
export function djangoPython(): string {
  const python = join(VENV, "bin/python");
  if (!existsSync(python)) throw new Error(`${python} is missing: run scripts/setup.sh (it installs django and sqlmodel there)`);
  return python;
}

/** Packages of the tree with a models module, as dotted paths from the root. */
function djangoApps(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (!e.isDirectory() || e.name.startsWith(".") || e.name === "node_modules" || e.name === "migrations") continue;
      const full = join(dir, e.name);
      const models = [join(full, "models.py"), join(full, "models", "__init__.py")].find((f) => existsSync(f));
      // A models module of Django's, not one of SQLAlchemy's (they share the name).
      if (models && /\bdjango\b/.test(readFileSync(models, "utf8"))) out.push(relative(root, full).split(sep).join("."));
      walk(full);
    }
  };
  walk(root);
  return out.sort();
}

/** Django's models of the tree, leaving out the apps it cannot import. */
export function djangoModels(root: string): { models: DjangoModel[]; unjudged: string[] } {
  const python = djangoPython();
  let apps = djangoApps(root);
  let packageName: string | undefined;
  const unjudged: string[] = [];
  for (let attempt = 0; attempt <= apps.length + 2 && apps.length > 0; attempt++) {
    const named = apps.map((a) => (packageName ? `${packageName}.${a}` : a));
    const r = spawnSync(python, [join(HERE, "django_facts.py"), root, ...named], {
      encoding: "utf8",
      env: { ...process.env, ...(packageName ? { CHARTER_JUDGE_PACKAGE: packageName } : {}) },
      maxBuffer: 64 * 1024 * 1024,
    });
    const out = JSON.parse(r.stdout || "{}") as { models?: DjangoModel[]; error?: string; file?: string | null };
    if (out.models) return { models: out.models, unjudged };
    const missing = /No module named '([^'.]+)/.exec(out.error ?? "")?.[1];
    // A project's own package name, missing because the copy starts below it
    // (`from styleguide_example.common.models import ...` in a copy rooted at styleguide_example/):
    // the import names a folder of the root, and that package is the root.
    const sub =
      missing && out.file ? new RegExp(`(?:from|import)\\s+${missing}\\.(\\w+)`).exec(readFileSync(out.file, "utf8"))?.[1] : undefined;
    if (missing && sub && packageName === undefined && existsSync(join(root, sub))) {
      packageName = missing;
      continue;
    }
    const culprit = out.file
      ? apps
          .filter((a) => resolve(out.file as string).startsWith(resolve(root, ...a.split(".")) + sep))
          .sort((a, b) => b.length - a.length)[0]
      : undefined;
    if (culprit) {
      unjudged.push(`${culprit}: ${out.error}`);
      apps = apps.filter((a) => a !== culprit);
      continue;
    }
    // The failure names no app (project settings read at import): each app alone tells which load.
    const alone = apps.filter((a) => {
      const one = spawnSync(python, [join(HERE, "django_facts.py"), root, packageName ? `${packageName}.${a}` : a], {
        encoding: "utf8",
        env: { ...process.env, ...(packageName ? { CHARTER_JUDGE_PACKAGE: packageName } : {}) },
        maxBuffer: 64 * 1024 * 1024,
      });
      const res = JSON.parse(one.stdout || "{}") as { models?: unknown; error?: string };
      if (!res.models) unjudged.push(`${a}: ${res.error ?? one.stderr.trim().split("\n").pop()}`);
      return res.models !== undefined;
    });
    if (alone.length === apps.length) throw new Error(`Django could not read ${root}: ${out.error ?? r.stderr}`);
    apps = alone;
  }
  return { models: [], unjudged };
}

/** The contract type that says what a Django field says; null when none does. */
function faithfulType(type: string): string | null {
  const t: Record<string, string> = {
    CharField: "string",
    SlugField: "string",
    URLField: "string",
    TextField: "text",
    IntegerField: "integer",
    BigIntegerField: "integer",
    SmallIntegerField: "integer",
    PositiveIntegerField: "integer",
    PositiveSmallIntegerField: "integer",
    PositiveBigIntegerField: "integer",
    AutoField: "integer",
    BigAutoField: "integer",
    FloatField: "number",
    BooleanField: "boolean",
    DateTimeField: "datetime",
    DateField: "date",
    DurationField: "duration",
    UUIDField: "uuid",
    EmailField: "email",
    JSONField: "object",
  };
  return t[type] ?? null;
}

const ON_DELETE: Record<string, string> = {
  CASCADE: "cascade",
  SET_NULL: "set_null",
  PROTECT: "restrict",
  RESTRICT: "restrict",
  DO_NOTHING: "restrict",
};

interface SaColumn {
  name: string;
  type: string;
  length: number | null;
  nullable: boolean;
  primaryKey: boolean;
  unique: boolean;
  serverDefault: boolean;
  fks: { table: string; column: string; ondelete: string | null }[];
  enum?: unknown[];
  default?: unknown;
  defaultCallable?: boolean;
  defaultName?: string | null;
}

/** Python files that declare SQLAlchemy or SQLModel tables (tests and migrations aside: they run code on import). */
function modelFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name.startsWith(".") || ["node_modules", "migrations", "alembic", "tests", "test"].includes(e.name)) continue;
      const full = join(dir, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.name.endsWith(".py") && !e.name.startsWith("test")) {
        const text = readFileSync(full, "utf8");
        if (/\b(sqlalchemy|sqlmodel)\b/.test(text) && /table\s*=\s*True|__tablename__|db\.Model|Mapped\[/.test(text)) out.push(full);
      }
    }
  };
  walk(root);
  return out.sort();
}

/** SQLAlchemy's tables of the tree (sqlalchemy_facts.py), and the modules it could not import. */
export function sqlalchemyTables(root: string): { tables: { name: string; columns: SaColumn[] }[]; unjudged: string[] } {
  const files = modelFiles(root);
  if (files.length === 0) return { tables: [], unjudged: [] };
  const r = spawnSync(djangoPython(), [join(HERE, "sqlalchemy_facts.py"), root, ...files], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`SQLAlchemy could not read ${root}: ${r.stderr.trim().split("\n").pop()}`);
  return JSON.parse(r.stdout) as { tables: { name: string; columns: SaColumn[] }[]; unjudged: string[] };
}

/** The contract type that says what a SQLAlchemy column type says; null when none does. */
function saType(c: SaColumn): string | null {
  if (c.enum) return "string";
  const t: Record<string, string> = {
    String: "string",
    AutoString: "string",
    Unicode: "string",
    VARCHAR: "string",
    Text: "text",
    UnicodeText: "text",
    Integer: "integer",
    BigInteger: "integer",
    SmallInteger: "integer",
    Float: "number",
    Double: "number",
    Boolean: "boolean",
    DateTime: "datetime",
    Date: "date",
    Uuid: "uuid",
    UUID: "uuid",
    JSON: "object",
    JSONB: "object",
  };
  return t[c.type] ?? null;
}

function judgeSqlalchemy(root: string, entities: Map<string, ContractEntity>, tally: Tally): string[] {
  const { tables, unjudged } = sqlalchemyTables(root);
  for (const t of tables) {
    const entity = entities.get(entityName(t.name)) ?? [...entities.values()].find((e) => e.table === t.name);
    tally.check([t.name], "table", entity !== undefined, () => `table ${t.name} has no entity`);
    if (!entity) continue;
    const keys = t.columns.filter((c) => c.primaryKey);
    for (const c of t.columns) {
      const column = snakeCase(c.name);
      const subjects = [`${t.name}.${c.name}`, `${entity.name}.${column}`];
      if (c.primaryKey && keys.length === 1 && column === "id") continue; // the contract's implicit id
      const statusEnum = entity.workflow?.field === column;
      const field = entity.fields[column] ?? entity.fields[`${column}_value`];
      tally.check(
        subjects,
        "column",
        field !== undefined || implicitColumn(entity, column) || statusEnum,
        () => `field ${column} is missing`,
      );
      if (c.primaryKey) tally.check(subjects, "primary_key", false, () => `${c.name} is (part of) the primary key`);
      if (statusEnum && entity.workflow) {
        const values = (c.enum ?? []).map((v) => String(v).toLowerCase());
        tally.check(
          subjects,
          "enum",
          sameValue(values, entity.workflow.states),
          () => `enum ${values.join(", ")} became states ${entity.workflow?.states.join(", ")}`,
        );
        continue;
      }
      if (!field) continue;
      if (c.unique) tally.check(subjects, "unique", false, () => "unique is not in the contract");
      const fk = c.fks[0];
      if (fk) {
        const target = `entity/${entity.domain}/${entityName(fk.table)}`;
        tally.check(subjects, "reference", field.references?.entity === target, () => `${column} should reference ${target}`);
        if (field.references) {
          const expected = /^cascade$/i.test(fk.ondelete ?? "")
            ? "cascade"
            : /^set null$/i.test(fk.ondelete ?? "")
              ? "set_null"
              : fk.ondelete
                ? "restrict"
                : undefined;
          const actual = field.references.on_delete ?? (field.required === true ? "restrict" : "set_null");
          // No ON DELETE in the source is the database's NO ACTION: the contract's default for its optionality.
          tally.check(
            subjects,
            "on_delete",
            expected === undefined ? field.references.on_delete === undefined : expected === actual,
            () => `ondelete ${fk.ondelete} became ${actual}`,
          );
        }
      } else {
        const type = saType(c);
        tally.check(subjects, "type", type !== null && field.type === type, () => `${c.type} became ${field.type}`);
        if (c.length !== null && (type === "string" || type === "text"))
          tally.check(
            subjects,
            "length",
            field.constraints?.maxLength === c.length,
            () => `length ${c.length} became ${field.constraints?.maxLength}`,
          );
        if (c.enum)
          tally.check(
            subjects,
            "enum",
            sameValue(field.enum, c.enum),
            () => `enum ${JSON.stringify(c.enum)} became ${JSON.stringify(field.enum)}`,
          );
      }
      const hasDefault = c.default !== undefined || c.defaultCallable === true || c.serverDefault;
      if (!c.primaryKey) {
        const required = !c.nullable && !hasDefault;
        tally.check(
          subjects,
          "nullability",
          (field.required === true) === required || field.computed !== undefined,
          () => `required ${required} became ${field.required === true}`,
        );
      }
      if (c.default !== undefined && c.default !== null)
        tally.check(
          subjects,
          "default",
          sameValue(field.default, c.default),
          () => `default ${JSON.stringify(c.default)} became ${JSON.stringify(field.default)}`,
        );
      else if (c.defaultCallable) {
        const computed = /uuid/.test(c.defaultName ?? "") ? "uuid" : /now/.test(c.defaultName ?? "") ? "now" : undefined;
        tally.check(
          subjects,
          "default",
          computed !== undefined && field.computed === computed,
          () => `default ${c.defaultName}() became ${JSON.stringify(field.default ?? field.computed)}`,
        );
      }
    }
  }
  return unjudged.map((u) => `sqlalchemy ${u}`);
}

export async function judge(args: {
  inputPath: string;
  domainDir: string;
  notes: ImportNote[];
}): Promise<JudgeResult & { unjudged: string[] }> {
  const root = statSync(args.inputPath).isDirectory() ? args.inputPath : dirname(args.inputPath);
  const { models, unjudged } = djangoModels(root);
  const entities = readEntities(args.domainDir);
  const tally = new Tally(args.notes);
  const entityOf = (m: DjangoModel): ContractEntity | undefined =>
    entities.get(entityName(m.name)) ?? [...entities.values()].find((e) => e.table === m.table);
  for (const m of models) {
    const entity = entityOf(m);
    tally.check([m.name], "table", entity !== undefined, () => `model ${m.name} has no entity`);
    if (!entity) continue;
    for (const mm of m.manyToMany) tally.check([`${m.name}.${mm.name}`], "reference", false, () => `many-to-many to ${mm.relatedModel}`);
    for (const f of m.fields) {
      const column = snakeCase(f.attname);
      const subjects = [`${m.name}.${f.name}`, `${m.name}.${f.attname}`, `${entity.name}.${column}`];
      if (f.primaryKey && f.autoCreated) continue; // Django's implicit id: the contract's implicit id
      const statusEnum = entity.workflow?.field === column;
      const field = entity.fields[column] ?? entity.fields[`${column}_value`];
      tally.check(
        subjects,
        "column",
        field !== undefined || implicitColumn(entity, column) || statusEnum,
        () => `field ${column} is missing`,
      );
      if (f.primaryKey)
        tally.check(subjects, "primary_key", false, () => `${f.name} is the primary key; the contract keys by an implicit id`);
      if (statusEnum && entity.workflow) {
        const values = (f.choices ?? []).map((c) => String(c).toLowerCase());
        tally.check(
          subjects,
          "enum",
          sameValue(values, entity.workflow.states),
          () => `choices ${values.join(", ")} became states ${entity.workflow?.states.join(", ")}`,
        );
        if (f.hasDefault)
          tally.check(
            subjects,
            "default",
            String(f.default).toLowerCase() === entity.workflow.initial,
            () => `default ${String(f.default)} became initial ${entity.workflow?.initial}`,
          );
        continue;
      }
      if (!field) continue;
      if (f.unique && !f.primaryKey) tally.check(subjects, "unique", false, () => "unique is not in the contract");
      if (f.relatedModel) {
        const target = `entity/${entity.domain}/${entityName(f.relatedModel)}`;
        tally.check(subjects, "reference", field.references?.entity === target, () => `${column} should reference ${target}`);
        if (field.references) {
          const expected = ON_DELETE[f.onDelete ?? ""];
          const actual = field.references.on_delete ?? (field.required === true ? "restrict" : "set_null");
          tally.check(subjects, "on_delete", expected === actual, () => `on_delete ${f.onDelete} became ${actual}`);
        }
      } else {
        const type = faithfulType(f.cls) ?? faithfulType(f.type);
        tally.check(subjects, "type", type !== null && field.type === type, () => `${f.type} became ${field.type}`);
        if (f.maxLength !== null && ["CharField", "SlugField", "URLField", "EmailField"].includes(f.type))
          tally.check(
            subjects,
            "length",
            field.constraints?.maxLength === f.maxLength || field.type === "email",
            () => `max_length ${f.maxLength} became ${field.constraints?.maxLength}`,
          );
        if (f.choices && f.choices.length > 0)
          tally.check(
            subjects,
            "enum",
            sameValue(field.enum, f.choices),
            () => `choices ${JSON.stringify(f.choices)} became ${JSON.stringify(field.enum)}`,
          );
      }
      const generated = f.autoNow || f.autoNowAdd;
      if (!generated) {
        const required = !f.null && !f.blank && !f.hasDefault;
        tally.check(
          subjects,
          "nullability",
          (field.required === true) === required,
          () => `required ${required} became ${field.required === true}`,
        );
      } else
        tally.check(
          subjects,
          "default",
          field.computed === (f.autoNow ? "now_on_update" : "now"),
          () => `auto_now${f.autoNowAdd ? "_add" : ""} became ${field.computed}`,
        );
      if (f.hasDefault) {
        // uuid.uuid4 and timezone.now are the contract's generated uuid and creation time.
        const computed = f.defaultName === "uuid4" || f.defaultName === "uuid1" ? "uuid" : f.defaultName === "now" ? "now" : undefined;
        const same = f.defaultCallable
          ? computed !== undefined && field.computed === computed
          : f.default !== null && sameValue(field.default, f.default);
        tally.check(
          subjects,
          "default",
          same,
          () =>
            `default ${f.defaultCallable ? "(a callable)" : JSON.stringify(f.default)} became ${JSON.stringify(field.default ?? field.computed)}`,
        );
      }
    }
  }
  // SQLAlchemy and SQLModel tables, read by SQLAlchemy itself.
  unjudged.push(...judgeSqlalchemy(root, entities, tally));
  if (entityFiles(root).length > 0) {
    const t = await judgeTypeOrm(args);
    return { compared: tally.result.compared + t.compared, silent: [...tally.result.silent, ...t.silent], unjudged };
  }
  return { ...tally.result, unjudged };
}
