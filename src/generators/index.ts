export { blockHeader, GENERATED_NOTICE, hashHeader, slashHeader, sqlHeader } from "./header.js";
export { ALL_TARGETS, GENERATORS, generateTarget, resolveTargets, targetNames, UnknownTargetError } from "./registry.js";
export type { GeneratedFile, Generator, GeneratorInput } from "./types.js";
export type { WriteOptions, WriteResult } from "./writer.js";
export { checkFiles, readExisting, safeJoin, writeFiles } from "./writer.js";
