// The Python reader's output and small accessors on it, shared by python.ts (frameworks) and
// pydantic.ts (models) without either importing the other.

/** What read_models.py prints: a JSON view of Python's own `ast` of each file. */
export interface PyValue {
  kind: "const" | "name" | "call" | "list" | "subscript" | "other";
  value?: string | number | boolean | null;
  id?: string;
  func?: string;
  args?: PyValue[];
  kwargs?: Record<string, PyValue>;
  items?: PyValue[];
  source?: string;
  slice?: PyValue;
}
/** An annotation's tree read by the script: unions with None, Literal values, list items, Annotated metadata. */
export interface PyAnnotation {
  optional: boolean;
  base: string;
  metadata: PyValue[];
  literal?: (string | number | boolean)[];
  items?: string;
}
export interface PyAssign {
  name: string;
  annotation: string | null;
  type?: PyAnnotation;
  value: PyValue | null;
  line: number;
}
export interface PyClass {
  name: string;
  line: number;
  bases: string[];
  keywords: Record<string, PyValue>;
  doc: string | null;
  body: PyAssign[];
  inner: PyClass[];
}
export interface PyFile {
  path: string;
  error?: { message: string; line: number; column: number };
  imports: string[];
  classes: PyClass[];
  functions: { name: string; line: number; decorators: PyValue[] }[];
  assignments: { name: string; value: PyValue | null; line: number }[];
  /** Lines this Python could not read (newer syntax), replaced by `pass` so the rest of the file is read. */
  skipped?: { line: number; message: string; text: string }[];
}

export const str = (v: PyValue | null | undefined): string | undefined =>
  v?.kind === "const" && typeof v.value === "string" ? v.value : undefined;
export const num = (v: PyValue | null | undefined): number | undefined =>
  v?.kind === "const" && typeof v.value === "number" ? v.value : undefined;
export const last = (dotted: string): string => dotted.split(".").pop() ?? dotted;
