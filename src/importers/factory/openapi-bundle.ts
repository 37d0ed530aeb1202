import { basename, dirname, extname, resolve } from "node:path";
import { parse } from "yaml";
import { asRecord as rec } from "../../contracts/unchecked.js";
import { ImportError, type SourceLocation } from "../model.js";
import { readSource } from "./read.js";

type Node = Record<string, unknown>;

/** Keys below which every value is a schema (a `$ref` there names a schema, which is hoisted). */
const SCHEMA_KEYS = new Set(["schema", "items", "additionalProperties", "not", "contains", "if", "then", "else"]);
const SCHEMA_LISTS = new Set(["allOf", "oneOf", "anyOf", "prefixItems"]);
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions"]);

/**
 * One document from a spec spread over several files: every `$ref` to another file (or to a place
 * in another file) is replaced. A schema is hoisted into `components/schemas` (`definitions` in
 * Swagger 2.0) under the name its pointer or file gives, so it names an entity as a schema of the
 * main file would; anything else (a path item, an operation, a parameter, a response) is inlined,
 * which is what a spec whose paths `$ref` whole operations in other files means. Bundling comes
 * before validation: the official schema does not allow an operation to be a `$ref`, yet real
 * multi-file specs are written that way and tools resolve them.
 */
export function bundleOpenApi(file: string, root: Node, locate: (pointer: string) => SourceLocation): Node {
  return new Bundler(file, root, locate).run();
}

class Bundler {
  private readonly docs = new Map<string, unknown>();
  private readonly hoisted = new Map<string, string>();
  private readonly inlined = new Map<string, unknown>();
  private readonly base: string;
  private readonly mainFile: string;

  constructor(
    file: string,
    private readonly root: Node,
    private readonly locate: (pointer: string) => SourceLocation,
  ) {
    this.mainFile = resolve(file);
    this.docs.set(this.mainFile, root);
    this.swagger2 = root.swagger === "2.0";
    this.base = this.swagger2 ? "#/definitions/" : "#/components/schemas/";
  }

  private readonly swagger2: boolean;
  /** The bundled document's named schemas: the main file's, then the hoisted ones. */
  private readonly schemas: Node = {};

  run(): Node {
    const own = this.swagger2 ? rec(this.root.definitions) : rec(rec(this.root.components).schemas);
    for (const name of Object.keys(own)) this.schemas[name] = {};
    // A named schema that is only a `$ref` to another file keeps its name for what it points at.
    for (const [name, v] of Object.entries(own)) {
      const ref = rec(v).$ref;
      if (typeof ref === "string" && !ref.startsWith("#")) this.hoisted.set(this.refKey(ref, this.mainFile), name);
    }
    for (const [name, v] of Object.entries(own)) {
      const ref = rec(v).$ref;
      const key = typeof ref === "string" && !ref.startsWith("#") ? this.refKey(ref, this.mainFile) : undefined;
      this.schemas[name] =
        key !== undefined
          ? this.walk(
              this.load(key.split("#")[0] as string, key.slice(key.indexOf("#") + 1), this.mainFile, [name]),
              key.split("#")[0] as string,
              true,
              ["schemas", name],
            )
          : this.walk(v, this.mainFile, true, ["schemas", name]);
    }
    const out: Node = {};
    for (const [k, v] of Object.entries(this.root)) {
      if (k === "definitions" && this.swagger2) continue;
      if (k === "components" && !this.swagger2) {
        const c: Node = {};
        for (const [ck, cv] of Object.entries(rec(v))) if (ck !== "schemas") c[ck] = this.walk(cv, this.mainFile, false, [k, ck]);
        out[k] = c;
        continue;
      }
      out[k] = this.walk(v, this.mainFile, false, [k]);
    }
    if (this.swagger2) out.definitions = this.schemas;
    else out.components = { ...rec(out.components), schemas: this.schemas };
    return out;
  }

  /** Where a problem is: line and column in the main file, the JSON pointer in another. */
  private where(file: string, at: string[]): SourceLocation {
    const pointer = `/${at.map((s) => s.replace(/~/g, "~0").replace(/\//g, "~1")).join("/")}`;
    return file === this.mainFile ? this.locate(pointer) : { file, pointer };
  }

