import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { FIELD_TYPE_NAMES, FIELD_TYPES } from "../../src/compiler/field-types.js";
import { renderFieldTypes } from "../../src/generators/nextjs/emit-lib.js";

const common = JSON.parse(readFileSync(new URL("../../schemas/common.schema.json", import.meta.url), "utf8")) as {
  $defs: { fieldType: { enum: string[] } };
};

describe("the field table", () => {
  it("has one row per field type of the contract schema, in its order", () => {
    expect(FIELD_TYPE_NAMES).toEqual(common.$defs.fieldType.enum);
  });

  it("gives the frontend its FieldType and form widgets from the same rows", () => {
    const source = renderFieldTypes();
    const union = /export type FieldType =([^;]*);/.exec(source)?.[1] ?? "";
    expect(
      union
        .split("|")
        .map((t) => t.trim())
        .filter(Boolean),
    ).toEqual(FIELD_TYPE_NAMES.map((t) => JSON.stringify(t)));
    for (const t of FIELD_TYPE_NAMES) {
      expect(source).toMatch(new RegExp(`\\n  ${t}: \\{\\s*element: "${FIELD_TYPES[t].widget.element}"`));
    }
  });

  it("accepts ISO 8601 durations of days and times, and nothing else, as duration values", () => {
    const fits = FIELD_TYPES.duration.fits;
    for (const ok of ["PT1H30M", "P3D", "P1DT12H", "PT0.5S", "-PT1H", "PT90M"]) expect(fits(ok), ok).toBe(true);
    for (const bad of ["P", "PT", "P1Y", "P1M", "1:30:00", "PT1.5H", 90, "P1DT"]) expect(fits(bad), String(bad)).toBe(false);
    for (let i = 0; i < 3; i++) expect(fits(FIELD_TYPES.duration.sample(i))).toBe(true);
  });
});
