import type { ContractType, ImportField, ImportNote, ImportTable, SourceLocation } from "../model.js";
import { entityName } from "../naming.js";
import { mapTypeName } from "../type-map.js";
import type { PyAssign, PyClass, PyFile, PyValue } from "./python-ast.js";
import { last, num, str } from "./python-ast.js";

/** Pydantic's own types that the shared type table does not know (it maps `str`, `int`, `bool`, ...). */
const PYDANTIC_TYPES: Record<string, ContractType> = {
  EmailStr: "email",
  NameEmail: "email",
  UUID: "uuid",
  UUID1: "uuid",
  UUID4: "uuid",
  datetime: "datetime",
  AwareDatetime: "datetime",
  NaiveDatetime: "datetime",
  date: "date",
  Decimal: "number",
  PositiveInt: "integer",
  NonNegativeInt: "integer",
  Dict: "object",
  Any: "object",
};
const URL_TYPES = new Set(["HttpUrl", "AnyUrl", "AnyHttpUrl"]);

/**
 * Suffixes of the schemas one entity usually has (`UserBase`, `UserCreate`, `UserPublic`, ...), in
 * the order the entity is taken from: the one richest in stored fields first.
 */
const ROLES = ["", "InDB", "Base", "Public", "Read", "Out", "Response", "Detail", "Create", "In", "Request", "Update", "Patch", "Schema"];
const ROLE_SUFFIX = new RegExp(`(?<=.)(${ROLES.filter((r) => r !== "").join("|")})$`);

interface Located {
  file: string;
  cls: PyClass;
}

/**
 * Pydantic models (`class X(BaseModel)` and their subclasses) as tables. When the code base has ORM
 * models, those are the entities and every schema is named as skipped; otherwise the schemas of one
 * entity (`UserCreate`, `UserPublic`) become one entity, read from the preferred role.
 */
export function pydanticModels(files: readonly PyFile[], orm: readonly ImportTable[], notes: ImportNote[]): ImportTable[] {
  const classes = new Map<string, Located>();
  for (const f of files) for (const c of f.classes ?? []) if (!classes.has(c.name)) classes.set(c.name, { file: f.path, cls: c });
  const enums = enumMembers(classes);
  const models = pydanticClasses(classes);
  if (models.size === 0) return [];
  const at = (m: Located): SourceLocation => ({ file: m.file, line: m.cls.line });

  if (orm.length > 0) {
    const ormByKey = new Map(orm.map((t) => [entityName(t.name), t.name]));
    for (const m of models.values()) {
      const owner = ormByKey.get(entityName(stem(m.cls.name)));
      notes.push({
        kind: "skipped",
        subject: m.cls.name,
        reason: owner
          ? `a Pydantic schema of ${owner}; the ORM model is the entity`
          : "a Pydantic schema beside ORM models (a request or response shape); not an entity",
        location: at(m),
      });
    }
    return [];
  }

  const groups = new Map<string, Located[]>();
  for (const m of models.values()) {
    const key = stem(m.cls.name);
    groups.set(key, [...(groups.get(key) ?? []), m]);
  }
  const tables: ImportTable[] = [];
  for (const [key, members] of groups) {
    const withFields = members.filter((m) => inheritedFields(m.cls, models).length > 0);
    const rank = (m: Located): number => ROLES.indexOf(m.cls.name.slice(key.length));
    const chosen = withFields.sort((a, b) => rank(a) - rank(b))[0];
    for (const m of members) {
      if (m === chosen) continue;
      notes.push({
        kind: "skipped",
        subject: m.cls.name,
        reason: chosen ? `another Pydantic schema of ${key}; ${chosen.cls.name} is the entity` : "a Pydantic model with no fields",
        location: at(m),
      });
    }
    if (chosen) tables.push(modelTable(key, chosen, models, enums, notes));
  }
  // Schemas carry no foreign keys: `organizer_id` beside an entity `organizer` is taken as one.
  const byKey = new Map(tables.map((t) => [entityName(t.name), t.name]));
  for (const t of tables)
    for (const f of t.fields) {
      const target = f.name.endsWith("_id") ? byKey.get(entityName(f.name.slice(0, -3))) : undefined;
      if (target) t.foreignKeys.push({ columns: [f.name], table: target, targetColumns: [] });
    }
  return tables;
}

const stem = (name: string): string => name.replace(ROLE_SUFFIX, "");

/** Classes whose bases reach `BaseModel` (directly or through other Pydantic classes of the code base). */
function pydanticClasses(classes: Map<string, Located>): Map<string, Located> {
  const out = new Map<string, Located>();
  for (let grew = true; grew; ) {
    grew = false;
    for (const [name, m] of classes)
      if (!out.has(name) && m.cls.bases.some((b) => last(b) === "BaseModel" || out.has(last(b)))) {
        out.set(name, m);
        grew = true;
      }
  }
  return out;
}

function enumMembers(classes: Map<string, Located>): Map<string, Map<string, string | number>> {
  const out = new Map<string, Map<string, string | number>>();
  for (const { cls } of classes.values())
    if (cls.bases.some((b) => /(^|\.)(Enum|StrEnum|IntEnum)$/.test(b)))
      out.set(cls.name, new Map(cls.body.map((a) => [a.name, str(a.value) ?? num(a.value) ?? a.name])));
  return out;
}

