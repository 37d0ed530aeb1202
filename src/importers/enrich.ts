import { z } from "zod";
import { CONSTRAINT_KEYS, FIELD_PROPERTIES } from "../contracts/field-keys.js";
import { type JsonReply, requestJson } from "../llm/json.js";
import type { ProviderSelection } from "../llm/providers.js";
import { checkPlanned } from "./check.js";
import { type PlannedContract, plannedContract } from "./convert.js";
import type { ImportNote } from "./model.js";
import { printContract } from "./print.js";

/** Field properties and constraint keys a contract may carry; anything else an LLM returns is stripped. */
const FIELD_KEYS = new Set<string>(FIELD_PROPERTIES);
const CONSTRAINT_KEY_SET = new Set<string>(CONSTRAINT_KEYS);

const replySchema = z.object({
  entities: z
    .record(
      z.string(),
      z.object({
        description: z.string().optional(),
        fields: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
      }),
    )
    .optional(),
  workflows: z
    .array(
      z.object({
        entity: z.string(),
        field: z.string(),
        initial: z.string(),
        states: z.record(z.string(), z.record(z.string(), z.unknown())),
        transitions: z.record(z.string(), z.array(z.string())),
      }),
    )
    .optional(),
  pages: z.array(z.object({ entity: z.string(), columns: z.array(z.string()) })).optional(),
});
export type EnrichmentReply = z.infer<typeof replySchema>;

const SYSTEM = `You improve data-model contracts that were imported deterministically from an existing schema.
Reply with ONE JSON object and nothing else, of this shape (every key optional):
{"entities": {"<entity>": {"description": "<one sentence>", "fields": {"<field>": {"description": "<one sentence>"}}}},
 "workflows": [{"entity": "<entity>", "field": "<its status-like enum field>", "initial": "<value>",
   "states": {"<value>": {"label": "<Label>", "category": "open|hold|closed", "terminal": false}},
   "transitions": {"<value>": ["<value>", ...]}}],
 "pages": [{"entity": "<entity>", "columns": ["<field>", ...]}]}
Only describe fields that exist. Field properties allowed: description, required, immutable, default, format, enum,
items_type, constraints (min, max, minLength, maxLength, pattern). Propose a workflow only for an enum field whose
values are clearly a lifecycle; its states are exactly the enum values.`;

export interface Enrichment {
  contracts: PlannedContract[];
  notes: ImportNote[];
  /** What the run says about the LLM: which provider, and whether its reply was used. */
  status: string;
}

/**
 * Asks the configured LLM to enrich the deterministic result (descriptions, workflows from status
 * enums, pages). Everything it returns is stripped to the contract whitelists, applied only to
 * entities and fields that exist, marked as coming from the LLM, and validated with the rest; a
 * suggestion that does not validate is dropped and the deterministic contract kept. A reply that
 * cannot be used at all leaves the deterministic result untouched.
 */
export async function enrichContracts(
  contracts: readonly PlannedContract[],
  directory: string,
  domain: string,
  model: ProviderSelection,
  source: string,
): Promise<Enrichment> {
  const entities = contracts.filter((c) => c.kind === "Entity");
  const prompt = `The contracts imported from ${source} (domain ${domain}):\n\n${entities.map((c) => printContract(withoutSource(c))).join("---\n")}`;
  const reply: JsonReply<EnrichmentReply> = await requestJson({ model, system: SYSTEM, prompt, schema: replySchema, temperature: 0 });
  const label = `${model.provider}:${model.model}`;
  if (!reply.ok) {
    return {
      contracts: [...contracts],
      notes: [{ kind: "skipped", subject: "LLM enrichment", reason: `${reply.message}; the deterministic result is kept` }],
      status: `LLM ${label}: reply not usable (${reply.kind}); deterministic result kept`,
    };
  }
  const notes: ImportNote[] = [];
  const enriched = applyEnrichment(contracts, reply.value, domain, notes);
  // Validate; any contract the LLM touched that fails goes back to its deterministic version.
  let current = enriched;
  for (let round = 0; round < 5; round++) {
    const checked = checkPlanned(current, directory);
    const bad = checked.rejected.filter((r) => (r.contract.fromLlm ?? []).length > 0);
    if (bad.length === 0) break;
    const revert = new Set(bad.map((r) => r.contract.entity));
    for (const r of bad) {
      notes.push({
        kind: "skipped",
        subject: `LLM suggestion for ${r.contract.fqn}`,
        reason: `fails validation (${r.findings[0]?.message ?? "its entity failed"}); the deterministic contract is kept`,
      });
    }
    current = [...current.filter((c) => !revert.has(c.entity)), ...contracts.filter((c) => revert.has(c.entity))];
  }
  const used = current.filter((c) => (c.fromLlm ?? []).length > 0).length;
  return { contracts: current, notes, status: `LLM ${label}: ${used} contract(s) enriched` };
}

