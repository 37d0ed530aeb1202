import { FIELD_TYPES } from "../../compiler/field-types.js";
import type { EndpointIR, EntityIR, FieldIR, FieldType, ValidationRuleIR } from "../../compiler/ir.js";
import { hashHeader } from "../header.js";
import { type EnvelopeField, LIST_ENVELOPE } from "../list-envelope.js";
import { assign, call, flat, kw, layout, type PyExpr, str, subscript, tuple } from "./py-layout.js";
import { Imports, pyAttr, pyDocstring, pyStr, pyValue } from "./python.js";
import { type CompiledRules, compileRules, type SchemaKeywords } from "./rule-schema.js";

/** Query parameters of the list endpoint; a field with one of these names is not a filter. */
const LIST_PARAMS = new Set(["limit", "offset", "sort", "q", "after", "with_total"]);

/** The Python type of a field of the list body (see list-envelope.ts). */
function envelopeType(f: EnvelopeField, cls: string): string {
  const base = f.kind === "records" ? `list[${cls}Public]` : f.kind === "integer" ? "int" : "str";
  return f.nullable ? `${base} | None` : base;
}

export function filterFields(entity: EntityIR): FieldIR[] {
  return entity.fields.filter((f) => FIELD_TYPES[f.type].scalar && !LIST_PARAMS.has(f.name));
}

/**
 * The filter fields that also take a range: dates and datetimes, as `<field>_from` (>=) and
 * `<field>_to` (<=). A field whose range parameter would have the name of another field (or of a
 * list parameter) gets none: the other field keeps its equality filter, never shadowed.
 */
export function rangeFields(entity: EntityIR): FieldIR[] {
  const taken = new Set([...entity.fields.map((f) => f.name), ...LIST_PARAMS]);
  return filterFields(entity).filter((f) => FIELD_TYPES[f.type].ranged && !taken.has(`${f.name}_from`) && !taken.has(`${f.name}_to`));
}

export function sortFields(entity: EntityIR): FieldIR[] {
  return entity.fields.filter((f) => FIELD_TYPES[f.type].scalar);
}

/** Where a type is used: request bodies (strict), query strings (parsed from text) or responses. */
type Use = "body" | "query" | "response";

/**
 * The Python type of a field. Request input uses the types of app/fieldtypes.py, which refuse with
 * 422 what a backend could not store (NUL, unpaired surrogates, integers beyond BIGINT, infinite
 * numbers), never coerce one JSON type into another, and give every datetime an offset; responses
 * use the plain types.
 */
function baseType(f: FieldIR, imp: Imports, use: Use, itemType: FieldType | null = null): string {
  const t = itemType ?? f.type;
  const python = FIELD_TYPES[t].python;
  if (python !== "json") {
    const [module, name] = python[use].split(":");
    return name === undefined ? (module as string) : imp.add(module as string, name);
  }
  const input = use !== "response";
  if (t === "array") {
    const items =
      f.itemsType && FIELD_TYPES[f.itemsType].python !== "json" ? baseType(f, imp, use, f.itemsType) : itemsFallback(f, imp, input);
    return `list[${items}]`;
  }
  if (input) return imp.add("app.fieldtypes", "JsonObject");
  imp.add("typing", "Any");
  return "dict[str, Any]";
}

function itemsFallback(f: FieldIR, imp: Imports, input: boolean): string {
  if (f.itemsType === "object") {
    if (input) return imp.add("app.fieldtypes", "JsonObject");
    imp.add("typing", "Any");
    return "dict[str, Any]";
  }
  return input ? imp.add("app.fieldtypes", "JsonItem") : imp.add("typing", "Any");
}

function constraintArgs(f: FieldIR): string[] {
  const c = f.constraints;
  const args: string[] = [];
  if (c.min !== undefined) args.push(`ge=${pyValue(c.min)}`);
  if (c.max !== undefined) args.push(`le=${pyValue(c.max)}`);
  if (c.minLength !== undefined) args.push(`min_length=${c.minLength}`);
  if (c.maxLength !== undefined) args.push(`max_length=${c.maxLength}`);
  if (c.pattern !== undefined) args.push(`pattern=${pyStr(c.pattern)}`);
  return args;
}

