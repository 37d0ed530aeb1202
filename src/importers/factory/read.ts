import { readFileSync, statSync } from "node:fs";
import { ImportError } from "../model.js";

/** Inputs larger than this are refused: a schema is never hundreds of megabytes. */
export const MAX_INPUT_BYTES = 64 * 1024 * 1024;

/** Reads an input file as UTF-8 text, turning every way it can fail into a located error. */
export function readSource(file: string): string {
  let size: number;
  try {
    const st = statSync(file);
    if (!st.isFile()) throw new ImportError("not a file", { file });
    size = st.size;
  } catch (e) {
    if (e instanceof ImportError) throw e;
    throw new ImportError(`cannot read: ${reason(e)}`, { file });
  }
  if (size > MAX_INPUT_BYTES) throw new ImportError(`file is ${size} bytes, over the limit of ${MAX_INPUT_BYTES}`, { file });
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (e) {
    throw new ImportError(`cannot read: ${reason(e)}`, { file });
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes).replace(/^\uFEFF/, "");
  } catch {
    throw new ImportError("not UTF-8 text", { file });
  }
}

function reason(e: unknown): string {
  const code = (e as { code?: string }).code;
  if (code === "ENOENT") return "no such file";
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  if (code === "EISDIR") return "is a directory";
  return e instanceof Error ? e.message : String(e);
}
