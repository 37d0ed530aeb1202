#!/usr/bin/env node
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Command } from "commander";
import { SCHEMA_DIR, SCHEMA_FILES } from "../contracts/index.js";
import { InvalidProjectName, scaffoldProject } from "../scaffold/index.js";
import { UserError } from "./output.js";
import { runProgram } from "./run.js";
import { VERSION } from "./version.js";

export function initProgram(): Command {
  return new Command("charter-init")
    .description("scaffold a Charter project named NAME")
    .version(VERSION)
    .argument("<name>", "project and domain name (snake_case)")
    .option("-p, --path <parent_dir>", "directory to create the project in", ".")
    .showHelpAfterError()
    .action((name: string, opts: { path: string }) => {
      const root = resolve(opts.path, name);
      let scaffold: ReturnType<typeof scaffoldProject>;
      try {
        const schemaFiles = Object.fromEntries(SCHEMA_FILES.map((f) => [f, readFileSync(join(SCHEMA_DIR, f), "utf8")]));
        scaffold = scaffoldProject(name, { schemaFiles, secret: randomBytes(32).toString("hex") });
      } catch (e) {
        if (e instanceof InvalidProjectName) throw new UserError(e.message, 2);
        throw e;
      }
      if (existsSync(root) && readdirSync(root).length > 0) {
        throw new UserError(`refusing to scaffold into ${root}: the directory exists and is not empty`);
      }
      for (const d of scaffold.directories) mkdirSync(join(root, d), { recursive: true });
      for (const f of scaffold.files) writeFileSync(join(root, f.path), f.content, { flag: "wx" });
      process.stdout.write(`Created project ${name} in ${root}\n`);
      process.stdout.write(
        `Next:\n  cd ${root}\n  charter forge validate domains/${name}\n  charter forge generate domains/${name} --target all\n`,
      );
    });
}

await runProgram(initProgram());
