import { describe, expect, it } from "vitest";
import { readSqlSchema } from "../../src/importers/factory/sql.js";
import { files } from "./support.js";

/**
 * A migration folder is read as the schema its last migration leaves: foreign keys dropped and
 * re-added (to change their delete rule) and columns dropped with their keys, in both dialects.
 */
const INITIAL = {
  mysql: `CREATE TABLE \`User\` (\`id\` VARCHAR(191) NOT NULL, PRIMARY KEY (\`id\`));
CREATE TABLE \`Household\` (\`id\` VARCHAR(191) NOT NULL, \`ownerId\` VARCHAR(191) NOT NULL, PRIMARY KEY (\`id\`));
CREATE TABLE \`Tag\` (\`id\` VARCHAR(191) NOT NULL, \`householdId\` VARCHAR(191) NOT NULL, PRIMARY KEY (\`id\`));
ALTER TABLE \`Household\` ADD CONSTRAINT \`Household_ownerId_fkey\` FOREIGN KEY (\`ownerId\`) REFERENCES \`User\`(\`id\`) ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE \`Tag\` ADD CONSTRAINT \`Tag_householdId_fkey\` FOREIGN KEY (\`householdId\`) REFERENCES \`Household\`(\`id\`) ON DELETE RESTRICT ON UPDATE CASCADE;
`,
  postgres: `CREATE TABLE "User" ("id" TEXT PRIMARY KEY);
CREATE TABLE "Household" ("id" TEXT PRIMARY KEY, "ownerId" TEXT NOT NULL);
CREATE TABLE "Tag" ("id" TEXT PRIMARY KEY, "householdId" TEXT NOT NULL);
ALTER TABLE "Household" ADD CONSTRAINT "Household_ownerId_fkey" FOREIGN KEY ("ownerId") REFERENCES "User"("id") ON DELETE RESTRICT;
ALTER TABLE "Tag" ADD CONSTRAINT "Tag_householdId_fkey" FOREIGN KEY ("householdId") REFERENCES "Household"("id") ON DELETE RESTRICT;
`,
};
const LATER = {
  mysql: `ALTER TABLE \`Tag\` DROP FOREIGN KEY \`Tag_householdId_fkey\`;
ALTER TABLE \`Household\` DROP FOREIGN KEY \`Household_ownerId_fkey\`;
ALTER TABLE \`Household\` DROP COLUMN \`ownerId\`;
ALTER TABLE \`Tag\` ADD CONSTRAINT \`Tag_householdId_fkey\` FOREIGN KEY (\`householdId\`) REFERENCES \`Household\`(\`id\`) ON DELETE CASCADE ON UPDATE CASCADE;
`,
  postgres: `ALTER TABLE "Household" DROP COLUMN "ownerId";
ALTER TABLE "Tag" ADD CONSTRAINT "Tag_householdId_fkey2" FOREIGN KEY ("householdId") REFERENCES "Household"("id") ON DELETE CASCADE;
`,
};

describe("SQL migration folders", () => {
  for (const dialect of ["mysql", "postgres"] as const) {
    it(`${dialect}: a re-added foreign key replaces the dropped one; a dropped column takes its key`, async () => {
      const dir = files({ "1_init/migration.sql": INITIAL[dialect], "2_sharing/migration.sql": LATER[dialect] });
      const model = await readSqlSchema(dir, dialect);
      const table = (n: string) => model.tables.find((t) => t.name === n);
      expect(table("Tag")?.foreignKeys.map((fk) => [fk.columns, fk.table, fk.onDelete])).toEqual([
        [["householdId"], "Household", "cascade"],
      ]);
      expect(table("Household")?.fields.map((f) => f.name)).toEqual(["id"]);
      expect(table("Household")?.foreignKeys).toEqual([]);
    });
  }
});
