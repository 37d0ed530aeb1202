import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { Command, Option } from "commander";
import { parse } from "yaml";
import { NAME_PATTERN } from "../../contracts/fqn.js";
import { detectFormat, FACTORY_FORMATS, type FactoryFormat, readModel } from "../../importers/factory/index.js";
import { readSource } from "../../importers/factory/read.js";
import type { SqlDialect } from "../../importers/factory/sql.js";
import type { FidelityReport } from "../../importers/fidelity.js";
import { ImportError } from "../../importers/model.js";
import { summaryJson, summaryText } from "../../importers/report.js";
import { compareOpenApi, roundTripText } from "../../importers/round-trip.js";
import { formatOption, UserError } from "../output.js";

interface MigrateOptions {
  domain: string;
  from?: FactoryFormat;
  dialect?: SqlDialect;
  output?: string;
  format: string;
  force?: boolean;
  routes?: boolean;
  pages?: boolean;
  workflows: boolean;
  dryRun?: boolean;
  llm: boolean;
  report?: string;
}

/** `charter factory migrate`: an API spec, SQL schema or Prisma schema -> contracts. */
export function factoryCommand(): Command {
  const factory = new Command("factory").description("import existing schemas as contracts");
  const migrate = factory
    .command("migrate")
    .description("migrate an OpenAPI/Swagger spec (default), a SQL schema or a Prisma schema to contracts")
    .argument("<file>", "spec file, .sql file or directory of migrations, or schema.prisma")
    .addOption(new Option("--from <kind>", "what FILE is (default: by extension, else openapi)").choices([...FACTORY_FORMATS]))
    .addOption(new Option("--dialect <dialect>", "SQL dialect (default: detected)").choices(["postgres", "mysql"]))
    .option("--routes", "a Route per entity (an OpenAPI spec gets routes for its paths anyway)")
    .option("--dry-run", "write nothing; print what would be written");
  withImportOptions(migrate).action(async (file: string, opts: MigrateOptions) => {
    const target = importTarget(opts);
    try {
      // readModel loads the parser of its format only: other commands never pay for them.
      const { planImport, writeImport } = await import("../../importers/pipeline.js");
      const format = detectFormat(file, opts.from);
      const model = await readModel(file, format, opts.dialect);
      const options = {
        domain: opts.domain,
        directory: target.directory,
        routes:
          format === "openapi"
            ? opts.routes
              ? ("all" as const)
              : ("operations" as const)
            : opts.routes
              ? ("all" as const)
              : ("none" as const),
        pages: opts.pages === true,
        workflows: opts.workflows,
      };
      const plan = await planImport(model, { ...options, llm: opts.llm });
      const summary = writeImport(model, plan, { ...options, force: opts.force === true, dryRun: opts.dryRun === true });
      process.stdout.write(target.json ? summaryJson(summary) : summaryText(summary));
      if (opts.report) writeFidelityReport(opts.report, summary.fidelity);
      if (summary.refused !== null) process.exitCode = 1;
    } catch (e) {
      if (e instanceof ImportError) throw new UserError(e.message);
      throw e;
    }
  });
  factory
    .command("compare")
    .description("compare an original OpenAPI spec with a generated app's OpenAPI (a file or a URL), by path and schema")
    .argument("<original>", "the spec that was imported")
    .argument("<generated>", "the generated app's openapi.json, as a file or http(s) URL")
    .addOption(formatOption())
    .action(async (original: string, generated: string, opts: { format: string }) => {
      try {
        const a = await readSpecObject(original);
        const b = /^https?:\/\//.test(generated) ? await fetchJson(generated) : await readSpecObject(generated);
        const result = compareOpenApi(a, b);
        process.stdout.write(opts.format === "json" ? `${JSON.stringify(result, null, 2)}\n` : roundTripText(result));
      } catch (e) {
        if (e instanceof ImportError) throw new UserError(e.message);
        throw e;
      }
    });
  return factory;
}

async function readSpecObject(file: string): Promise<Record<string, unknown>> {
  const value: unknown = parse(readSource(file));
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw new ImportError("not a spec (a mapping was expected)", { file });
  return value as Record<string, unknown>;
}

async function fetchJson(url: string): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  } catch (e) {
    throw new ImportError(`cannot fetch ${url}: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!res.ok) throw new ImportError(`cannot fetch ${url}: HTTP ${res.status}`);
  return (await res.json()) as Record<string, unknown>;
}

/** The options `factory migrate` and `extract` share: domain, where to write, what to add, the LLM. */
export function withImportOptions(cmd: Command): Command {
  return cmd
    .requiredOption("-d, --domain <domain>", "domain of the contracts (snake_case)")
    .option("-o, --output <dir>", "domain directory to write (default: domains/<domain>)")
    .addOption(formatOption())
    .option("--force", "replace contract files that already exist")
    .option("--pages", "a Page per entity")
    .option("--no-workflows", "never turn status enums into workflows")
    .option("--no-llm", "never ask an LLM, even when one is configured")
    .option("--report <file>", "write the fidelity report (every fact carried, changed or left out) as JSON");
}

/** `--report FILE`: the fidelity report as JSON, for a bench or a reviewer to read. */
export function writeFidelityReport(file: string, report: FidelityReport): void {
  try {
    mkdirSync(dirname(resolve(file)), { recursive: true });
    writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  } catch (e) {
    // The contracts are written by now: say which report could not be, and fail the command.
    throw new UserError(`cannot write the fidelity report ${file}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Where an import writes (`--output`, a folder) and whether it reports in JSON (`--format`). */
export function importTarget(opts: { domain: string; output?: string; format: string }): { directory: string; json: boolean } {
  if (!new RegExp(NAME_PATTERN).test(opts.domain)) throw new UserError(`domain '${opts.domain}' does not match '${NAME_PATTERN}'`, 2);
  return { directory: opts.output ?? join("domains", opts.domain), json: opts.format === "json" };
}
