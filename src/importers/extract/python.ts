import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ContractType, ForeignKey, ImportField, ImportNote, ImportOperation, ImportTable } from "../model.js";
import { ImportError } from "../model.js";
import { mapTypeName } from "../type-map.js";
import { pydanticModels } from "./pydantic.js";
import { last, num, type PyClass, type PyFile, str } from "./python-ast.js";

function scriptPath(): string {
  const here = fileURLToPath(new URL(".", import.meta.url));
  const candidates = [join(here, "python/read_models.py"), join(here, "../../../src/importers/extract/python/read_models.py")];
  for (const c of candidates) if (existsSync(c)) return c;
  throw new Error(`read_models.py not found (looked in ${candidates.join(", ")})`);
}

/** Parses Python files with `python3` and the shipped script (the standard library's `ast`). */
export function readPythonFiles(files: readonly string[]): PyFile[] {
  if (files.length === 0) return [];
  const r = spawnSync(process.env.CHARTER_PYTHON ?? "python3", [scriptPath(), "-"], {
    input: files.join("\n"),
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
  });
  if (r.error) throw new ImportError(`python3 is needed to read Python code: ${r.error.message}`);
  if (r.status !== 0) throw new ImportError(`reading Python files failed: ${r.stderr.trim().split("\n").pop() ?? ""}`);
  return (JSON.parse(r.stdout) as { files: PyFile[] }).files;
}

export interface PythonFindings {
  frameworks: Set<string>;
  tables: ImportTable[];
  operations: ImportOperation[];
  notes: ImportNote[];
}

/**
 * The four frameworks' conventions on top of the AST: SQLAlchemy (Column / mapped_column and
 * Mapped[...]), SQLModel (table=True), Django (models.Model fields, choices, ForeignKey, Meta), and
 * FastAPI routes (@app.get, @router.post with the router's prefix).
 */
export function interpretPython(files: readonly PyFile[]): PythonFindings {
  const out: PythonFindings = { frameworks: new Set(), tables: [], operations: [], notes: [] };
  const enums = new Map<string, string[]>();
  for (const f of files) {
    for (const s of f.skipped ?? [])
      out.notes.push({
        kind: "skipped",
        subject: `${f.path}:${s.line}`,
        reason: `this Python cannot read \`${s.text}\` (${s.message}; newer syntax?); the line is left out, the rest of the file is read`,
        location: { file: f.path, line: s.line },
      });
    if (f.error) {
      out.notes.push({
        kind: "skipped",
        subject: f.path,
        reason: `Python syntax error: ${f.error.message}`,
        location: { file: f.path, line: f.error.line, column: f.error.column },
      });
      continue;
    }
    for (const c of f.classes)
      if (c.bases.some((b) => /(^|\.)(Enum|StrEnum|IntEnum)$/.test(b)))
        enums.set(
          c.name,
          c.body.map((a) => String(str(a.value) ?? num(a.value) ?? a.name)),
        );
  }
  const classes = new Map<string, PyClass>();
  for (const f of files) for (const c of f.error ? [] : f.classes) if (!classes.has(c.name)) classes.set(c.name, c);
  const djangoImported = files.some((f) => (f.imports ?? []).some((i) => /\bdjango\b/.test(i)));
  for (const f of files) {
    if (f.error) continue;
    try {
      interpretFile(f, classes, enums, djangoImported, out);
    } catch (e) {
      // A construct no rule foresaw is this file's to report, located; the other files still count.
      out.notes.push(unforeseen(f.path, e));
    }
  }
  // After the ORM models: a Pydantic schema only becomes an entity when no ORM model exists.
  try {
    out.tables.push(...pydanticModels(files, out.tables, out.notes));
  } catch (e) {
    out.notes.push(unforeseen(files[0]?.path ?? "", e));
  }
  return out;
}

/** An exception of a reader on one file, as a located note: the file is left out, the rest is read. */
export function unforeseen(file: string, e: unknown): ImportNote {
  const message = e instanceof Error ? e.message : String(e);
  return {
    kind: "skipped",
    subject: file,
    reason: `could not be read (${message}); the file is left out, please report it`,
    location: { file },
  };
}