export function applyEnrichment(
  contracts: readonly PlannedContract[],
  reply: EnrichmentReply,
  domain: string,
  notes: ImportNote[],
): PlannedContract[] {
  const out: (PlannedContract & { fromLlm: string[] })[] = contracts.map((c) => ({
    ...c,
    data: structuredClone(c.data),
    fromLlm: [...(c.fromLlm ?? [])],
  }));
  const entity = (name: string): (PlannedContract & { fromLlm: string[] }) | undefined =>
    out.find((c) => c.kind === "Entity" && c.name === name);
  for (const [name, e] of Object.entries(reply.entities ?? {})) {
    const c = entity(name);
    if (!c) continue;
    const metadata = c.data.metadata as Record<string, unknown>;
    if (e.description && !metadata.description) {
      metadata.description = e.description;
      c.fromLlm.push("metadata.description");
    }
    const fields = (c.data.spec as { fields: Record<string, Record<string, unknown>> }).fields;
    for (const [field, props] of Object.entries(e.fields ?? {})) {
      const def = fields[field];
      if (!def) continue;
      for (const [key, value] of Object.entries(props)) {
        if (!FIELD_KEYS.has(key) || key === "type" || key === "references" || key === "computed") {
          notes.push({ kind: "skipped", subject: `LLM ${name}.${field}.${key}`, reason: "not an allowed field property here; stripped" });
          continue;
        }
        let v = value;
        if (key === "constraints" && v !== null && typeof v === "object") {
          v = Object.fromEntries(Object.entries(v as Record<string, unknown>).filter(([k]) => CONSTRAINT_KEY_SET.has(k)));
        }
        if (def[key] !== undefined && key !== "description") continue;
        def[key] = v;
        c.fromLlm.push(`fields.${field}.${key}`);
      }
    }
  }
  for (const wf of reply.workflows ?? []) {
    const c = entity(wf.entity);
    if (!c) continue;
    const spec = c.data.spec as { fields: Record<string, Record<string, unknown>>; state_machine?: string };
    const def = spec.fields[wf.field];
    if (spec.state_machine || !def || !Array.isArray(def.enum)) continue;
    const states = Object.fromEntries(
      Object.entries(wf.states).map(([k, s]) => [
        k,
        Object.fromEntries(Object.entries(s).filter(([p]) => ["label", "category", "terminal", "color"].includes(p))),
      ]),
    );
    const w = plannedContract(
      "Workflow",
      `${wf.entity}_lifecycle`,
      domain,
      wf.entity,
      { initial: wf.initial, states, transitions: wf.transitions },
      `Lifecycle of ${wf.entity}, suggested by an LLM from '${wf.field}'`,
    );
    delete spec.fields[wf.field];
    spec.state_machine = w.fqn;
    c.fromLlm.push(`state_machine (was field ${wf.field})`);
    out.push({ ...w, fromLlm: ["spec"] });
  }
  for (const p of reply.pages ?? []) {
    const c = entity(p.entity);
    if (!c || out.some((x) => x.kind === "Page" && x.entity === p.entity)) continue;
    // A Page on an entity no Route serves does not compile; the suggestion cannot stand alone.
    if (!out.some((x) => x.kind === "Route" && x.entity === p.entity)) continue;
    const fields = (c.data.spec as { fields: Record<string, unknown> }).fields;
    const columns = p.columns.filter((col) => col in fields);
    if (columns.length === 0) continue;
    const plural = `${p.entity}s`;
    const page = plannedContract("Page", `${p.entity}_page`, domain, p.entity, {
      route: `/${plural.replace(/_/g, "-")}`,
      entity: c.fqn,
      generation_tier: "mechanical",
      views: [{ type: "table", default: true, columns }],
    });
    out.push({ ...page, fromLlm: ["spec"] });
  }
  return out;
}

function withoutSource(c: PlannedContract): PlannedContract {
  const { source: _source, ...rest } = c;
  return rest;
}
