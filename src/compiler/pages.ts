import type { Contract, Reporter } from "./context.js";
import type { EntityIR, PageIR, ViewIR } from "./ir.js";

/** Builds a Page; view columns, card fields and filters must be fields of the page's entity. */
export function buildPage(reporter: Reporter, c: Contract<"Page">, entity: EntityIR | undefined): PageIR {
  const spec = c.spec;
  const fieldNames = entity ? entity.fields.map((f) => f.name) : [];
  const check = (path: (string | number)[], name: string): void => {
    if (entity && !fieldNames.includes(name)) reporter.notOneOf(c, path, name, fieldNames, "field");
  };
  const views: ViewIR[] = (spec.views ?? []).map((v, i) => {
    const columns = v.columns ?? [];
    const cardFields = v.card_fields ?? [];
    columns.forEach((f, j) => check(["spec", "views", i, "columns", j], f));
    cardFields.forEach((f, j) => check(["spec", "views", i, "card_fields", j], f));
    if (v.type === "kanban" && entity && !entity.stateMachine) {
      reporter.report(
        c,
        ["spec", "views", i, "type"],
        "page.kanban_without_workflow",
        `a kanban view needs an entity with a state_machine; ${entity.fqn} has none`,
      );
    }
    return { type: v.type, default: v.default === true, columns, cardFields };
  });
  if (views.length === 0 && entity) {
    const columns = entity.fields
      .filter((f) => !f.primaryKey && f.origin !== "system" && f.type !== "object" && f.type !== "array")
      .slice(0, 6)
      .map((f) => f.name);
    views.push({ type: "table", default: true, columns, cardFields: [] });
  }
  if (views.length > 0 && !views.some((v) => v.default)) (views[0] as ViewIR).default = true;
  // `filters` as an object is accepted by the schema and has no meaning yet: only a list names fields.
  const filters = Array.isArray(spec.filters) ? spec.filters : [];
  filters.forEach((f, i) => check(["spec", "filters", i], f));
  return {
    fqn: c.fqn,
    name: c.name,
    domain: c.domain,
    file: c.loaded.file,
    route: spec.route,
    entity: spec.entity,
    entityName: entity?.name ?? "",
    title: spec.title ?? entity?.labelPlural ?? c.name,
    generationTier: spec.generation_tier,
    views,
    filters,
    dataSources: spec.data_sources ?? [],
    displayRules: spec.display_rules ?? {},
    actions: spec.actions ?? {},
  };
}
