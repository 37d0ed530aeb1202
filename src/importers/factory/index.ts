import { readdirSync, statSync } from "node:fs";
import { extname } from "node:path";
import type { ImportModel } from "../model.js";
import { ImportError } from "../model.js";
import type { SqlDialect } from "./sql.js";

export type FactoryFormat = "openapi" | "sql" | "prisma";
export const FACTORY_FORMATS: readonly FactoryFormat[] = ["openapi", "sql", "prisma"];

/**
 * The input format: `--from` when given; otherwise a `.prisma` file is a Prisma schema, a `.sql`
 * file or a directory is SQL (migration files), and anything else is an API spec.
 */
export function detectFormat(file: string, format?: string): FactoryFormat {
  if (format !== undefined) {
    if (!(FACTORY_FORMATS as readonly string[]).includes(format))
      throw new ImportError(`unknown format '${format}' (openapi, sql, prisma)`);
    return format as FactoryFormat;
  }
  const ext = extname(file).toLowerCase();
  if (ext === ".prisma") return "prisma";
  if (ext === ".sql") return "sql";
  try {
    if (statSync(file).isDirectory()) return readdirSync(file).some((f) => f.endsWith(".prisma")) ? "prisma" : "sql";
  } catch {
    // A missing file is reported by the reader, with its name.
  }
  return "openapi";
}

/** Parses the input into the neutral model, with the adapter of its format. */
export async function readModel(file: string, format: FactoryFormat, dialect?: SqlDialect): Promise<ImportModel> {
  switch (format) {
    // Each parser loads only when its format is read.
    case "openapi":
      return (await import("./openapi.js")).readOpenApi(file);
    case "sql":
      return (await import("./sql.js")).readSqlSchema(file, dialect);
    case "prisma":
      return (await import("./prisma.js")).readPrismaSchema(file);
    default: {
      const never: never = format;
      throw new Error(`unhandled format ${String(never)}`);
    }
  }
}