interface ModelContext {
  entity: EntityIR;
  imp: Imports;
  /** Type aliases (enums, constrained types) declared above the models, by field name. */
  aliases: Map<string, TypeAlias>;
}

/** `checked`: what mypy is shown instead of `definition`, when it cannot read the definition. */
interface TypeAlias {
  name: string;
  definition: PyExpr;
  checked?: string;
}

/** The checked input type of a field: an alias for enums and constrained types, else the base. */
/** The names a model module gives its own classes: `<Class>Create`, `<Class>List`... */
const MODEL_SUFFIXES = new Set(["Base", "Create", "Update", "Public", "Response", "List", "Sort", "Filters"]);

/** The type alias of a field, `<Class><Field>`; a field named like a model class (`list`, `response`) gets `Value` after it. */
function aliasName(ctx: ModelContext, f: FieldIR): string {
  const field = pascal(f.name);
  return `${ctx.entity.className}${field}${MODEL_SUFFIXES.has(field) ? "Value" : ""}`;
}

/** An enum filter: its Literal, and for numbers and booleans the query's text parsed before the comparison. */
function queryEnum(ctx: ModelContext, f: FieldIR): string {
  const t = inputType(ctx, f);
  if ((f.enum ?? []).every((v) => typeof v === "string")) return t;
  ctx.imp.add("typing", "Annotated");
  ctx.imp.add("pydantic", "BeforeValidator");
  return `Annotated[${t}, BeforeValidator(${ctx.imp.add("app.fieldtypes", "query_scalar")})]`;
}

