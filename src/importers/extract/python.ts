import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type {
  ContractType,
  FactKind,
  ForeignKey,
  ImportField,
  ImportNote,
  ImportOperation,
  ImportTable,
  OnDelete,
  SourceLocation,
} from "../model.js";
import { ImportError } from "../model.js";
import { mapTypeName } from "../type-map.js";
import { pydanticModels } from "./pydantic.js";
import { last, num, type PyAssign, type PyClass, type PyFile, type PyValue, str } from "./python-ast.js";

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
        out.tables.push(djangoModel(f, inherited(c, classes), classes, out.notes));
        // `class User(AbstractBaseUser, PermissionsMixin)`: a base from Django or a library brings
        // fields and relations (password, last_login, groups) this reader cannot see.
        for (const base of externalBases(c, classes))
          for (const fact of ["column", "reference"] as const)
            out.notes.push({
              kind: "skipped",
              subject: c.name,
              reason: `inherits from ${base}, which is not in the code base: the ${fact === "column" ? "fields" : "relations"} it adds are not read`,
              location: { file: f.path, line: c.line },
              fact,
            });
      } else if (
        c.body.some((a) => a.name === "__tablename__") ||
        (c.keywords.table?.kind === "const" && c.keywords.table.value === true) ||
        // Flask-SQLAlchemy's `db.Model` names the table itself; a `Mapped[...]` column marks a declarative model.
        c.bases.some((b) => /(^|\.)db\.Model$/.test(b)) ||
        c.body.some((a) => a.annotation !== null && /^(\w+\.)?Mapped\[/.test(a.annotation) && a.value?.kind === "call")
      )
        out.tables.push(sqlalchemyModel(f.path, inherited(c, classes), enums, classes, out.notes));
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

/** Bases of a model (and of its bases in the code base) that are neither models.Model nor classes of the code base. */
function externalBases(c: PyClass, classes: ReadonlyMap<string, PyClass>, seen = new Set<string>()): string[] {
  if (seen.has(c.name)) return [];
  seen.add(c.name);
  return c.bases.flatMap((b) => {
    const local = classes.get(last(b));
    if (local) return externalBases(local, classes, seen);
    return /(^|\.)Model$|^(object|Generic\[.*\])$/.test(b) ? [] : [b];
  });
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

function sqlalchemyModel(
  file: string,
  c: PyClass,
  enums: Map<string, string[]>,
  classes: ReadonlyMap<string, PyClass>,
  notes: ImportNote[],
): ImportTable {
  const t: ImportTable = { name: c.name, fields: [], primaryKey: [], foreignKeys: [], location: { file, line: c.line } };
  const table = str(c.body.find((a) => a.name === "__tablename__")?.value);
  if (table) t.tableName = table;
  if (c.doc) t.description = c.doc.split("\n")[0] as string;
  for (const a of c.body) {
    const column = sqlalchemyColumn(c, a);
    if (!column) continue;
    const { fn, args, kw } = column;
    const location = { file, line: a.line };
    const note: Note = (k, fact, reason) => {
      notes.push({ kind: k, subject: `${c.name}.${a.name}`, reason, location, fact });
    };
    const f: ImportField = { name: a.name, type: "string", location };
    // Type: the first positional argument that names a type, else the Mapped[...] annotation.
    const typeArg = args.find((x) => x.kind === "name" || (x.kind === "call" && x.func !== "ForeignKey"));
    const { optional } = sqlalchemyType(f, typeArg, a.annotation, enums, note);
    const len = num(typeArg?.kind === "call" ? typeArg.args?.[0] : undefined) ?? num(kw.max_length);
    if (len !== undefined && f.type === "string") f.constraints = { maxLength: len };
    // SQLModel/Pydantic bounds: ge/le become min/max.
    const bounds: { min?: number; max?: number } = {};
    if (num(kw.ge) !== undefined) bounds.min = num(kw.ge) as number;
    if (num(kw.le) !== undefined) bounds.max = num(kw.le) as number;
    if (Object.keys(bounds).length > 0 && (f.type === "integer" || f.type === "number")) f.constraints = { ...f.constraints, ...bounds };
    const key = sqlalchemyForeignKey(a.name, fn, args, kw);
    if (key) t.foreignKeys.push(key);
    const nullable = kw.nullable;
    if (kw.primary_key?.kind === "const" && kw.primary_key.value === true) t.primaryKey = [a.name];
    else if (nullable?.kind === "const") f.required = nullable.value === false;
    else if (a.annotation !== null)
      f.required = !optional && kw.default === undefined && kw.default_factory === undefined && kw.server_default === undefined;
    if (kw.unique?.kind === "const" && kw.unique.value === true) f.unique = true;
    sqlalchemyDefault(f, kw, classes, note);
    t.fields.push(f);
  }
  return t;
}

type Note = (kind: ImportNote["kind"], fact: FactKind, reason: string) => void;

/**
 * An assignment of a model that is a column, with its positional and keyword arguments: `Column(...)`,
 * `mapped_column(...)`, SQLModel's `Field(...)`, or an annotation (`Mapped[...]`, or any annotated
 * name of a SQLModel `table=True` class). Relationships and other assignments are undefined.
 */
function sqlalchemyColumn(c: PyClass, a: PyAssign): { fn: string; args: PyValue[]; kw: Record<string, PyValue> } | undefined {
  if (a.name.startsWith("__")) return undefined;
  const call = a.value?.kind === "call" ? a.value : undefined;
  const fn = call ? last(call.func ?? "") : "";
  if (fn === "relationship" || fn === "Relationship") return undefined;
  // SQLModel `table=True` classes declare columns as plain annotations (`colour: str | None = None`).
  const sqlmodel = c.keywords.table?.kind === "const" && c.keywords.table.value === true;
  const isColumn =
    fn === "Column" ||
    fn === "mapped_column" ||
    fn === "Field" ||
    (a.annotation !== null && (/^(\w+\.)?Mapped\[/.test(a.annotation) || sqlmodel));
  if (!isColumn) return undefined;
  // `Field(sa_column=Column(Integer, ForeignKey("session.id", ondelete="CASCADE")))`: the column is
  // the SQLAlchemy one inside; Field's own keywords (default, nullable) still count.
  const saColumn = fn === "Field" && call?.kwargs?.sa_column?.kind === "call" ? call.kwargs.sa_column : undefined;
  const args = saColumn?.args ?? call?.args ?? [];
  const kw: Record<string, PyValue> = { ...saColumn?.kwargs, ...call?.kwargs };
  delete kw.sa_column;
  // `version: str = "0.0.1"`: a plain annotated value is the column's default.
  if (!call && a.value && a.value.kind !== "other") kw.default = a.value;
  return { fn, args, kw };
}

/**
 * The column's type from its type argument (`String(50)`, `Enum(Status)`), else from its
 * annotation (`Mapped[int | None]`); an unknown type is read as a string, said so. Returns
 * whether the annotation allows None.
 */
function sqlalchemyType(
  f: ImportField,
  typeArg: PyValue | undefined,
  annotation: string | null,
  enums: ReadonlyMap<string, string[]>,
  note: Note,
): { optional: boolean } {
  const typeName = typeArg ? last(typeArg.kind === "call" ? (typeArg.func ?? "") : (typeArg.id ?? "")) : undefined;
  // `Mapped[int]`, or `so.Mapped[int]` with the module's alias (`import sqlalchemy.orm as so`).
  const annotated = annotation?.replace(/^(\w+\.)?Mapped\[(.*)\]$/, "$2");
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
    } else type = mapTypeName(baseAnnotation) ?? ANNOTATION_TYPES.get(baseAnnotation);
  }
  if (!type) note("changed", "type", `type ${typeName ?? baseAnnotation ?? "unknown"} read as string`);
  f.type = type ?? "string";
  f.sourceType = typeName ?? baseAnnotation ?? "";
  if (/^(Numeric|DECIMAL|Decimal)$/.test(f.sourceType))
    note("changed", "type", `${f.sourceType} becomes a number: exact decimal arithmetic, precision and scale are not kept`);
  return { optional };
}

/** Python annotations the shared type map does not name. */
const ANNOTATION_TYPES: ReadonlyMap<string, ContractType> = new Map([
  ["datetime", "datetime"],
  ["date", "date"],
  ["UUID", "uuid"],
]);

/**
 * `ForeignKey("user.id")` or `ForeignKey(User.id)` (a column object, read as its dotted name) among
 * the column's arguments; SQLModel spells it `Field(foreign_key="user.id", ondelete="CASCADE")`.
 */
function sqlalchemyForeignKey(column: string, fn: string, args: readonly PyValue[], kw: Record<string, PyValue>): ForeignKey | undefined {
  const fk = args.find((x) => x.kind === "call" && last(x.func ?? "") === "ForeignKey");
  const fkArg = fk?.args?.[0];
  const target = str(fkArg) ?? (fkArg?.kind === "name" ? fkArg.id : undefined) ?? (fn === "Field" ? str(kw.foreign_key) : undefined);
  if (!target) return undefined;
  const [tbl, col] = target.split(".");
  const key: ForeignKey = { columns: [column], table: tbl ?? target, targetColumns: col ? [col] : [] };
  const ondelete = str(kw.ondelete) ?? str(fk?.kwargs?.ondelete);
  if (ondelete) {
    key.onDeleteSource = ondelete.toUpperCase();
    key.onDelete = /^cascade$/i.test(ondelete) ? "cascade" : /^set null$/i.test(ondelete) ? "set_null" : "restrict";
  }
  return key;
}

/**
 * The column's default: a constant, an enum member, a time or uuid the database (or the app)
 * generates; a default computed in Python is left out, said so.
 */
function sqlalchemyDefault(f: ImportField, kw: Record<string, PyValue>, classes: ReadonlyMap<string, PyClass>, note: Note): void {
  const d = kw.default;
  if (d?.kind === "const" && d.value !== null) f.default = d.value;
  else if (d?.kind === "name" && f.enum) {
    // `default=RunStatus.CREATED`: the member's stored value, as the enum's values are.
    const id = d.id ?? "";
    const owner = classes.get(last(id.slice(0, Math.max(0, id.lastIndexOf(".")))));
    const member = owner?.body.find((m) => m.name === last(id));
    f.default = member ? (str(member.value) ?? num(member.value) ?? member.name) : last(id);
  } else if (d?.kind === "name" && /utcnow|now/.test(d.id ?? "")) f.generated = "now";
  else if (d && !(d.kind === "const" && d.value === null))
    note("skipped", "default", `default ${d.id ?? d.source ?? d.func ?? ""} is computed in Python; left out`);
  // `default_factory=uuid.uuid4` / a now() function: generated; another factory runs in Python.
  const factory = kw.default_factory?.kind === "name" ? (kw.default_factory.id ?? "") : undefined;
  if (factory !== undefined && /uuid/.test(factory) && (f.type === "uuid" || f.type === "string")) f.generated = "uuid";
  else if (factory !== undefined && /now|utc/i.test(factory) && /^(created|inserted)(_?at|_?on)$/i.test(f.name)) f.generated = "now";
  else if (kw.default_factory)
    note(
      "skipped",
      "default",
      `default_factory ${factory ?? kw.default_factory.source ?? ""} runs in Python; left out, the field is optional`,
    );
  if (kw.server_default?.kind === "call" && /now/.test(kw.server_default.func ?? "")) f.generated = "now";
  if (kw.onupdate?.kind === "call" && /now/.test(kw.onupdate.func ?? "")) f.generated = "now_on_update";
}

const DJANGO_REL = new Set(["ForeignKey", "OneToOneField"]);

/** Django's `on_delete` handlers (PROTECT, DO_NOTHING, SET_DEFAULT and SET(...) refuse the delete as the database would). */
function djangoOnDelete(v: PyValue | undefined): { source: string; onDelete: OnDelete } | undefined {
  const handler = v?.kind === "name" ? last(v.id ?? "") : v?.kind === "call" ? `${last(v.func ?? "")}(...)` : undefined;
  if (!handler) return undefined;
  return { source: handler, onDelete: handler === "CASCADE" ? "cascade" : handler === "SET_NULL" ? "set_null" : "restrict" };
}

/** Django field classes with no contract type of their own, and what they become. */
const DJANGO_CHANGED: Record<string, { type: ContractType; reason: string; pattern?: string }> = {
  TimeField: { type: "string", reason: "TimeField (a time of day) becomes a string: the contract has no time-of-day type" },
  FileField: { type: "string", reason: "FileField becomes a string holding the file's path; the upload itself is not carried" },
  ImageField: { type: "string", reason: "ImageField becomes a string holding the image's path; the upload itself is not carried" },
  FilePathField: { type: "string", reason: "FilePathField becomes a plain string" },
  BinaryField: { type: "string", reason: "BinaryField becomes a string: binary data is carried as text (base64)" },
  GenericIPAddressField: { type: "string", reason: "GenericIPAddressField becomes a plain string (no address check)" },
  IPAddressField: { type: "string", reason: "IPAddressField becomes a plain string (no address check)" },
  DecimalField: { type: "number", reason: "DecimalField becomes a number: the contract keeps no max_digits or decimal_places" },
  ArrayField: { type: "array", reason: "ArrayField becomes an array of strings" },
  HStoreField: { type: "object", reason: "HStoreField becomes an object field" },
};

/**
 * A `choices=` or `default=` expression resolved where Django resolves it: a list of pairs in the
 * class or the module, a TextChoices / IntegerChoices class (inner or module-level, `X` or
 * `X.choices`), or a member of one (`Status.ACTIVE`).
 */
class DjangoScope {
  constructor(
    private readonly file: PyFile,
    private readonly model: PyClass,
    private readonly classes: ReadonlyMap<string, PyClass>,
  ) {}

  private constant(name: string): PyValue | null | undefined {
    return this.model.body.find((a) => a.name === name)?.value ?? this.file.assignments.find((a) => a.name === name)?.value;
  }

  private choicesClass(dotted: string): PyClass | undefined {
    const name = last(dotted.replace(/\.choices$/, ""));
    const c = this.model.inner.find((i) => i.name === name) ?? this.classes.get(name);
    return c?.bases.some((b) => /Choices$|(^|\.)(Enum|StrEnum|IntEnum)$/.test(b)) ? c : undefined;
  }

  /** The stored value of a choices member: `A = "a", "Label"`, `A = 1`, or the name when none is written. */
  private static memberValue(v: PyValue | null, name: string): string | number {
    const first = v?.kind === "list" ? v.items?.[0] : v;
    return str(first) ?? num(first) ?? name;
  }

  values(expr: PyValue | undefined): (string | number)[] | undefined {
    if (!expr) return undefined;
    if (expr.kind === "name") {
      const c = this.choicesClass(expr.id ?? "");
      if (c) return c.body.filter((a) => !a.name.startsWith("_")).map((a) => DjangoScope.memberValue(a.value, a.name));
      const v = (expr.id ?? "").includes(".") ? undefined : this.constant(expr.id ?? "");
      return v ? this.values(v) : undefined;
    }
    if (expr.kind === "list" && (expr.items ?? []).every((i) => i.kind === "list")) {
      // Grouped choices (("Group", ((v, l), ...)),) flatten to their values. A value this reader
      // cannot know (`logging.DEBUG`) makes the whole list unknown: a partial enum would refuse valid data.
      const out: (string | number)[] = [];
      for (const i of expr.items ?? []) {
        const [v, rest] = i.items ?? [];
        const group = rest?.kind === "list" && rest.items?.every((x) => x.kind === "list") ? this.values(rest) : undefined;
        const value = group ?? (v ? this.scalar(v) : undefined);
        if (value === undefined || typeof value === "boolean") return undefined;
        out.push(...(Array.isArray(value) ? value : [value]));
      }
      return out;
    }
    return undefined;
  }

  /** A default naming a constant or a choices member, as its value. */
  scalar(expr: PyValue): string | number | boolean | undefined {
    if (expr.kind === "const") return expr.value === null ? undefined : expr.value;
    if (expr.kind !== "name") return undefined;
    const id = expr.id ?? "";
    const dot = id.lastIndexOf(".");
    if (dot > 0) {
      const c = this.choicesClass(id.slice(0, dot));
      const member = c?.body.find((a) => a.name === id.slice(dot + 1));
      return member ? DjangoScope.memberValue(member.value, member.name) : undefined;
    }
    const v = this.constant(id);
    return v?.kind === "const" && v.value !== null ? v.value : undefined;
  }
}

function djangoModel(file: PyFile, c: PyClass, classes: ReadonlyMap<string, PyClass>, notes: ImportNote[]): ImportTable {
  const path = file.path;
  const t: ImportTable = {
    name: c.name,
    fields: [{ name: "id", type: "integer" }],
    primaryKey: ["id"],
    foreignKeys: [],
    location: { file: path, line: c.line },
  };
  const meta = c.inner.find((i) => i.name === "Meta");
  const dbTable = str(meta?.body.find((a) => a.name === "db_table")?.value);
  if (dbTable) t.tableName = dbTable;
  const scope = new DjangoScope(file, c, classes);
  for (const a of c.body) {
    const call = a.value?.kind === "call" ? a.value : undefined;
    if (!call) continue;
    const kind = last(call.func ?? "");
    if (!/Field$|^ForeignKey$/.test(kind)) continue;
    const location = { file: path, line: a.line };
    const note: Note = (k, fact, reason) => {
      notes.push({ kind: k, subject: `${c.name}.${a.name}`, reason, location, fact });
    };
    if (kind === "ManyToManyField") note("skipped", "reference", "a many-to-many field needs a join entity; not created");
    else djangoField(t, a.name, kind, call, { scope, note, location });
  }
  return t;
}

/** What reading one Django field needs besides the field: the model's scope, its notes, its place. */
interface DjangoFieldContext {
  scope: DjangoScope;
  note: Note;
  location: SourceLocation;
}

/** One Django field (`models.CharField(max_length=50, null=True)`, a ForeignKey) into the table. */
function djangoField(t: ImportTable, attribute: string, kind: string, call: PyValue, { scope, note, location }: DjangoFieldContext): void {
  const kw = call.kwargs ?? {};
  const name = DJANGO_REL.has(kind) ? `${attribute}_id` : attribute;
  const f: ImportField = { name, type: mapTypeName(kind) ?? "string", sourceType: kind, location };
  const changed = DJANGO_CHANGED[kind];
  if (changed) {
    f.type = changed.type;
    if (changed.pattern) f.constraints = { pattern: changed.pattern };
    note("changed", "type", changed.reason);
  } else if (!DJANGO_REL.has(kind) && mapTypeName(kind) === undefined)
    note("changed", "type", `${kind} has no contract equivalent; read as a string`);
  if (DJANGO_REL.has(kind)) djangoReference(t, f, kind, call);
  const nullable = kw.null?.kind === "const" && kw.null.value === true;
  const blank = kw.blank?.kind === "const" && kw.blank.value === true;
  f.required = !nullable && !blank && kw.default === undefined && !(kind === "DateTimeField" && (kw.auto_now || kw.auto_now_add));
  if (kw.max_length && num(kw.max_length) !== undefined && f.type === "string")
    f.constraints = { ...f.constraints, maxLength: num(kw.max_length) as number };
  if (kind.startsWith("Positive")) f.constraints = { ...f.constraints, min: 0 };
  if (kw.unique?.kind === "const" && kw.unique.value === true) f.unique = true;
  if (kw.primary_key?.kind === "const" && kw.primary_key.value === true) {
    // A declared key replaces Django's implicit `id`.
    t.fields = t.fields.filter((x) => !(x.name === "id" && x.location === undefined));
    t.primaryKey = [name];
  }
  if (kw.choices) {
    const values = scope.values(kw.choices);
    if (values) f.enum = values;
    else
      note("skipped", "enum", `choices ${kw.choices.source ?? kw.choices.id ?? "(an expression)"} could not be read statically; left out`);
  }
  djangoDefault(f, attribute, kw, scope, note);
  if (kw.validators) note("skipped", "check", "validators= run in Django's forms and full_clean, not in the database; left out");
  t.fields.push(f);
}

/** A ForeignKey or OneToOneField: the `<name>_id` integer column and its key, with the on_delete handler. */
function djangoReference(t: ImportTable, f: ImportField, kind: string, call: PyValue): void {
  const target = call.args?.[0];
  const targetName = target?.kind === "name" ? last(target.id ?? "") : (str(target) ?? "");
  const table = targetName === "self" ? t.name : (targetName.split(".").pop() ?? targetName);
  const key: ForeignKey = { columns: [f.name], table, targetColumns: [] };
  // on_delete is the second positional argument (`ForeignKey(Project, models.CASCADE)`) or a keyword.
  const onDelete = djangoOnDelete(call.kwargs?.on_delete ?? call.args?.[1]);
  if (onDelete) {
    key.onDeleteSource = onDelete.source;
    key.onDelete = onDelete.onDelete;
  }
  t.foreignKeys.push(key);
  f.type = "integer";
  if (kind === "OneToOneField") f.unique = true;
}

/**
 * The field's default: a constant or a choices member, a uuid or a creation time Django fills
 * (auto_now_add, auto_now); another callable runs in Django and is left out, said so.
 */
function djangoDefault(f: ImportField, attribute: string, kw: Record<string, PyValue>, scope: DjangoScope, note: Note): void {
  const d = kw.default;
  if (d && d.kind !== "const" && d.kind !== "name") note("skipped", "default", `default ${d.source ?? d.func ?? ""} is computed; left out`);
  else if (d?.kind === "const" && d.value !== null) f.default = d.value;
  else if (d?.kind === "name") {
    const v = scope.scalar(d);
    const fn = last(d.id ?? "");
    if (v !== undefined) f.default = v;
    else if (/^uuid[14]$/.test(fn)) f.generated = "uuid";
    else if (fn === "now" && /^(created|inserted)(_?at|_?on)$/i.test(attribute)) f.generated = "now";
    else note("skipped", "default", `default ${d.id ?? ""} is a callable run by Django; left out, the field is optional`);
  }
  if (kw.auto_now_add) f.generated = "now";
  if (kw.auto_now) f.generated = "now_on_update";
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
