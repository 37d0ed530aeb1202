#!/usr/bin/env node
import { charterProgram } from "./program.js";
import { runProgram } from "./run.js";

await runProgram(await charterProgram(process.argv[2]));
