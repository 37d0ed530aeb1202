import { Imports } from "./python.js";

/**
 * Python code that knows the imported names it uses, so that a module's imports are derived from
 * what its code names instead of found by searching its text. A `PyName` is interpolated into a
 * `py` template and renders as its local name; the template's result carries every name it (and
 * each `Code` interpolated into it) used.
 */

/** A name a module imports: `from <module> import <name>` (or `<name> as <alias>`). */
export interface PyName {
  readonly module: string;
  readonly name: string;
  readonly alias?: string;
}

/** A line (or part of one) of Python, with the imported names it uses. */
export interface Code {
  readonly text: string;
  readonly uses: readonly PyName[];
}

/** One statement; a compound one (`if ...:`) holds the statements of its block. */
export interface Statement {
  readonly code: Code;
  readonly block?: readonly Statement[];
}

export const pyName = (module: string, name: string, alias?: string): PyName => (alias ? { module, name, alias } : { module, name });

/** What the name is called in the module that imports it. */
export const localName = (n: PyName): string => n.alias ?? n.name;

const isCode = (part: unknown): part is Code => typeof part === "object" && part !== null && "text" in part && "uses" in part;

/** A tagged template: `py\`${ENFORCE}(RULES, values)\`` is the text `enforce(RULES, values)` using app.rules.enforce. */
export function py(strings: TemplateStringsArray, ...parts: readonly (string | number | PyName | Code)[]): Code {
  let text = strings[0] ?? "";
  const uses: PyName[] = [];
  parts.forEach((part, i) => {
    if (typeof part === "string" || typeof part === "number") text += String(part);
    else if (isCode(part)) {
      text += part.text;
      uses.push(...part.uses);
    } else {
      text += localName(part);
      uses.push(part);
    }
    text += strings[i + 1] ?? "";
  });
  return { text, uses };
}

/** Code of plain text that names no import (a local variable, a literal, a module constant). */
export const plain = (text: string): Code => ({ text, uses: [] });

/** A simple statement, or a compound one with its block. */
export const stmt = (code: Code, block?: readonly Statement[]): Statement => (block ? { code, block } : { code });

/** The statements as lines, each block one level (four spaces) deeper than its statement. */
export function renderStatements(statements: readonly Statement[], depth = 1): string[] {
  const pad = "    ".repeat(depth);
  return statements.flatMap((s) => [`${pad}${s.code.text}`, ...(s.block ? renderStatements(s.block, depth + 1) : [])]);
}

/** Every name the statements (and their blocks) use. */
export function statementUses(statements: readonly Statement[]): PyName[] {
  return statements.flatMap((s) => [...s.code.uses, ...(s.block ? statementUses(s.block) : [])]);
}

/** The import block of a module whose code uses `names`. */
export function importsOf(names: Iterable<PyName>): Imports {
  const imports = new Imports();
  for (const n of names) imports.add(n.module, n.alias ? `${n.name} as ${n.alias}` : n.name);
  return imports;
}
