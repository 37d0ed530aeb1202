import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import ts from "typescript";
import { readSource } from "../factory/read.js";
import type {
  ContractType,
  FactKind,
  ForeignKey,
  ImportField,
  ImportNote,
  ImportOperation,
  ImportTable,
  SourceLocation,
} from "../model.js";
import { unforeseen } from "./python.js";

export interface TypeScriptFindings {
  frameworks: Set<string>;
  tables: ImportTable[];
  operations: ImportOperation[];
  notes: ImportNote[];
}

interface RouteCall {
  receiver: string;
  method: string;
  path: string;
  location: SourceLocation;
}

const METHODS = new Set(["get", "post", "put", "patch", "delete"]);

/**
 * TypeORM entities and Express routes, read with the TypeScript compiler's parser (syntax only:
 * no type checking, no module resolution beyond relative imports, nothing executed).
 */
export function readTypeScriptFiles(files: readonly string[]): TypeScriptFindings {
  const out: TypeScriptFindings = { frameworks: new Set(), tables: [], operations: [], notes: [] };
  const sources = files.map((f) => ts.createSourceFile(f, readSource(f), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS));
  const enums = enumsOf(sources);
  const routesByFile = new Map<string, RouteCall[]>();
  const mounts: Mount[] = [];
  for (const sf of sources) routesByFile.set(sf.fileName, readFile(sf, enums, out, mounts));
  referenceTypes(out.tables);
  out.operations.push(...mountedRoutes(routesByFile, mounts));
  return out;
}

/** The enums of all files: their values, and each one's members by name. */
interface Enums {
  values: Map<string, (string | number)[]>;
  /** Each enum's members by name, for `@Column({ default: Role.Reader })` whichever file declares the enum. */
  members: Map<string, Map<string, string | number>>;
}

/** A router mounted with `app.use('/prefix', router)`: the prefix and the file the router comes from. */
interface Mount {
  prefix: string;
  file: string;
}

function enumsOf(sources: readonly ts.SourceFile[]): Enums {
  const values = new Map<string, (string | number)[]>();
  const members = new Map<string, Map<string, string | number>>();
  for (const sf of sources) {
    sf.forEachChild((n) => {
      if (!ts.isEnumDeclaration(n)) return;
      const literal = (m: ts.EnumMember): string | number | undefined =>
        m.initializer && (ts.isStringLiteral(m.initializer) || ts.isNumericLiteral(m.initializer))
          ? (literalOf(m.initializer) as string | number)
          : undefined;
      const byName = new Map<string, string | number>();
      // A member without an initializer is its position (numeric enums); one with a string is that string.
      n.members.forEach((m, i) => byName.set(m.name.getText(sf), literal(m) ?? (m.initializer ? m.name.getText(sf) : i)));
      members.set(n.name.text, byName);
      values.set(
        n.name.text,
        n.members.map((m) => literal(m) ?? m.name.getText(sf)),
      );
    });
  }
  return { values, members };
}

/** One file's entities, controllers, frameworks and mounts into `out`; returns its Express route calls. */
function readFile(sf: ts.SourceFile, enums: Enums, out: TypeScriptFindings, mounts: Mount[]): RouteCall[] {
  const imports = new Map<string, string>();
  for (const st of sf.statements) {
    if (!ts.isImportDeclaration(st) || !ts.isStringLiteral(st.moduleSpecifier)) continue;
    const spec = st.moduleSpecifier.text;
    if (spec === "typeorm") out.frameworks.add("TypeORM");
    if (spec === "express") out.frameworks.add("Express");
    const name = st.importClause?.name?.text;
    if (name && spec.startsWith(".")) imports.set(name, resolveModule(sf.fileName, spec));
  }
  const routes: RouteCall[] = [];
  const routers = routerNames(sf);
  const syntax = (sf as unknown as { parseDiagnostics?: ts.DiagnosticWithLocation[] }).parseDiagnostics?.[0];
  if (syntax) {
    // The compiler's parser recovers from syntax errors; what it read may miss declarations.
    const p = sf.getLineAndCharacterOfPosition(syntax.start);
    out.notes.push({
      kind: "skipped",
      subject: sf.fileName,
      reason: `TypeScript syntax error: ${ts.flattenDiagnosticMessageText(syntax.messageText, " ")}; declarations after it may be missing`,
      location: { file: sf.fileName, line: p.line + 1, column: p.character + 1 },
    });
  }
  const visit = (n: ts.Node): void => {
    if (ts.isClassDeclaration(n) && decorator(n, "Entity")) out.tables.push(typeormEntity(sf, n, enums, out.notes));
    if (ts.isClassDeclaration(n) && decorator(n, "Controller")) {
      out.frameworks.add("NestJS");
      out.operations.push(...controllerRoutes(sf, n));
    }
    if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression) && ts.isIdentifier(n.expression.expression))
      routeCall(sf, n, n.expression.expression.text, n.expression.name.text, { routers, imports, routes, mounts });
    ts.forEachChild(n, visit);
  };
  try {
    visit(sf);
  } catch (e) {
    // A construct no rule foresaw is this file's to report, located; the other files still count.
    out.notes.push(unforeseen(sf.fileName, e));
  }
  return routes;
}

