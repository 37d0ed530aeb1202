export { blockHeader, GENERATED_NOTICE, hashHeader, OWNED_NOTICE, ownedHeader, slashHeader, sqlHeader } from "./header.js";
export { GenerationThreads } from "./parallel.js";
export { ALL_TARGETS, GENERATORS, generateTarget, resolveTargets, targetNames, UnknownTargetError } from "./registry.js";
export type { GeneratedFile, GenerationWarning, Generator, GeneratorInput } from "./types.js";
export type { KeptFile, KeptReason, WriteOptions, WriteResult } from "./writer.js";
export { checkFiles, MANIFEST_FILE, readExisting, safeJoin, writeFiles } from "./writer.js";