function interpretFile(
  f: PyFile,
  classes: ReadonlyMap<string, PyClass>,
  enums: Map<string, string[]>,
  djangoImported: boolean,
  out: PythonFindings,
): void {
  {
    const imports = f.imports.join(" ");
    if (/\bsqlalchemy\b/.test(imports)) out.frameworks.add("SQLAlchemy");
    if (/\bsqlmodel\b/.test(imports)) out.frameworks.add("SQLModel");
    if (/\bdjango\.db\b/.test(imports)) out.frameworks.add("Django");
    if (/\bpydantic\b/.test(imports)) out.frameworks.add("Pydantic");
    if (/\bfastapi\b/.test(imports)) out.frameworks.add("FastAPI");
    for (const c of f.classes) {
      if (djangoImported && isDjangoModel(c, classes)) {
        if (isAbstract(c)) {
          out.notes.push({
            kind: "changed",
            subject: c.name,
            reason: "abstract Django model (Meta: abstract = True): not an entity; its fields go to the models that inherit it",
            location: { file: f.path, line: c.line },
          });
          continue;
        }
        out.tables.push(djangoModel(f.path, inherited(c, classes), out.notes));
      } else if (c.body.some((a) => a.name === "__tablename__") || (c.keywords.table?.kind === "const" && c.keywords.table.value === true))
        out.tables.push(sqlalchemyModel(f.path, inherited(c, classes), enums, out.notes));
    }
    out.operations.push(...fastapiRoutes(f));
  }
}

/** A Django model: `models.Model` among its bases, or a base class of the code base that is one. */
function isDjangoModel(c: PyClass, classes: ReadonlyMap<string, PyClass>, seen = new Set<string>()): boolean {
  if (seen.has(c.name)) return false;
  seen.add(c.name);
  return c.bases.some(
    (b) => /(^|\.)Model$/.test(b) || (classes.has(last(b)) && isDjangoModel(classes.get(last(b)) as PyClass, classes, seen)),
  );
}

function isAbstract(c: PyClass): boolean {
  const abstract = c.inner.find((i) => i.name === "Meta")?.body.find((a) => a.name === "abstract")?.value;
  return abstract?.kind === "const" && abstract.value === true;
}

/**
 * The class with the fields of its bases in the code base (a project's TimestampedModel, SQLModel's
 * `UserBase`), bases first, its own assignments winning; Meta stays its own.
 */
function inherited(c: PyClass, classes: ReadonlyMap<string, PyClass>, seen = new Set<string>()): PyClass {
  if (seen.has(c.name)) return c;
  seen.add(c.name);
  const own = new Set(c.body.map((a) => a.name));
  const fromBases = c.bases
    .map((b) => classes.get(last(b)))
    .filter((b): b is PyClass => b !== undefined && b !== c)
    .flatMap((b) => inherited(b, classes, seen).body)
    .filter((a) => !own.has(a.name) && !a.name.startsWith("__"));
  const names = new Set<string>();
  const body = [...fromBases.filter((a) => !names.has(a.name) && names.add(a.name)), ...c.body];
  return { ...c, body };
}