/**
 * `router.get('/path', handler)` is a route; `app.use('/prefix', router)` mounts an imported router.
 * `configService.get('mail.host')`, `cache.get('k', fallback)` are no routes: the receiver must be
 * an Express app or router and the first argument an HTTP path.
 */
function routeCall(
  sf: ts.SourceFile,
  n: ts.CallExpression,
  receiver: string,
  method: string,
  into: { routers: ReadonlySet<string>; imports: ReadonlyMap<string, string>; routes: RouteCall[]; mounts: Mount[] },
): void {
  const first = n.arguments[0];
  if (
    METHODS.has(method) &&
    first &&
    ts.isStringLiteral(first) &&
    n.arguments.length >= 2 &&
    isRouter(receiver, into.routers) &&
    /^(\/|\*$)/.test(first.text)
  ) {
    into.routes.push({ receiver, method: method.toUpperCase(), path: first.text, location: at(sf, n) });
  }
  const second = n.arguments[1];
  if (method === "use" && first && ts.isStringLiteral(first) && second && ts.isIdentifier(second)) {
    const file = into.imports.get(second.text);
    if (file) into.mounts.push({ prefix: first.text, file });
  }
}

/** Each Express route at every prefix its file's router is mounted at (none: the path itself). */
function mountedRoutes(routesByFile: ReadonlyMap<string, RouteCall[]>, mounts: readonly Mount[]): ImportOperation[] {
  const out: ImportOperation[] = [];
  for (const [file, routes] of routesByFile) {
    const prefixes = mounts.filter((m) => m.file === resolve(file)).map((m) => m.prefix);
    for (const r of routes) {
      for (const prefix of prefixes.length > 0 ? prefixes : [""]) {
        const path = `${prefix}${r.path === "/" ? "" : r.path}`.replace(/:([A-Za-z_]\w*)/g, "{$1}") || "/";
        out.push({ method: r.method, path, location: r.location });
      }
    }
  }
  return out;
}

/** A relation's column has the type of its target's key: a uuid for `@PrimaryGeneratedColumn("uuid")`. */
function referenceTypes(tables: readonly ImportTable[]): void {
  const byName = new Map(tables.map((t) => [t.name, t]));
  for (const t of tables) {
    for (const fk of t.foreignKeys) {
      const target = byName.get(fk.table);
      const key = target?.fields.find((f) => f.name === target.primaryKey[0]);
      const field = t.fields.find((f) => f.name === fk.columns[0]);
      if (key && field && fk.columns.length === 1) field.type = key.type;
    }
  }
}