function inputType(ctx: ModelContext, f: FieldIR): string {
  const existing = ctx.aliases.get(f.name);
  if (existing) return existing.name;
  let t: PyExpr;
  if (f.enum && f.enum.length > 0) {
    ctx.imp.add("typing", "Literal");
    t = subscript("Literal", f.enum.map(pyValue));
    if (f.type === "integer" || f.type === "number" || f.type === "boolean") {
      // A Literal compares values, and Python's False == 0 and True == 1: a JSON boolean would pass
      // for a number, and a number for a boolean (the schema says neither).
      ctx.imp.add("typing", "Annotated");
      ctx.imp.add("pydantic", "BeforeValidator");
      const check = ctx.imp.add("app.fieldtypes", f.type === "boolean" ? "boolean_only" : "not_boolean");
      t = subscript("Annotated", [t, call("BeforeValidator", [check])]);
    }
    if (f.type === "date" || f.type === "datetime") {
      // The chosen text becomes a date or datetime after the check: PostgreSQL binds no text to them.
      ctx.imp.add("typing", "Annotated");
      // A record read back holds the date or datetime itself: stored_enum gives the Literal its text.
      ctx.imp.add("pydantic", "AfterValidator");
      ctx.imp.add("pydantic", "BeforeValidator");
      const parse = ctx.imp.add("app.fieldtypes", f.type === "date" ? "enum_date" : "enum_datetime");
      const stored = ctx.imp.add("app.fieldtypes", "stored_enum");
      const choices = tuple(f.enum.map(pyValue));
      t = subscript("Annotated", [t, call("BeforeValidator", [call(stored, [choices])]), call("AfterValidator", [parse])]);
    }
  } else if (constraintArgs(f).length > 0 && (f.type === "string" || f.type === "text")) {
    // The contract's constraints come before the storable check: after a validator, pydantic
    // would check lengths generically ("items") and leave a pattern out of the schema. Without a
    // pattern of its own the field declares the one refusing NUL, as Text does.
    ctx.imp.add("pydantic", "AfterValidator");
    ctx.imp.add("pydantic", "Field");
    ctx.imp.add("typing", "Annotated");
    const check = call("AfterValidator", [ctx.imp.add("app.fieldtypes", "storable_text")]);
    const noNul =
      f.constraints.pattern === undefined ? [`json_schema_extra={"pattern": ${ctx.imp.add("app.fieldtypes", "NO_NUL_PATTERN")}}`] : [];
    const name = aliasName(ctx, f);
    ctx.aliases.set(f.name, { name, definition: subscript("Annotated", ["str", call("Field", [...constraintArgs(f), ...noNul]), check]) });
    return name;
  } else if (f.type === "integer" && constraintArgs(f).length > 0) {
    // Int64's parts with the contract's bounds inside its own (app/fieldtypes.py): bounds added
    // around a type that has a validator would not reach the JSON schema.
    const c = f.constraints;
    // Int64's own range (app/fieldtypes.py): the integers a JSON client holds exactly.
    const lo = BigInt(Math.max(Math.ceil(c.min ?? Number.MIN_SAFE_INTEGER), Number.MIN_SAFE_INTEGER));
    const hi = BigInt(Math.min(Math.floor(c.max ?? Number.MAX_SAFE_INTEGER), Number.MAX_SAFE_INTEGER));
    ctx.imp.add("typing", "Annotated");
    for (const n of ["BeforeValidator", "Field", "Strict"]) ctx.imp.add("pydantic", n);
    const check = call("BeforeValidator", [ctx.imp.add("app.fieldtypes", "whole_number")]);
    const name = aliasName(ctx, f);
    ctx.aliases.set(f.name, {
      name,
      definition: subscript("Annotated", ["int", "Strict()", call("Field", [`ge=${lo}`, `le=${hi}`]), check]),
    });
    return name;
  } else {
    t = baseType(f, ctx.imp, "body");
  }
  const args = constraintArgs(f);
  if (args.length === 0 && !(f.enum && f.enum.length > 0)) return flat(t);
  if (args.length > 0) {
    ctx.imp.add("typing", "Annotated");
    ctx.imp.add("pydantic", "Field");
    t = subscript("Annotated", [t, call("Field", args)]);
  }
  const name = aliasName(ctx, f);
  // A Literal may not hold a fraction (PEP 586): mypy refuses `Literal[0.5]`, which pydantic takes and
  // checks as it should. mypy is shown the number type instead (see the rendering of aliases).
  const fraction = (f.enum ?? []).some((v) => typeof v === "number" && !Number.isInteger(v));
  if (fraction) ctx.imp.add("typing", "TYPE_CHECKING");
  ctx.aliases.set(f.name, { name, definition: t, ...(fraction ? { checked: "float" } : {}) });
  return name;
}

function pascal(snake: string): string {
  return snake
    .split("_")
    .filter(Boolean)
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join("");
}

/**
 * `Field(...)` arguments other than the default: alias when reserved, description, and the JSON
 * Schema keywords only the document carries (compiled validation rules, `readOnly`).
 */
function fieldMeta(f: FieldIR, schemaExtra: SchemaKeywords | undefined = undefined): PyExpr[] {
  const out: PyExpr[] = [];
  if (pyAttr(f.name) !== f.name) out.push(kw("alias", pyStr(f.name)));
  if (f.description) out.push(kw("description", str(f.description)));
  if (schemaExtra && Object.keys(schemaExtra).length > 0) out.push(kw("json_schema_extra", pyValue(schemaExtra)));
  return out;
}

/** Fields a POST body must carry: required by the entity or the route, and without a default. */
export function createRequiredFields(entity: EntityIR, createEndpoint: EndpointIR | undefined): Set<string> {
  const byRoute = new Set(createEndpoint?.requestBody?.requiredFields ?? []);
  return new Set(
    entity.fields
      .filter((f) => f.writable && (f.required || byRoute.has(f.name)) && !(f.hasDefault && f.default !== null))
      .map((f) => f.name),
  );
}

/**
 * The validation rules of a create or update endpoint, compiled against its request model. A PATCH
 * enforces the create's rules and its own on the record as the change leaves it: a field left out
 * keeps its stored value, which satisfies the create's rules (they held on every earlier write) but
 * may break the update's own, so those are never exact for the schema (a schema-valid body can be
 * refused for what is stored), though their keywords still describe what a sent value must be.
 */