/** Annotated fields of a class and its Pydantic bases, a subclass overriding its bases. */
function inheritedFields(c: PyClass, models: Map<string, Located>, seen = new Set<string>()): PyAssign[] {
  if (seen.has(c.name)) return [];
  seen.add(c.name);
  const byName = new Map<string, PyAssign>();
  for (const b of c.bases) {
    const base = models.get(last(b));
    if (base) for (const a of inheritedFields(base.cls, models, seen)) byName.set(a.name, a);
  }
  for (const a of c.body)
    if (a.type && !a.name.startsWith("_") && a.name !== "model_config" && !/^(typing\.)?ClassVar\b/.test(a.annotation ?? ""))
      byName.set(a.name, a);
  return [...byName.values()];
}

function modelTable(
  name: string,
  m: Located,
  models: Map<string, Located>,
  enums: Map<string, Map<string, string | number>>,
  notes: ImportNote[],
): ImportTable {
  const t: ImportTable = { name, fields: [], primaryKey: [], foreignKeys: [], location: { file: m.file, line: m.cls.line } };
  if (m.cls.doc) t.description = m.cls.doc.split("\n")[0] as string;
  for (const a of inheritedFields(m.cls, models)) {
    const f = modelField(`${m.cls.name}.${a.name}`, m.file, a, models, enums, notes);
    if (!f) continue;
    if (a.name === "id") t.primaryKey = ["id"];
    t.fields.push(f);
  }
  return t;
}

function modelField(
  subject: string,
  file: string,
  a: PyAssign,
  models: Map<string, Located>,
  enums: Map<string, Map<string, string | number>>,
  notes: ImportNote[],
): ImportField | undefined {
  const ann = a.type as NonNullable<PyAssign["type"]>;
  const location = { file, line: a.line };
  const base = last(ann.base);
  if (models.has(base) || (base === "list" && models.has(last(ann.items ?? "")))) {
    notes.push({ kind: "skipped", subject, reason: `a nested ${a.annotation ?? ann.base} model is not a column; left out`, location });
    return undefined;
  }
  const f: ImportField = { name: a.name, type: "string", sourceType: a.annotation ?? ann.base, location };
  const members = enums.get(base);
  if (ann.literal) {
    f.enum = ann.literal.filter((v): v is string | number => typeof v !== "boolean");
    f.type = f.enum.every((v) => typeof v === "number") ? "integer" : "string";
  } else if (members) {
    f.enum = [...members.values()];
    f.type = f.enum.every((v) => typeof v === "number") ? "integer" : "string";
  } else if (base === "list") {
    f.type = "array";
    f.itemsType = scalar(last(ann.items ?? "str")) ?? "string";
  } else if (URL_TYPES.has(base)) {
    f.format = "uri";
  } else {
    const type = scalar(base);
    if (type) f.type = type;
    else notes.push({ kind: "changed", subject, reason: `type ${ann.base} read as string`, location });
  }

  // The field's settings: `= Field(...)` or `Annotated[T, Field(...)]`; a plain value is the default.
  const field = [a.value, ...ann.metadata].find((v): v is PyValue => v?.kind === "call" && last(v.func ?? "") === "Field");
  const kw = field?.kwargs ?? {};
  const dflt = field ? (kw.default ?? field.args?.[0]) : (a.value ?? undefined);
  const required = dflt === undefined || (dflt.kind === "other" && dflt.source === "...");
  f.required = required && kw.default_factory === undefined && !ann.optional;
  if (!required && dflt?.kind === "const" && dflt.value !== null) f.default = dflt.value;
  else if (!required && dflt?.kind === "name" && members) f.default = members.get(last(dflt.id ?? ""));
  const factory = kw.default_factory;
  if (factory && /(^|\.)(now|utcnow|today)$/.test(factory.id ?? factory.source ?? "")) f.generated = "now";
  else if (factory && /uuid4$/.test(factory.id ?? "")) f.generated = "uuid";
  const description = str(kw.description);
  if (description) f.description = description;

  const constraints: NonNullable<ImportField["constraints"]> = {};
  const set = (key: keyof typeof constraints, v: number | undefined): void => {
    if (v !== undefined) constraints[key] = v as never;
  };
  set("maxLength", num(kw.max_length));
  set("minLength", num(kw.min_length));
  set("min", num(kw.ge));
  set("max", num(kw.le));
  // Exclusive bounds are exact only for integers (gt=0 is min 1); a number keeps them as notes.
  for (const [key, bound, step] of [
    ["gt", "min", 1],
    ["lt", "max", -1],
  ] as const) {
    const v = num(kw[key]);
    if (v === undefined) continue;
    if (f.type === "integer" && Number.isInteger(v)) set(bound, v + step);
    else notes.push({ kind: "skipped", subject, reason: `exclusive bound ${key}=${v} has no contract form; left out`, location });
  }
  const pattern = str(kw.pattern) ?? str(kw.regex);
  if (pattern !== undefined) constraints.pattern = pattern;
  if (Object.keys(constraints).length > 0) f.constraints = constraints;
  return f;
}

function scalar(base: string): ContractType | undefined {
  return PYDANTIC_TYPES[base] ?? mapTypeName(base);
}