/** Variables of the file made by `express()`, `Router()` or `express.Router()`. */
function routerNames(sf: ts.SourceFile): Set<string> {
  const out = new Set<string>();
  const visit = (n: ts.Node): void => {
    if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.initializer && ts.isCallExpression(n.initializer)) {
      const callee = n.initializer.expression.getText(sf);
      if (/^(express|(express\.)?Router)$/.test(callee)) out.add(n.name.text);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** A receiver that serves routes: made by express()/Router() in the file, or named as one (a router passed in). */
function isRouter(name: string, routers: ReadonlySet<string>): boolean {
  return routers.has(name) || /^(app|server|api|router)$|Router$/i.test(name);
}

const ROUTE_DECORATORS: Record<string, string> = { Get: "GET", Post: "POST", Put: "PUT", Patch: "PATCH", Delete: "DELETE" };

/** Routes of a decorator framework (NestJS): `@Controller('articles')` with `@Get(':slug')` methods. */
function controllerRoutes(sf: ts.SourceFile, cls: ts.ClassDeclaration): ImportOperation[] {
  const arg = decorator(cls, "Controller")?.arguments[0];
  const prefix =
    arg && ts.isStringLiteral(arg) ? arg.text : arg ? (options(decorator(cls, "Controller")).get("path")?.getText(sf) ?? "") : "";
  const out: ImportOperation[] = [];
  for (const m of cls.members) {
    if (!ts.isMethodDeclaration(m)) continue;
    for (const [name, method] of Object.entries(ROUTE_DECORATORS)) {
      const d = decorator(m, name);
      if (!d) continue;
      const sub = d.arguments[0] && ts.isStringLiteral(d.arguments[0]) ? d.arguments[0].text : "";
      const path = `/${[prefix.replace(/['"]/g, ""), sub].filter(Boolean).join("/")}`
        .replace(/\/+/g, "/")
        .replace(/:([A-Za-z_]\w*)/g, "{$1}")
        .replace(/(.)\/$/, "$1");
      out.push({ method, path, summary: m.name.getText(sf), location: at(sf, m) });
    }
  }
  return out;
}

function resolveModule(from: string, spec: string): string {
  const base = resolve(dirname(from), spec);
  for (const c of [base, `${base}.ts`, `${base}/index.ts`]) if (existsSync(c) && c.endsWith(".ts")) return c;
  return `${base}.ts`;
}

function at(sf: ts.SourceFile, n: ts.Node): SourceLocation {
  const p = sf.getLineAndCharacterOfPosition(n.getStart(sf));
  return { file: sf.fileName, line: p.line + 1, column: p.character + 1 };
}

function decorator(n: ts.Node, name: string): ts.CallExpression | undefined {
  const ds = ts.canHaveDecorators(n) ? (ts.getDecorators(n) ?? []) : [];
  for (const d of ds) {
    const e = d.expression;
    if (ts.isCallExpression(e) && ts.isIdentifier(e.expression) && e.expression.text === name) return e;
  }
  return undefined;
}

function decoratorNames(n: ts.Node): string[] {
  const ds = ts.canHaveDecorators(n) ? (ts.getDecorators(n) ?? []) : [];
  return ds.map((d) => (ts.isCallExpression(d.expression) && ts.isIdentifier(d.expression.expression) ? d.expression.expression.text : ""));
}

function literalOf(e: ts.Expression): string | number | boolean | undefined {
  if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e)) return e.text;
  if (ts.isNumericLiteral(e)) return Number(e.text);
  if (e.kind === ts.SyntaxKind.TrueKeyword) return true;
  if (e.kind === ts.SyntaxKind.FalseKeyword) return false;
  if (ts.isPrefixUnaryExpression(e) && e.operator === ts.SyntaxKind.MinusToken && ts.isNumericLiteral(e.operand))
    return -Number(e.operand.text);
  return undefined;
}

function options(call: ts.CallExpression | undefined): Map<string, ts.Expression> {
  const out = new Map<string, ts.Expression>();
  for (const a of call?.arguments ?? []) {
    if (!ts.isObjectLiteralExpression(a)) continue;
    for (const p of a.properties) if (ts.isPropertyAssignment(p)) out.set(p.name.getText(), p.initializer);
  }
  return out;
}

/** What TypeORM makes of a property's design type when the column names none (`number` is an `integer`). */
const TS_TYPES: Record<string, ContractType> = { string: "string", number: "integer", boolean: "boolean", Date: "datetime" };
const COLUMN_TYPES: Record<string, ContractType> = {
  uuid: "uuid",
  int: "integer",
  integer: "integer",
  bigint: "integer",
  smallint: "integer",
  text: "text",
  varchar: "string",
  decimal: "number",
  numeric: "number",
  float: "number",
  double: "number",
  boolean: "boolean",
  date: "date",
  timestamp: "datetime",
  timestamptz: "datetime",
  json: "object",
  jsonb: "object",
  enum: "string",
};

/** `default: () => "CURRENT_TIMESTAMP"` (or `now()`): the database's clock when the row is inserted. */
function isNowDefault(d: ts.Expression): boolean {
  if (!ts.isArrowFunction(d) || !(ts.isStringLiteral(d.body) || ts.isNoSubstitutionTemplateLiteral(d.body))) return false;
  return /^(CURRENT_TIMESTAMP(\(\d*\))?|now\(\)|LOCALTIMESTAMP)$/i.test(d.body.text.trim());
}

