import { describe, expect, it } from "vitest";
import { guardedChangeReason } from "../../src/healer/proposal/guard.js";
import { diffJson } from "../../src/healer/proposal/json-patch.js";
import { reviewContractRisk } from "../../src/healer/proposal/risk.js";

describe("what a model's proposal may not change", () => {
  const entity = { kind: "Entity", metadata: { name: "order", domain: "shop" }, spec: { fields: { title: { type: "string" } } } };
  const edit = (after: Record<string, unknown>) => guardedChangeReason(entity, after, diffJson(entity, after));

  it("allows an ordinary field change", () => {
    expect(edit({ ...entity, spec: { fields: { title: { type: "text" } } } })).toBeNull();
  });

  it("refuses a new identity, auth users, roles and secrets, however deep", () => {
    expect(edit({ ...entity, kind: "Infra" })).toMatch(/turns Entity\/shop\/order into Infra\/shop\/order/);
    expect(edit({ ...entity, spec: { fields: { ...entity.spec.fields, roles: { type: "string" } } } })).toMatch(/"roles"/);
    expect(edit({ ...entity, spec: { ...entity.spec, bootstrap: { users: [{ id: "root", password: "x" }] } } })).toMatch(/"bootstrap"/);
    expect(edit({ ...entity, spec: { ...entity.spec, extra: { deep: { api_key: "k" } } } })).toMatch(/"api_key"/);
  });

  describe("a Route with roles (issue 39)", () => {
    const endpoints = [
      { method: "GET", path: "/agents", roles: ["admin", "agent"] },
      { method: "GET", path: "/agents/{id}", roles: ["admin"] },
      { method: "DELETE", path: "/agents/{id}", roles: ["admin"] },
    ];
    const route = {
      kind: "Route",
      metadata: { name: "agent_api", domain: "helpdesk" },
      spec: { entity: "entity/helpdesk/agent", global_behaviors: { roles: ["admin"] }, endpoints },
    };
    const routeEdit = (spec: Record<string, unknown>) => {
      const after = { ...route, spec: { ...route.spec, ...spec } };
      return guardedChangeReason(route, after, diffJson(route, after));
    };

    it("lets a proposal remove an endpoint that has roles, and the risk review shows the removal", () => {
      const kept = [endpoints[0], endpoints[1]];
      expect(routeEdit({ endpoints: kept })).toBeNull();
      const after = { ...route, spec: { ...route.spec, endpoints: kept } };
      const risk = reviewContractRisk(route, after, "routes/agent_api.contract.yaml", "");
      expect(risk.map((f) => f.message)).toContain("removes the endpoint DELETE /agents/{id}");
      expect(guardedChangeReason(route, after, [{ op: "remove", path: "/spec/endpoints/2", before: endpoints[2] }])).toBeNull();
    });

    it("still refuses changing the roles of an endpoint that stays, or of the whole API, removal or not", () => {
      const widened = { ...endpoints[1], roles: ["admin", "viewer"] };
      expect(routeEdit({ endpoints: [endpoints[0], widened] })).toMatch(/"roles"/);
      expect(routeEdit({ endpoints: [endpoints[0], widened, endpoints[2]] })).toMatch(/"roles"/);
      expect(routeEdit({ endpoints: [endpoints[0], { method: "POST", path: "/agents", roles: ["viewer"] }] })).toMatch(/"roles"/);
      expect(routeEdit({ global_behaviors: {}, endpoints: [endpoints[0], endpoints[1]] })).toMatch(/"roles"/);
    });

    it("refuses removing an element that carries a guarded key from any other list", () => {
      const entityWithList = { ...entity, spec: { ...entity.spec, hooks: [{ token: "a" }, { token: "b" }] } };
      const after = { ...entityWithList, spec: { ...entityWithList.spec, hooks: [{ token: "a" }] } };
      expect(guardedChangeReason(entityWithList, after, diffJson(entityWithList, after))).toMatch(/"token"/);
    });
  });
});