export function writeRules(entity: EntityIR, endpoint: EndpointIR | undefined, createEndpoint: EndpointIR | undefined): CompiledRules {
  const writable = entity.fields.filter((f) => f.writable);
  const required = createRequiredFields(entity, createEndpoint);
  const createRules = createEndpoint?.validation ?? [];
  if (endpoint?.operation !== "update") return compileRules(endpoint?.validation ?? [], writable, required);
  const own = updateOwnRules(createEndpoint, endpoint);
  return compileRules([...createRules, ...own], writable, required, new Set(own));
}

/**
 * The rules of an update endpoint that the create does not already have: a PATCH checks the
 * create's rules and these, so one repeated on both is checked (and reported) once.
 */
export function updateOwnRules(create: EndpointIR | undefined, update: EndpointIR | undefined): ValidationRuleIR[] {
  const createRules = create?.validation ?? [];
  return (update?.validation ?? []).filter((r) => !createRules.some((c) => sameRule(c, r)));
}

/** Whether two rules are the same check with the same answer (a PATCH repeating a POST rule). */
function sameRule(a: ValidationRuleIR, b: ValidationRuleIR): boolean {
  return (
    a.source === b.source &&
    a.onFail.status === b.onFail.status &&
    a.onFail.error === b.onFail.error &&
    a.onFail.message === b.onFail.message
  );
}

function defaultExpr(f: FieldIR, meta: PyExpr[], imp: Imports): PyExpr {
  const value = f.default;
  if (Array.isArray(value) || (typeof value === "object" && value !== null)) {
    // The value itself, not a default_factory: pydantic deep-copies a mutable default for each
    // instance, and only a value shows as the schema's `default` in the app's /openapi.json.
    imp.add("pydantic", "Field");
    return call("Field", [pyValue(value), ...meta]);
  }
  if (f.type === "date" || f.type === "datetime" || f.type === "uuid") {
    // The contract writes the value as text; validated, it becomes the field's type (and mypy sees
    // no string assigned to a datetime). pydantic leaves defaults unvalidated otherwise, and the
    // text would reach the database.
    imp.add("pydantic", "Field");
    return call("Field", [pyValue(value), "validate_default=True", ...meta]);
  }
  if (meta.length > 0) {
    imp.add("pydantic", "Field");
    return call("Field", [pyValue(value), ...meta]);
  }
  return pyValue(value);
}

/** One field of a model class, laid out (a long description splits over lines). */
function line(attr: string, type: string, defaultValue: PyExpr | null): string {
  return defaultValue === null ? `    ${attr}: ${type}` : layout(defaultValue, 4, `${attr}: ${type} = `);
}

function createField(ctx: ModelContext, f: FieldIR, required: boolean, schemaExtra: SchemaKeywords | undefined): string {
  const t = inputType(ctx, f);
  const meta = fieldMeta(f, schemaExtra);
  const attr = pyAttr(f.name);
  // defaultExpr validates a date's, datetime's or uuid's default, written as text in the contract.
  if (f.hasDefault && f.default !== null) return line(attr, t, defaultExpr(f, meta, ctx.imp));
  if (required) {
    if (meta.length === 0) return line(attr, t, null);
    ctx.imp.add("pydantic", "Field");
    return line(attr, t, call("Field", meta));
  }
  return optionalField(ctx, attr, t, meta);
}

/** `attr: t | None = None` (or `= Field(None, ...)`); `nullable` false when `t` already admits None. */
function optionalField(ctx: ModelContext, attr: string, t: string, meta: PyExpr[], nullable = true): string {
  const type = nullable ? `${t} | None` : t;
  if (meta.length === 0) return line(attr, type, "None");
  ctx.imp.add("pydantic", "Field");
  return line(attr, type, call("Field", ["None", ...meta]));
}

const CONFIG_INPUT = 'ConfigDict(extra="forbid", validate_by_name=True, validate_by_alias=True)';