function typeormEntity(sf: ts.SourceFile, cls: ts.ClassDeclaration, enums: Enums, notes: ImportNote[]): ImportTable {
  // `UserEntity` is the user: the class-name suffix of the NestJS convention is no part of the name.
  const className = cls.name?.text ?? "Entity";
  const name = /^.+Entity$/.test(className) ? className.replace(/Entity$/, "") : className;
  const entityCall = decorator(cls, "Entity");
  const t: ImportTable = { name, fields: [], primaryKey: [], foreignKeys: [], location: at(sf, cls) };
  const first = entityCall?.arguments[0];
  const tableName = first && ts.isStringLiteral(first) ? first.text : options(entityCall).get("name");
  if (typeof tableName === "string") t.tableName = tableName;
  else if (tableName && ts.isStringLiteral(tableName)) t.tableName = tableName.text;
  for (const m of cls.members) {
    if (!ts.isPropertyDeclaration(m)) continue;
    const prop = m.name.getText(sf);
    const location = at(sf, m);
    const note = (kind: ImportNote["kind"], fact: FactKind, reason: string): void => {
      notes.push({ kind, subject: `${name}.${prop}`, reason, location, fact });
    };
    const member: EntityMember = { sf, m, prop, location, tsType: m.type?.getText(sf) ?? "", note };
    if (relationMember(t, member)) continue;
    if (specialColumn(t, member)) continue;
    const col = decorator(m, "Column");
    if (col) t.fields.push(plainColumn(col, member, enums));
  }
  return t;
}

/** A property of an entity class, with what its readers share. */
interface EntityMember {
  sf: ts.SourceFile;
  m: ts.PropertyDeclaration;
  prop: string;
  location: SourceLocation;
  tsType: string;
  note: (kind: ImportNote["kind"], fact: FactKind, reason: string) => void;
}

/**
 * A relation property: @ManyToOne/@OneToOne is a foreign key column (`authorId`, or its
 * @JoinColumn name), unique for @OneToOne; @ManyToMany is noted (no join entity); @OneToMany and
 * a @OneToOne without @JoinColumn are the other side's.
 * Returns whether the property was one.
 */
function relationMember(t: ImportTable, { m, prop, location, tsType, note }: EntityMember): boolean {
  const decorators = decoratorNames(m);
  if (decorators.includes("OneToMany")) return true;
  if (decorators.includes("ManyToMany")) {
    note("skipped", "reference", "a many-to-many relation needs a join entity; not created");
    return true;
  }
  const one = decorator(m, "OneToOne");
  // The side of a one-to-one without @JoinColumn holds no column: the owning side has it.
  if (one && !decorator(m, "JoinColumn")) return true;
  const rel = decorator(m, "ManyToOne") ?? one;
  if (!rel) return false;
  const target = rel.arguments[0];
  const targetName = target && ts.isArrowFunction(target) && ts.isIdentifier(target.body) ? target.body.text : tsType;
  const join = options(decorator(m, "JoinColumn")).get("name");
  const column = join && ts.isStringLiteral(join) ? join.text : `${prop}Id`;
  const relOptions = options(rel);
  const nullable = relOptions.get("nullable");
  // Its type is the target's key (an integer until referenceTypes reads the target). A one-to-one
  // is a unique foreign key: TypeORM gives its column a UNIQUE constraint.
  t.fields.push({
    name: column,
    type: "integer",
    required: nullable?.kind === ts.SyntaxKind.FalseKeyword,
    ...(rel === one ? { unique: true } : {}),
    location,
  });
  const fk: ForeignKey = { columns: [column], table: targetName.replace(/^(.+)Entity$/, "$1"), targetColumns: [] };
  const onDelete = relOptions.get("onDelete");
  // TypeORM's foreign key without onDelete is NO ACTION: the delete is refused.
  const rule = onDelete && ts.isStringLiteral(onDelete) ? onDelete.text : "NO ACTION";
  fk.onDeleteSource = rule;
  fk.onDelete = /^cascade$/i.test(rule) ? "cascade" : /^set null$/i.test(rule) ? "set_null" : "restrict";
  t.foreignKeys.push(fk);
  return true;
}

