// A synthetic domain generator shared by the benchmarks.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * A domain of `n` entities: references to earlier entities, one workflow per 10, a route and page per
 * 5 (each `every` may be changed; 0 writes none).
 */
export function writeSyntheticDomain(dir, n, every = {}) {
  const { workflow = 10, route = 5, page = 5 } = every;
  const each = (k, i) => k > 0 && i % k === 0;
  const name = (i) => `thing_${String(i).padStart(4, "0")}`;
  const put = (rel, text) => {
    mkdirSync(join(dir, rel, ".."), { recursive: true });
    writeFileSync(join(dir, rel), text);
  };
  for (let i = 0; i < n; i++) {
    const wf = each(workflow, i) ? `  state_machine: workflow/synth/flow_${name(i)}\n` : "";
    const refs =
      i > 0
        ? `    parent_id:\n      type: uuid\n      references:\n        entity: entity/synth/${name(i - 1)}\n        display: title\n        graph_edge: CHILD_OF\n` +
          (i > 1 ? `    other_id:\n      type: uuid\n      references:\n        entity: entity/synth/${name(Math.floor(i / 2))}\n` : "")
        : "";
    put(
      `entities/${name(i)}.contract.yaml`,
      `apiVersion: charter/v1\nkind: Entity\nmetadata:\n  name: ${name(i)}\n  domain: synth\nspec:\n  number_prefix: TH\n${wf}  mixins: [mixin/stdlib/identifiable, mixin/stdlib/timestamped]\n  fields:\n    title:\n      type: string\n      required: true\n      constraints: {minLength: 1, maxLength: 200}\n    body: {type: text}\n    size: {type: integer, default: 1, constraints: {min: 0, max: 100}}\n    level:\n      type: string\n      enum: [low, medium, high, critical]\n      default: low\n    done: {type: boolean, default: false}\n${refs}`,
    );
    if (each(workflow, i)) {
      put(
        `workflows/flow_${name(i)}.contract.yaml`,
        `apiVersion: charter/v1\nkind: Workflow\nmetadata:\n  name: flow_${name(i)}\n  domain: synth\nspec:\n  initial: open\n  states:\n    open: {label: Open, category: open}\n    working: {label: Working, category: open}\n    done: {label: Done, category: closed, terminal: true}\n  transitions:\n    open: [working, done]\n    working: [open, done]\n    done: []\n  guards:\n    "working -> done":\n      require_fields: [body]\n      condition: "size > 0 and level != 'critical'"\n`,
      );
    }
    if (each(route, i)) {
      put(
        `routes/${name(i)}_api.contract.yaml`,
        `apiVersion: charter/v1\nkind: Route\nmetadata:\n  name: ${name(i)}_api\n  domain: synth\nspec:\n  entity: entity/synth/${name(i)}\n  endpoints:\n    - method: POST\n      path: /${name(i).replace(/_/g, "-")}s\n      validation:\n        - rule: "len(title) >= 1 and size <= 100"\n          on_fail: {status: 422, error: validation_error}\n      side_effects:\n        - emit_event: ${name(i)}_created\n`,
      );
    }
    if (each(page, i)) {
      put(
        `pages/${name(i)}.contract.yaml`,
        `apiVersion: charter/v1\nkind: Page\nmetadata:\n  name: ${name(i)}\n  domain: synth\nspec:\n  route: /${name(i).replace(/_/g, "-")}\n  entity: entity/synth/${name(i)}\n  generation_tier: mechanical\n  views:\n    - {type: table, columns: [number, title, level, done]}\n`,
      );
    }
  }
}