/** app/models/<entity>.py: Create, Update, Response, List and Filters models of one entity. */
// Long because most of it is the module's template, read top to bottom as the file it writes.
export function generateModels(entity: EntityIR, createEndpoint: EndpointIR | undefined, updateEndpoint: EndpointIR | undefined): string {
  const imp = new Imports();
  imp.add("pydantic", "BaseModel");
  imp.add("pydantic", "ConfigDict");
  const ctx: ModelContext = { entity, imp, aliases: new Map() };
  const cls = entity.className;
  const label = entity.label.toLowerCase();
  const writable = entity.fields.filter((f) => f.writable);
  const requiredByRoute = new Set(createEndpoint?.requestBody?.requiredFields ?? []);
  const createRules = writeRules(entity, createEndpoint, createEndpoint).byField;
  const updateRules = writeRules(entity, updateEndpoint, createEndpoint).byField;

  // A writable field declared alike in Create and Public lives once, in Base.
  const base: string[] = [];
  const create: string[] = [];
  const publicFields: string[] = [];
  for (const f of writable) {
    const c = createField(ctx, f, f.required || requiredByRoute.has(f.name), createRules.get(f.name));
    const p = publicField(ctx, f);
    if (c === p) base.push(c);
    else {
      create.push(c);
      publicFields.push(p);
    }
  }
  for (const f of entity.fields) if (!f.writable) publicFields.push(publicField(ctx, f));
  imp.add("pydantic", "Field");
  publicFields.push('    links: dict[str, str] = Field(alias="_links", description="Link name -> path; at least `self`")');
  const update = updateFields(ctx, writable, updateRules);

  // The sort keys are an enum, so the document says which fields sort (`-` for descending).
  imp.add("typing", "Literal");
  const sortKeys = sortFields(entity).flatMap((f) => [f.name, `-${f.name}`]);
  const sortAlias = { name: `${cls}Sort`, definition: subscript("Literal", sortKeys.map(pyStr)) };
  const filters = filterModelFields(ctx, sortAlias.name);

  const aliases = [...ctx.aliases.values(), sortAlias].map((a: TypeAlias) =>
    a.checked === undefined
      ? assign(a.name, a.definition)
      : `if TYPE_CHECKING:\n    ${a.name} = ${a.checked}\nelse:\n${assign(a.name, a.definition, 4)}`,
  );
  const body = (fields: string[]): string[] => (fields.length > 0 ? fields : ["    pass"]);
  const parts = [
    hashHeader(),
    `${pyDocstring(`Request and response models of ${label} records (${entity.fqn}).`, entity.description ? `${entity.description}.` : "")}\n`,
    imp.render(),
    "",
    ...(aliases.length > 0 ? [aliases.join("\n"), "", ""] : [""]),
    `class ${cls}Base(BaseModel):`,
    `    """The fields every ${label} model declares alike."""`,
    "",
    "    model_config = ConfigDict(validate_by_name=True, validate_by_alias=True)",
    ...(base.length > 0 ? ["", ...base] : []),
    "",
    "",
    `class ${cls}Create(${cls}Base):`,
    `    """Body of POST ${entity.basePath}: required fields are mandatory, the others optional."""`,
    "",
    '    model_config = ConfigDict(extra="forbid")',
    ...(create.length > 0 ? ["", ...create] : []),
    "",
    "",
    `class ${cls}Update(BaseModel):`,
    `    """Body of PATCH ${entity.basePath}/{id}: a partial update, only the fields sent change."""`,
    "",
    `    model_config = ${CONFIG_INPUT}`,
    "",
    ...body(update),
    "",
    "",
    `class ${cls}Public(${cls}Base):`,
    `    """One ${label} record as the API returns it: every field present, null only where the column allows it."""`,
    "",
    "    model_config = ConfigDict(json_schema_serialization_defaults_required=True)",
    "",
    ...publicFields,
    "",
    "",
    `class ${cls}List(BaseModel):`,
    `    """A page of ${entity.labelPlural.toLowerCase()}: \`next_cursor\` continues after its last record (null on the last page)."""`,
    "",
    "    model_config = ConfigDict(json_schema_serialization_defaults_required=True)",
    "",
    ...LIST_ENVELOPE.map((f) => line(f.name, envelopeType(f, cls), call("Field", [kw("description", str(f.description))]))),
    "",
    "",
    `class ${cls}Filters(BaseModel):`,
    `    """Query of GET ${entity.basePath}: paging, equality and range filters, sort (\`-\` for descending) and q."""`,
    "",
    "    model_config = ConfigDict(validate_by_name=True, validate_by_alias=True)",
    "",
    ...filters,
    "",
  ];
  return parts.join("\n");
}