/**
 * The key and TypeORM's own columns: @PrimaryGeneratedColumn/@PrimaryColumn, @DeleteDateColumn
 * (soft delete), @CreateDateColumn/@UpdateDateColumn; a @VersionColumn is noted. Returns whether
 * the property was one of those the table now holds.
 */
function specialColumn(t: ImportTable, { m, prop, location, note }: EntityMember): boolean {
  const decorators = decoratorNames(m);
  const primary = decorator(m, "PrimaryGeneratedColumn") ?? decorator(m, "PrimaryColumn");
  if (primary) {
    const arg = primary.arguments[0];
    t.fields.push({ name: prop, type: arg && ts.isStringLiteral(arg) && arg.text === "uuid" ? "uuid" : "integer", location });
    t.primaryKey = [prop];
    return true;
  }
  if (decorators.includes("DeleteDateColumn")) {
    // TypeORM's soft delete: the row stays, stamped; the contract's soft_deletable mixin is the same
    // fact, and it is recognised by a `deleted_at` field.
    t.fields.push({ name: "deleted_at", type: "datetime", location });
    if (prop !== "deletedAt" && prop !== "deleted_at")
      note("changed", "soft_delete", `@DeleteDateColumn ${prop} becomes the soft_deletable mixin's deleted_at`);
    return true;
  }
  if (decorators.includes("VersionColumn"))
    note("skipped", "column", "@VersionColumn (optimistic locking) has no contract equivalent; left out");
  if (decorators.includes("CreateDateColumn") || decorators.includes("UpdateDateColumn")) {
    t.fields.push({
      name: prop,
      type: "datetime",
      generated: decorators.includes("CreateDateColumn") ? "now" : "now_on_update",
      // TypeORM's date columns are NOT NULL, filled with now() by the database.
      required: true,
      location,
    });
    return true;
  }
  return false;
}

/** A @Column: its type (the column's, else the property's), enum, length, unique, nullability and default. */
function plainColumn(col: ts.CallExpression, { sf, prop, location, tsType, note }: EntityMember, enums: Enums): ImportField {
  const opts = options(col);
  const typeArg = col.arguments[0] && ts.isStringLiteral(col.arguments[0]) ? col.arguments[0].text : undefined;
  const typeOpt = opts.get("type");
  const columnType = typeArg ?? (typeOpt && ts.isStringLiteral(typeOpt) ? typeOpt.text : undefined);
  const f: ImportField = {
    name: prop,
    type: (columnType ? COLUMN_TYPES[columnType] : undefined) ?? TS_TYPES[tsType] ?? "string",
    sourceType: columnType ?? tsType,
    location,
  };
  if (columnType && !COLUMN_TYPES[columnType])
    note("changed", "type", `column type ${columnType} has no contract equivalent; read as ${f.type}`);
  else if (!columnType && !TS_TYPES[tsType] && !opts.has("enum"))
    note("changed", "type", `property type ${tsType || "(none)"} read as a string`);
  const enumOpt = opts.get("enum");
  if (enumOpt && ts.isIdentifier(enumOpt) && enums.values.has(enumOpt.text)) {
    f.type = "string";
    f.enum = enums.values.get(enumOpt.text) as (string | number)[];
  }
  const length = opts.get("length");
  if (length && ts.isNumericLiteral(length)) f.constraints = { maxLength: Number(length.text) };
  const nullable = opts.get("nullable");
  if (opts.get("unique")?.kind === ts.SyntaxKind.TrueKeyword) f.unique = true;
  const d = opts.get("default");
  // TypeORM makes a column NOT NULL unless `nullable: true`, whatever its default or a `?` says;
  // the conversion turns a NOT NULL column with a default into an optional field, noted.
  f.required = nullable?.kind !== ts.SyntaxKind.TrueKeyword;
  if (d) {
    const v = literalOf(d);
    const members = enums.members;
    if (v !== undefined) f.default = v;
    else if (ts.isPropertyAccessExpression(d) && ts.isIdentifier(d.expression) && members.get(d.expression.text)?.has(d.name.text))
      // `default: Role.Reader`: the member's value, wherever the enum is declared.
      f.default = members.get(d.expression.text)?.get(d.name.text) as string | number;
    else if (isNowDefault(d) && (f.type === "datetime" || f.type === "date")) f.generated = "now";
    else note("skipped", "default", `default ${d.getText(sf)} is computed; left out`);
  }
  return f;
}