function sqlalchemyModel(file: string, c: PyClass, enums: Map<string, string[]>, notes: ImportNote[]): ImportTable {
  const t: ImportTable = { name: c.name, fields: [], primaryKey: [], foreignKeys: [], location: { file, line: c.line } };
  const table = str(c.body.find((a) => a.name === "__tablename__")?.value);
  if (table) t.tableName = table;
  if (c.doc) t.description = c.doc.split("\n")[0] as string;
  for (const a of c.body) {
    if (a.name.startsWith("__")) continue;
    const call = a.value?.kind === "call" ? a.value : undefined;
    const fn = call ? last(call.func ?? "") : "";
    if (fn === "relationship" || fn === "Relationship") continue;
    // SQLModel `table=True` classes declare columns as plain annotations (`colour: str | None = None`).
    const sqlmodel = c.keywords.table?.kind === "const" && c.keywords.table.value === true;
    const isColumn =
      fn === "Column" ||
      fn === "mapped_column" ||
      fn === "Field" ||
      (a.annotation !== null && (/^Mapped\[/.test(a.annotation) || sqlmodel));
    if (!isColumn) continue;
    const args = call?.args ?? [];
    const kw = call?.kwargs ?? {};
    const f: ImportField = { name: a.name, type: "string", location: { file, line: a.line } };
    // Type: the first positional argument that names a type, else the Mapped[...] annotation.
    const typeArg = args.find((x) => x.kind === "name" || (x.kind === "call" && x.func !== "ForeignKey"));
    const typeName = typeArg ? last(typeArg.kind === "call" ? (typeArg.func ?? "") : (typeArg.id ?? "")) : undefined;
    const annotated = a.annotation?.replace(/^Mapped\[(.*)\]$/, "$1");
    const optional = annotated !== undefined && /(\| None|Optional\[)/.test(annotated);
    // `uuid.UUID` and `datetime.datetime` are the same types as `UUID` and `datetime`.
    const baseAnnotation = annotated
      ?.replace(/\s*\|\s*None/, "")
      .replace(/^Optional\[(.*)\]$/, "$1")
      .replace(/^(uuid|datetime)\.(UUID|datetime|date)$/, "$2");
    let type: ContractType | undefined;
    if (typeName === "Enum" && typeArg?.kind === "call") {
      const e = typeArg.args?.[0];
      const values =
        e?.kind === "name"
          ? enums.get(last(e.id ?? ""))
          : e
            ? (typeArg.args ?? []).map((x) => str(x)).filter((x): x is string => x !== undefined)
            : undefined;
      if (values) f.enum = values;
      type = "string";
    } else if (typeName) type = mapTypeName(typeName) ?? (typeName === "DateTime" ? "datetime" : undefined);
    if (!type && baseAnnotation) {
      if (enums.has(baseAnnotation)) {
        type = "string";
        f.enum = enums.get(baseAnnotation) as string[];
      } else
        type =
          mapTypeName(baseAnnotation) ??
          (baseAnnotation === "datetime"
            ? "datetime"
            : baseAnnotation === "date"
              ? "date"
              : baseAnnotation === "UUID"
                ? "uuid"
                : undefined);
    }
    if (!type)
      notes.push({
        kind: "changed",
        subject: `${c.name}.${a.name}`,
        reason: `type ${typeName ?? baseAnnotation ?? "unknown"} read as string`,
        location: f.location ?? t.location,
      });
    f.type = type ?? "string";
    f.sourceType = typeName ?? baseAnnotation ?? "";
    const len = num(typeArg?.kind === "call" ? typeArg.args?.[0] : undefined) ?? num(kw.max_length);
    if (len !== undefined && f.type === "string") f.constraints = { maxLength: len };
    // SQLModel/Pydantic bounds: ge/le become min/max.
    const bounds: { min?: number; max?: number } = {};
    if (num(kw.ge) !== undefined) bounds.min = num(kw.ge) as number;
    if (num(kw.le) !== undefined) bounds.max = num(kw.le) as number;
    if (Object.keys(bounds).length > 0 && (f.type === "integer" || f.type === "number")) f.constraints = { ...f.constraints, ...bounds };
    const fk = args.find((x) => x.kind === "call" && last(x.func ?? "") === "ForeignKey");
    // SQLModel spells it `Field(foreign_key="user.id", ondelete="CASCADE")`.
    const target = str(fk?.args?.[0]) ?? (fn === "Field" ? str(kw.foreign_key) : undefined);
    if (target) {
      const [tbl, col] = target.split(".");
      const key: ForeignKey = { columns: [a.name], table: tbl ?? target, targetColumns: col ? [col] : [] };
      const ondelete = str(kw.ondelete) ?? str(fk?.kwargs?.ondelete);
      if (ondelete) {
        key.onDeleteSource = ondelete.toUpperCase();
        key.onDelete = /^cascade$/i.test(ondelete) ? "cascade" : /^set null$/i.test(ondelete) ? "set_null" : "restrict";
      }
      t.foreignKeys.push(key);
    }
    const nullable = kw.nullable;
    if (kw.primary_key?.kind === "const" && kw.primary_key.value === true) t.primaryKey = [a.name];
    else if (nullable?.kind === "const") f.required = nullable.value === false;
    else if (a.annotation !== null) f.required = !optional && kw.default === undefined && kw.server_default === undefined;
    if (kw.unique?.kind === "const" && kw.unique.value === true) f.unique = true;
    const d = kw.default;
    if (d?.kind === "const" && d.value !== null) f.default = d.value;
    else if (d?.kind === "name" && f.enum) f.default = last(d.id ?? "");
    else if (d?.kind === "name" && /utcnow|now/.test(d.id ?? "")) f.generated = "now";
    if (kw.server_default?.kind === "call" && /now/.test(kw.server_default.func ?? "")) f.generated = "now";
    if (kw.onupdate?.kind === "call" && /now/.test(kw.onupdate.func ?? "")) f.generated = "now_on_update";
    t.fields.push(f);
  }
  return t;
}

const DJANGO_REL = new Set(["ForeignKey", "OneToOneField"]);

function djangoModel(file: string, c: PyClass, notes: ImportNote[]): ImportTable {
  const t: ImportTable = {
    name: c.name,
    fields: [{ name: "id", type: "integer" }],
    primaryKey: ["id"],
    foreignKeys: [],
    location: { file, line: c.line },
  };
  const meta = c.inner.find((i) => i.name === "Meta");
  const dbTable = str(meta?.body.find((a) => a.name === "db_table")?.value);
  if (dbTable) t.tableName = dbTable;
  const choices = new Map<string, (string | number)[]>();
  for (const inner of c.inner) {
    if (inner.bases.some((b) => /Choices$/.test(b)))
      choices.set(
        inner.name,
        inner.body.map((a) => (a.value?.kind === "list" ? (str(a.value.items?.[0]) ?? a.name) : (str(a.value) ?? a.name))),
      );
  }
  for (const a of c.body) {
    if (a.value?.kind === "list" && a.value.items?.every((i) => i.kind === "list"))
      choices.set(
        a.name,
        (a.value.items ?? []).map((i) => str(i.items?.[0]) ?? ""),
      );
  }
  for (const a of c.body) {
    const call = a.value?.kind === "call" ? a.value : undefined;
    if (!call) continue;
    const kind = last(call.func ?? "");
    if (!/Field$|^ForeignKey$/.test(kind)) continue;
    const kw = call.kwargs ?? {};
    if (kind === "ManyToManyField") {
      notes.push({
        kind: "skipped",
        subject: `${c.name}.${a.name}`,
        reason: "a many-to-many field needs a join entity; not created",
        location: { file, line: a.line },
      });
      continue;
    }
    const name = DJANGO_REL.has(kind) ? `${a.name}_id` : a.name;
    const f: ImportField = { name, type: mapTypeName(kind) ?? "string", sourceType: kind, location: { file, line: a.line } };
    if (DJANGO_REL.has(kind)) {
      const target = call.args?.[0];
      const targetName = target?.kind === "name" ? last(target.id ?? "") : (str(target) ?? "");
      const key: ForeignKey = { columns: [name], table: targetName.split(".").pop() ?? targetName, targetColumns: [] };
      // on_delete=models.CASCADE / SET_NULL / PROTECT / RESTRICT (DO_NOTHING and SET_DEFAULT refuse as the database would).
      const onDelete = kw.on_delete?.kind === "name" ? last(kw.on_delete.id ?? "") : undefined;
      if (onDelete) {
        key.onDeleteSource = onDelete;
        key.onDelete = onDelete === "CASCADE" ? "cascade" : onDelete === "SET_NULL" ? "set_null" : "restrict";
      }
      t.foreignKeys.push(key);
      f.type = "integer";
    }
    const nullable = kw.null?.kind === "const" && kw.null.value === true;
    const blank = kw.blank?.kind === "const" && kw.blank.value === true;
    f.required = !nullable && !blank && kw.default === undefined && !(kind === "DateTimeField" && (kw.auto_now || kw.auto_now_add));
    if (kw.max_length && num(kw.max_length) !== undefined && f.type === "string")
      f.constraints = { maxLength: num(kw.max_length) as number };
    if (kind.startsWith("Positive")) f.constraints = { ...f.constraints, min: 0 };
    if (kw.unique?.kind === "const" && kw.unique.value === true) f.unique = true;
    const ch = kw.choices;
    const values = ch?.kind === "name" ? choices.get((ch.id ?? "").replace(/\.choices$/, "")) : undefined;
    if (values) f.enum = values;
    const d = kw.default;
    if (d?.kind === "const" && d.value !== null) f.default = d.value;
    else if (d?.kind === "name" && values) {
      const member = last(d.id ?? "");
      const inner = c.inner.find((i) => (d.id ?? "").startsWith(`${i.name}.`));
      const m = inner?.body.find((x) => x.name === member);
      const v = m?.value?.kind === "list" ? str(m.value.items?.[0]) : str(m?.value);
      if (v) f.default = v;
    }
    if (kw.auto_now_add) f.generated = "now";
    if (kw.auto_now) f.generated = "now_on_update";
    t.fields.push(f);
  }
  return t;
}

const METHODS = new Set(["get", "post", "put", "patch", "delete"]);

function fastapiRoutes(f: PyFile): ImportOperation[] {
  const prefixes = new Map<string, string>();
  for (const a of f.assignments) {
    if (a.value?.kind === "call" && /APIRouter$/.test(a.value.func ?? "")) prefixes.set(a.name, str(a.value.kwargs?.prefix) ?? "");
    if (a.value?.kind === "call" && /FastAPI$/.test(a.value.func ?? "")) prefixes.set(a.name, "");
  }
  const out: ImportOperation[] = [];
  for (const fn of f.functions) {
    for (const d of fn.decorators) {
      if (d.kind !== "call") continue;
      const [obj, method] = (d.func ?? "").split(".");
      if (!obj || !method || !METHODS.has(method) || !prefixes.has(obj)) continue;
      const path = `${prefixes.get(obj) ?? ""}${str(d.args?.[0]) ?? ""}`.replace(/\/$/, "") || "/";
      out.push({ method: method.toUpperCase(), path, summary: fn.name.replace(/_/g, " "), location: { file: f.path, line: fn.line } });
    }
  }
  return out;
}