  private refKey(ref: string, file: string): string {
    const hash = ref.indexOf("#");
    const target = hash === 0 ? file : resolve(dirname(file), decodeURI(hash < 0 ? ref : ref.slice(0, hash)));
    return `${target}#${hash < 0 ? "" : ref.slice(hash + 1)}`;
  }

  /** Copies `value`, replacing refs into other files; `schema` says whether `value` is a schema (or a map of them). */
  private walk(value: unknown, file: string, schema: boolean, at: string[]): unknown {
    if (Array.isArray(value)) return value.map((v, i) => this.walk(v, file, schema, [...at, String(i)]));
    if (value === null || typeof value !== "object") return value;
    const node = value as Node;
    const key = at[at.length - 1] ?? "";
    const parent = at[at.length - 2] ?? "";
    // A map of named schemas: `components/schemas`, `definitions`, `properties`.
    const isMap = (key === "schemas" && parent === "components") || (SCHEMA_MAPS.has(key) && schema);
    // A `$ref` in place of a whole map (`properties: {$ref: attributes.yml#/x}`) is the map itself.
    if (typeof node.$ref === "string") return this.ref(node, file, schema, at, !isMap);
    const out: Node = {};
    for (const [k, v] of Object.entries(node)) {
      const childSchema = isMap || SCHEMA_KEYS.has(k) || SCHEMA_LISTS.has(k) || (schema && !isMap && SCHEMA_MAPS.has(k));
      out[k] = this.walk(v, file, childSchema, [...at, k]);
    }
    return out;
  }

  private ref(node: Node, file: string, schema: boolean, at: string[], hoist: boolean): unknown {
    const ref = node.$ref as string;
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(ref))
      throw new ImportError(`$ref ${JSON.stringify(ref)} points at the network; only files beside the spec are read`, this.where(file, at));
    const key = this.refKey(ref, file);
    const target = key.slice(0, key.indexOf("#"));
    const pointer = key.slice(key.indexOf("#") + 1);
    if (target === this.mainFile) return { ...node, $ref: `#${pointer}` };
    if (schema && hoist) {
      let name = this.hoisted.get(key);
      if (name === undefined) {
        name = this.freeName(pointer ? decodeSegment(pointer.split("/").pop() as string) : basename(target, extname(target)));
        this.hoisted.set(key, name);
        // Reserved before walking its contents, so a schema that refers to itself ends.
        this.schemas[name] = {};
        this.schemas[name] = this.walk(this.load(target, pointer, file, at), target, true, ["components", "schemas", name]);
      }
      return { $ref: `${this.base}${name.replace(/~/g, "~0").replace(/\//g, "~1")}` };
    }
    const memo = `${key} ${schema}`;
    const done = this.inlined.get(memo);
    if (done !== undefined) return done;
    this.inlined.set(memo, {});
    const value = this.walk(this.load(target, pointer, file, at), target, schema, at);
    this.inlined.set(memo, value);
    return value;
  }

  private freeName(wanted: string): string {
    const stem = wanted.replace(/[^A-Za-z0-9_.-]/g, "_") || "Schema";
    let name = stem;
    for (let i = 2; name in this.schemas || [...this.hoisted.values()].includes(name); i++) name = `${stem}${i}`;
    return name;
  }

  private load(target: string, pointer: string, from: string, at: string[]): unknown {
    let doc = this.docs.get(target);
    if (doc === undefined) {
      let text: string;
      try {
        text = readSource(target);
      } catch (e) {
        throw new ImportError(`unresolvable $ref: ${e instanceof Error ? e.message : String(e)}`, this.where(from, at));
      }
      // A description may `$ref` a Markdown file: it is text, not a document.
      doc = /\.(ya?ml|json)$/i.test(target) ? parse(text) : text;
      this.docs.set(target, doc);
    }
    let node: unknown = doc;
    for (const raw of pointer.split("/").slice(1)) {
      node = rec(node)[decodeSegment(raw)];
      if (node === undefined) throw new ImportError(`$ref points at nothing: ${target}#${pointer}`, this.where(from, at));
    }
    return node;
  }
}

function decodeSegment(s: string): string {
  return decodeURIComponent(s).replace(/~1/g, "/").replace(/~0/g, "~");
}