/** The Update model's fields: every writable field optional, as a PATCH may leave any out. */
function updateFields(ctx: ModelContext, writable: readonly FieldIR[], updateRules: ReturnType<typeof writeRules>["byField"]): string[] {
  // An immutable field is refused on PATCH: readOnly keeps it out of what a client is told to send.
  return writable.map((f) => {
    const meta = fieldMeta(f, { ...updateRules.get(f.name), ...(f.immutable ? { readOnly: true } : {}) });
    if (!f.required) return optionalField(ctx, pyAttr(f.name), inputType(ctx, f), meta);
    // A required field may be left out of a PATCH but never set to null: the schema says so
    // (check_changes refuses the null with its own message).
    const skip = ctx.imp.add("pydantic.json_schema", "SkipJsonSchema");
    return optionalField(ctx, pyAttr(f.name), `${inputType(ctx, f)} | ${skip}[None]`, meta, false);
  });
}

/** The Filters model's fields: paging, sort, search, then equality and range filters. */
function filterModelFields(ctx: ModelContext, sortAlias: string): string[] {
  const { entity, imp } = ctx;
  const text = imp.add("app.fieldtypes", "Text");
  return [
    "    limit: int = Field(100, ge=1, le=1000)",
    // OFFSET is a BIGINT in PostgreSQL.
    `    offset: int = Field(0, ge=0, le=${2n ** 63n - 1n})`,
    `    sort: ${sortAlias} | None = Field(None, description="A field to sort by, \`-field\` for descending")`,
    `    q: ${text} | None = Field(None, description="Case-insensitive search over the text fields")`,
    `    after: ${text} | None = Field(None, description="Cursor from \`next_cursor\` of the previous page")`,
    '    with_total: bool = Field(True, description="False skips counting the matching records (`total` is null)")',
    ...filterFields(entity).map((f) => {
      const t = f.enum && f.enum.length > 0 ? queryEnum(ctx, f) : baseType(f, imp, "query");
      const attr = pyAttr(f.name);
      return attr === f.name ? line(attr, `${t} | None`, "None") : line(attr, `${t} | None`, `Field(None, alias=${pyStr(f.name)})`);
    }),
    ...rangeFields(entity).flatMap((f) => {
      const t = baseType(f, imp, "query");
      return (["from", "to"] as const).map((end) => {
        const name = `${f.name}_${end}`;
        const attr = pyAttr(name);
        const bound = end === "from" ? "on or after" : "on or before";
        const meta = [
          ...(attr === name ? [] : [kw("alias", pyStr(name))]),
          kw("description", str(`Records with \`${f.name}\` ${bound} this value`)),
        ];
        return line(attr, `${t} | None`, call("Field", ["None", ...meta]));
      });
    }),
  ];
}

/**
 * A field as responses carry it: always present; null only where the column allows it (the same
 * rule as the postgres target's NOT NULL); enums and constraints typed as on input.
 */
function publicField(ctx: ModelContext, f: FieldIR): string {
  const typed = f.writable || (f.enum !== null && f.enum.length > 0);
  const t = typed ? inputType(ctx, f) : baseType(f, ctx.imp, "response");
  const meta = fieldMeta(f);
  const attr = pyAttr(f.name);
  if (!f.nullable) {
    if (meta.length === 0) return line(attr, t, null);
    ctx.imp.add("pydantic", "Field");
    return line(attr, t, call("Field", meta));
  }
  return optionalField(ctx, attr, t, meta);
}
