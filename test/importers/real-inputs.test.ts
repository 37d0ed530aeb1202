import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { convertModel } from "../../src/importers/convert.js";
import { prismaModel, readPrismaSchema } from "../../src/importers/factory/prisma.js";
import { readSqlSchema } from "../../src/importers/factory/sql.js";
import type { ImportModel } from "../../src/importers/model.js";
import { runCharter } from "../support/cli.js";
import { files, scratch } from "./support.js";

/**
 * Each failure class the import corpus showed, on a small extract of a real input of the corpus
 * (test/fixtures/import-corpus/<name>/, where the source, commit and licence are). The extracts
 * are quoted as published; the comment above each names where it comes from.
 */

function convert(model: ImportModel): {
  entities: Map<string, Record<string, Record<string, unknown>>>;
  notes: string[];
  workflows: string[];
} {
  const c = convertModel(model, { domain: "x", routes: "all", pages: false, workflows: true });
  const entities = new Map<string, Record<string, Record<string, unknown>>>();
  for (const e of c.contracts.filter((x) => x.kind === "Entity"))
    entities.set(e.name, (e.data.spec as { fields: Record<string, Record<string, unknown>> }).fields);
  return {
    entities,
    notes: c.notes.map((x) => `${x.subject}: ${x.reason}`),
    workflows: c.contracts.filter((x) => x.kind === "Workflow").map((x) => x.name),
  };
}

describe("SQL, MySQL (sakila-mysql, chinook-mysql)", () => {
  it("reads NVARCHAR, VARCHAR(n) BINARY, DEFAULT 4.99, ON UPDATE CURRENT_TIMESTAMP and SET(...), and keeps `State` a field", async () => {
    // chinook-mysql/input/Chinook_MySql.sql:51 (Customer, trimmed to a few columns)
    // sakila-mysql/input/mysql-sakila-schema.sql:292-293 (staff.password, last_update) and film's rental_rate, special_features
    const dir = files({
      "schema.sql": `CREATE TABLE \`Customer\`
(
    \`CustomerId\` INT NOT NULL,
    \`FirstName\` NVARCHAR(40) NOT NULL,
    \`State\` NVARCHAR(40),
    CONSTRAINT \`PK_Customer\` PRIMARY KEY  (\`CustomerId\`)
);
CREATE TABLE film (
  film_id SMALLINT UNSIGNED NOT NULL AUTO_INCREMENT,
  rental_rate DECIMAL(4,2) NOT NULL DEFAULT 4.99,
  special_features SET('Trailers','Commentaries','Deleted Scenes','Behind the Scenes') DEFAULT NULL,
  password VARCHAR(40) BINARY DEFAULT NULL,
  last_update TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY  (film_id)
)ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
`,
    });
    const model = await readSqlSchema(join(dir, "schema.sql"));
    const { entities, notes } = convert(model);
    expect(entities.get("customer")?.first_name).toEqual({ type: "string", required: true, constraints: { maxLength: 40 } });
    expect(entities.get("customer")?.state).toEqual({ type: "string", constraints: { maxLength: 40 } });
    const film = entities.get("film") ?? {};
    expect(film.rental_rate).toEqual({ type: "number", default: 4.99 });
    expect(film.last_update).toEqual({ type: "datetime", computed: "now_on_update" });
    expect(film.special_features).toEqual({ type: "array", items_type: "string" });
    expect(film.password).toEqual({ type: "string", constraints: { maxLength: 40 } });
    expect(notes.some((x) => x.includes("SET(Trailers, Commentaries, Deleted Scenes, Behind the Scenes) becomes an array"))).toBe(true);
    expect(notes.some((x) => x.startsWith("VARCHAR(40) BINARY: a case-sensitive"))).toBe(true);
  });
});

describe("SQL, PostgreSQL (pagila-postgres, sakila-postgres)", () => {
  it("folds partitions (ATTACH PARTITION, INHERITS) into their table, keeps domain CHECKs and leaves generated columns out", async () => {
    // pagila-postgres/input/pagila-schema.sql:56-57 (domain year), 440-455 (film, trimmed), 770-793 and 1897 (payment partitions);
    // sakila-postgres/input/postgres-sakila-schema.sql (payment_p2007_01 INHERITS payment)
    const dir = files({
      "schema.sql": `CREATE DOMAIN public.year AS integer
	CONSTRAINT year_check CHECK (((VALUE >= 1901) AND (VALUE <= 2155)));
CREATE TABLE public.film (
    film_id integer NOT NULL,
    title text NOT NULL,
    release_year public.year,
    length smallint,
    length_hours numeric(4,2) GENERATED ALWAYS AS (round(length / 60.0, 2)) VIRTUAL
);
CREATE TABLE public.payment (
    payment_id integer NOT NULL,
    amount numeric(5,2) NOT NULL,
    payment_date timestamp with time zone NOT NULL
)
PARTITION BY RANGE (payment_date);
CREATE TABLE public.payment_p2022_01 (
    payment_id integer NOT NULL,
    amount numeric(5,2) NOT NULL,
    payment_date timestamp with time zone NOT NULL
);
ALTER TABLE ONLY public.payment ATTACH PARTITION public.payment_p2022_01 FOR VALUES FROM ('2022-01-01 00:00:00+00') TO ('2022-02-01 00:00:00+00');
CREATE TABLE payment_p2007_01 (
    CONSTRAINT payment_p2007_01_payment_date_check CHECK (((payment_date >= '2007-01-01 00:00:00'::timestamp without time zone) AND (payment_date < '2007-02-01 00:00:00'::timestamp without time zone)))
)
INHERITS (payment);
ALTER TABLE ONLY payment_p2007_01 ADD CONSTRAINT payment_p2007_01_pkey PRIMARY KEY (payment_id);
`,
    });
    const model = await readSqlSchema(join(dir, "schema.sql"));
    expect(model.tables.map((t) => t.name).sort()).toEqual(["film", "payment"]);
    const { entities, notes } = convert(model);
    expect(entities.get("film")?.release_year).toEqual({ type: "integer", constraints: { min: 1901, max: 2155 } });
    expect(entities.get("film")?.length_hours).toBeUndefined();
    expect(notes.some((x) => x.startsWith("film.length_hours: GENERATED ALWAYS AS"))).toBe(true);
    expect(notes.some((x) => x.startsWith("payment_p2022_01: a partition of payment"))).toBe(true);
    expect(notes.some((x) => x.startsWith("payment_p2007_01: inherits the rows of payment"))).toBe(true);
  });
});

describe("migration folders (documenso-migrations, financer-migrations)", () => {
  it("reads the <timestamp>_name/migration.sql layout in order, in the locked dialect, and follows ALTERs", async () => {
    // documenso-migrations/input: 20230404095503_initial_migration (trimmed), 20230505091928_add_past_due_value,
    // 20230621133446_migrate_field_position_to_float, 20240208135802_make_expiry_date_optional_api_tokens (shapes as published)
    const dir = files({
      "migration_lock.toml": `# Please do not edit this file manually\nprovider = "postgresql"\n`,
      "20230404095503_initial_migration/migration.sql": `-- CreateEnum
CREATE TYPE "SubscriptionStatus" AS ENUM ('ACTIVE', 'INACTIVE');
-- CreateTable
CREATE TABLE "Field" (
    "id" SERIAL NOT NULL,
    "positionX" INTEGER NOT NULL DEFAULT 0,
    "status" "SubscriptionStatus" NOT NULL DEFAULT 'INACTIVE',
    CONSTRAINT "Field_pkey" PRIMARY KEY ("id")
);
CREATE TABLE "ApiToken" (
    "id" SERIAL NOT NULL,
    "expires" TIMESTAMP(3) NOT NULL,
    "fieldId" INTEGER NOT NULL,
    CONSTRAINT "ApiToken_pkey" PRIMARY KEY ("id")
);
ALTER TABLE "ApiToken" ADD CONSTRAINT "ApiToken_fieldId_fkey" FOREIGN KEY ("fieldId") REFERENCES "Field"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
`,
      "20230505091928_add_past_due_value/migration.sql": `-- AlterEnum\nALTER TYPE "SubscriptionStatus" ADD VALUE 'PAST_DUE';\n`,
      // A backquote in a comment (\`positionX\`) no longer makes the file MySQL.
      "20230621133446_migrate_field_position_to_float/migration.sql": `-- AlterTable: \`positionX\` becomes a decimal\nALTER TABLE "Field" ALTER COLUMN "positionX" SET DATA TYPE DECIMAL(65,30);\n`,
      "20240208135802_make_expiry_date_optional_api_tokens/migration.sql": `-- AlterTable
ALTER TABLE "ApiToken" ALTER COLUMN "expires" DROP NOT NULL;
ALTER TABLE "ApiToken" DROP CONSTRAINT "ApiToken_fieldId_fkey";
ALTER TABLE "ApiToken" ADD CONSTRAINT "ApiToken_fieldId_fkey" FOREIGN KEY ("fieldId") REFERENCES "Field"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "ApiToken" RENAME COLUMN "expires" TO "expiresAt";
`,
    });
    const model = await readSqlSchema(dir);
    expect(model.files.map((f) => f.slice(dir.length + 1))).toEqual([
      "20230404095503_initial_migration/migration.sql",
      "20230505091928_add_past_due_value/migration.sql",
      "20230621133446_migrate_field_position_to_float/migration.sql",
      "20240208135802_make_expiry_date_optional_api_tokens/migration.sql",
    ]);
    const field = model.tables.find((t) => t.name === "Field");
    expect(field?.fields.find((f) => f.name === "status")?.enum).toEqual(["ACTIVE", "INACTIVE", "PAST_DUE"]);
    expect(field?.fields.find((f) => f.name === "positionX")?.type).toBe("number");
    const token = model.tables.find((t) => t.name === "ApiToken");
    expect(token?.fields.find((f) => f.name === "expiresAt")?.required).toBe(false);
    expect(token?.foreignKeys).toEqual([expect.objectContaining({ columns: ["fieldId"], table: "Field", onDelete: "cascade" })]);
    const { entities } = convert(model);
    expect(entities.get("api_token")?.field_id).toMatchObject({ references: { entity: "entity/x/field", on_delete: "cascade" } });
  });
});

describe("Prisma (financer-prisma-folder, documenso-prisma)", () => {
  it("reads a multi-file schema folder as one schema", () => {
    const dir = join("test/fixtures/import-corpus/financer-prisma-folder/input");
    const model = readPrismaSchema(dir);
    expect(model.files.length).toBe(readdirSync(dir).filter((f) => f.endsWith(".prisma")).length);
    // A relation across files: transaction.prisma points at account.prisma's Account.
    expect(model.tables.find((t) => t.name === "Transaction")?.foreignKeys.map((f) => f.table)).toContain("Account");
  });

  it("turns UPPER_CASE status enums into workflows, carries onDelete, keeps now() defaults writable and says what it changed", () => {
    // documenso-prisma/input/schema.prisma: enum SubscriptionStatus, model Subscription (trimmed), enum Role, User.roles, Json fields
    const model = prismaModel(
      `enum SubscriptionStatus {
  ACTIVE
  PAST_DUE
  INACTIVE
}

enum Role {
  ADMIN
  USER
}

model User {
  id        Int      @id @default(autoincrement())
  name      String?
  roles     Role[]   @default([USER])
  lastSignedIn DateTime @default(now())
  customerId String?
}

model Subscription {
  id                Int                @id @default(autoincrement())
  status            SubscriptionStatus @default(INACTIVE)
  planId            String             @unique
  data              Json?
  userId            Int?
  user              User?              @relation(fields: [userId], references: [id], onDelete: SetNull)
  teamId            Int
  team              User               @relation("team", fields: [teamId], references: [id], onDelete: Cascade)
  search            Unsupported("tsvector")?
}
`,
      "schema.prisma",
    );
    const { entities, notes, workflows } = convert(model);
    expect(workflows).toEqual(["subscription_lifecycle"]);
    const sub = entities.get("subscription") ?? {};
    expect(sub.user_id).toMatchObject({ references: { entity: "entity/x/user" } });
    // set_null is the default of an optional reference: nothing to write.
    expect(sub.user_id?.references).not.toHaveProperty("on_delete");
    expect(sub.team_id).toMatchObject({ required: true, references: { entity: "entity/x/user", on_delete: "cascade" } });
    expect(entities.get("user")?.last_signed_in).toEqual({ type: "datetime" });
    expect(notes).toContain(
      "User.lastSignedIn: @default(now()) has no contract equivalent outside a creation time; the field is optional instead",
    );
    expect(notes).toContain("User.roles: a list of Role values: a contract array has no enum of its items; kept as an array of strings");
    expect(notes).toContain(
      "Subscription.data: Json becomes an object field: JSON arrays and plain values are refused by the contract's type",
    );
    expect(notes.some((x) => x.includes("UPPER_CASE values are lower-case states"))).toBe(true);
    expect(notes.join("\n")).not.toContain("[object Object]");
    expect(notes.some((x) => x.includes('Unsupported("tsvector")'))).toBe(true);
  });
});

describe("extract, Django and SQLModel (django-styleguide, fastapi-template-sqlmodel)", () => {
  const extract = (dir: string): { status: number; summary: Record<string, unknown>; out: string } => {
    const out = scratch("out");
    const r = runCharter(["extract", dir, "--domain", "x", "--output", out, "--yes", "--no-llm", "--format", "json"]);
    return {
      status: r.status,
      summary: r.status === 0 ? (JSON.parse(r.stdout) as Record<string, unknown>) : {},
      out: `${r.stdout}${r.stderr}`,
    };
  };

  it("finds models that inherit a project base class, and never takes the abstract base for an entity", () => {
    // django-styleguide/input/common/models.py:1-30 (BaseModel, RandomModel trimmed)
    const dir = files({
      "common/models.py": `from django.db import models
from django.utils import timezone


class BaseModel(models.Model):
    created_at = models.DateTimeField(db_index=True, default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class RandomModel(BaseModel):
    start_date = models.DateField()
    end_date = models.DateField()
`,
    });
    const r = extract(dir);
    expect(r.status, r.out).toBe(0);
    expect(r.summary.accepted).toEqual(["random_model"]);
    expect(JSON.stringify(r.summary.notes)).toContain("abstract Django model");
  });

  it("gives a SQLModel table its inherited fields, Field(foreign_key=...) references and uuid.UUID types", () => {
    // fastapi-template-sqlmodel/input/app/models.py:14-19, 51-54, 80-95 (trimmed)
    const dir = files({
      "app/models.py": `import uuid

from sqlmodel import Field, Relationship, SQLModel


class UserBase(SQLModel):
    email: str = Field(unique=True, index=True, max_length=255)
    is_active: bool = True
    full_name: str | None = Field(default=None, max_length=255)


class User(UserBase, table=True):
    id: uuid.UUID = Field(default_factory=uuid.uuid4, primary_key=True)
    hashed_password: str


class ItemBase(SQLModel):
    title: str = Field(min_length=1, max_length=255)


class Item(ItemBase, table=True):
    id: uuid.UUID = Field(default_factory=uuid.uuid4, primary_key=True)
    owner_id: uuid.UUID = Field(foreign_key="user.id", nullable=False, ondelete="CASCADE")
    owner: User | None = Relationship(back_populates="items")
`,
    });
    const r = extract(dir);
    expect(r.status, r.out).toBe(0);
    const out = String(r.summary.directory);
    const user = runCharter(["forge", "validate", out]);
    expect(user.status, user.stdout).toBe(0);
    const userYaml = readFileSync(join(out, "entities/user.contract.yaml"), "utf8");
    expect(userYaml).toContain("email:");
    expect(userYaml).toContain("full_name:");
    const itemYaml = readFileSync(join(out, "entities/item.contract.yaml"), "utf8");
    expect(itemYaml).toMatch(/owner_id:\n\s+type: uuid\n\s+required: true\n\s+references:\n\s+entity: entity\/x\/user/);
    expect(itemYaml).toContain("on_delete: cascade");
    expect(itemYaml).toContain("title:");
  });
});

describe("all or nothing", () => {
  it("writes nothing and exits 1 when the input yields no entity (a spec without schemas: bikewise-style paths only)", () => {
    const dir = files({
      "openapi.yaml": `openapi: 3.0.0
info: {title: Incidents, version: v2}
paths:
  /v2/incidents:
    get:
      responses:
        "200": {description: No response was specified}
`,
    });
    const out = scratch("out");
    const r = runCharter(["factory", "migrate", join(dir, "openapi.yaml"), "--domain", "x", "--output", out, "--no-llm"]);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain("Nothing written");
    expect(() => readdirSync(out)).toThrow();
  });
});

describe("extract, TypeORM (nestjs-realworld-typeorm)", () => {
  it("names entities without the Entity class suffix, relations included", () => {
    // nestjs-realworld-typeorm/input/user/user.entity.ts:1-26 and article/comment.entity.ts (trimmed)
    const dir = files({
      "user/user.entity.ts": `import {Entity, PrimaryGeneratedColumn, Column} from 'typeorm';

@Entity('user')
export class UserEntity {

  @PrimaryGeneratedColumn()
  id: number;

  @Column()
  username: string;

  @Column({default: ''})
  bio: string;
}
`,
      "article/comment.entity.ts": `import { Entity, PrimaryGeneratedColumn, Column, ManyToOne } from 'typeorm';
import { UserEntity } from '../user/user.entity';

@Entity()
export class Comment {

  @PrimaryGeneratedColumn()
  id: number;

  @Column()
  body: string;

  @ManyToOne(type => UserEntity)
  author: UserEntity;
}
`,
    });
    const out = scratch("out");
    const r = runCharter(["extract", dir, "--domain", "x", "--output", out, "--yes", "--no-llm", "--routes", "--format", "json"]);
    expect(r.status, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { accepted: string[] }).accepted.sort()).toEqual(["comment", "user"]);
    expect(readFileSync(join(out, "entities/comment.contract.yaml"), "utf8")).toContain("entity: entity/x/user");
    // --routes: a Route per entity, though the code base declares none.
    expect(readdirSync(join(out, "routes")).sort()).toEqual(["comment_api.contract.yaml", "user_api.contract.yaml"]);
  });
});

describe("OpenAPI (museum-openapi31)", () => {
  const migrate = (spec: string): { status: number; out: string; dir: string } => {
    const dir = files({ "openapi.yaml": spec });
    const out = scratch("out");
    const r = runCharter(["factory", "migrate", join(dir, "openapi.yaml"), "--domain", "x", "--output", out, "--no-llm"]);
    return { status: r.status, out: `${r.stdout}${r.stderr}`, dir: out };
  };

  it("folds a resource's request and response schemas into one entity with one route", () => {
    // museum-openapi31/input/openapi.yaml:41-130 (paths, trimmed) and 369-402 (SpecialEventFields, SpecialEvent; property refs inlined)
    const r = migrate(`openapi: 3.1.0
info: {title: Redocly Museum API, version: 1.2.0}
paths:
  /special-events:
    post:
      summary: Create special events
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/SpecialEvent"}
      responses:
        "201":
          description: Created.
          content:
            application/json:
              schema: {$ref: "#/components/schemas/SpecialEvent"}
  /special-events/{eventId}:
    get:
      summary: Get special event
      parameters:
        - {name: eventId, in: path, required: true, schema: {type: string, format: uuid}}
      responses:
        "200":
          description: Success.
          content:
            application/json:
              schema: {$ref: "#/components/schemas/SpecialEvent"}
    patch:
      summary: Update special event
      parameters:
        - {name: eventId, in: path, required: true, schema: {type: string, format: uuid}}
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/SpecialEventFields"}
      responses:
        "200":
          description: Success.
          content:
            application/json:
              schema: {$ref: "#/components/schemas/SpecialEvent"}
components:
  schemas:
    SpecialEventFields:
      type: object
      properties:
        name: {type: string, example: Pirate Coding Workshop}
        location: {type: string}
        price: {type: number, format: float}
    SpecialEvent:
      type: object
      properties:
        eventId: {type: string, format: uuid}
        name: {type: string, example: Pirate Coding Workshop}
        location: {type: string}
        price: {type: number, format: float}
      required: [name, location, price]
`);
    expect(r.status, r.out).toBe(0);
    expect(readdirSync(join(r.dir, "entities"))).toEqual(["special_event.contract.yaml"]);
    expect(readdirSync(join(r.dir, "routes"))).toEqual(["special_event_api.contract.yaml"]);
    const route = readFileSync(join(r.dir, "routes/special_event_api.contract.yaml"), "utf8");
    expect(route).toContain("method: PATCH");
    expect(route).toContain("method: GET");
    expect(r.out).toContain("one entity for the schemas of one resource: SpecialEvent, SpecialEventFields");
  });

  it("unwraps a pagination envelope and folds *Req/Patched* variants, with required-on-create and read-only fields", () => {
    // The shape drf-spectacular writes for every Django REST framework list (not from the corpus:
    // no DRF spec is in it yet): Project / ProjectRequest / PatchedProjectRequest / PaginatedProjectList.
    const r = migrate(`openapi: 3.0.3
info: {title: Projects, version: 1.0.0}
paths:
  /api/projects/:
    get:
      responses:
        "200":
          description: ""
          content:
            application/json:
              schema: {$ref: "#/components/schemas/PaginatedProjectList"}
    post:
      requestBody:
        content:
          application/json:
            schema: {$ref: "#/components/schemas/ProjectRequest"}
      responses:
        "201":
          description: ""
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Project"}
  /api/projects/{id}/:
    patch:
      parameters:
        - {name: id, in: path, required: true, schema: {type: string, format: uuid}}
      requestBody:
        content:
          application/json:
            schema: {$ref: "#/components/schemas/PatchedProjectRequest"}
      responses:
        "200":
          description: ""
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Project"}
components:
  schemas:
    Project:
      type: object
      properties:
        id: {type: string, format: uuid, readOnly: true}
        name: {type: string, maxLength: 100}
        ownerId: {type: string, format: uuid}
        created: {type: string, format: date-time, readOnly: true}
        budget: {type: integer, minimum: 0, exclusiveMinimum: true}
        settings:
          oneOf:
            - {type: object, properties: {color: {type: string}}}
            - {type: object, properties: {icon: {type: string}}}
      required: [id, name, created]
    ProjectRequest:
      type: object
      properties:
        name: {type: string, maxLength: 100}
        ownerId: {type: string, format: uuid}
      required: [name, ownerId]
    PatchedProjectRequest:
      type: object
      properties:
        name: {type: string, maxLength: 100}
    Owner:
      type: object
      properties:
        id: {type: string, format: uuid}
        email: {type: string, format: email}
    PaginatedProjectList:
      type: object
      properties:
        count: {type: integer}
        next: {type: string, nullable: true}
        results:
          type: array
          items: {$ref: "#/components/schemas/Project"}
`);
    expect(r.status, r.out).toBe(0);
    expect(readdirSync(join(r.dir, "entities")).sort()).toEqual(["owner.contract.yaml", "project.contract.yaml"]);
    const project = readFileSync(join(r.dir, "entities/project.contract.yaml"), "utf8");
    expect(project).toMatch(/name:\n\s+type: string\n\s+required: true/);
    expect(project).toMatch(/created:\n\s+type: datetime\n(?!\s+required)/);
    expect(project).toMatch(/owner_id:\n\s+type: uuid\n\s+required: true\n\s+references:\n\s+entity: entity\/x\/owner/);
    expect(r.out).toContain("PaginatedProjectList: a list envelope of Project (pagination); unwrapped, not an entity");
    expect(project).toMatch(/budget:\n\s+type: integer\n\s+constraints:\n\s+min: 1/);
    expect(project).toMatch(/settings:\n\s+type: object/);
    const route = readFileSync(join(r.dir, "routes/project_api.contract.yaml"), "utf8");
    expect(route.match(/method:/g)?.length).toBe(3);
  });
});

describe("extract, Python newer than the host's", () => {
  it("leaves out a line this Python cannot read and reads the rest of the file", () => {
    // Python 3.12's `type` statement (PEP 695) beside the fastapi-template-sqlmodel model of
    // app/models.py:80-83 (a constructed mix: the template itself keeps to older syntax).
    const dir = files({
      "app/models.py": `import uuid

from sqlmodel import Field, SQLModel

type ItemTitle = str


class Item(SQLModel, table=True):
    id: uuid.UUID = Field(default_factory=uuid.uuid4, primary_key=True)
    title: str = Field(min_length=1, max_length=255)
`,
    });
    const out = scratch("out");
    const r = runCharter(["extract", dir, "--domain", "x", "--output", out, "--yes", "--no-llm", "--format", "json"]);
    expect(r.status, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as { accepted: string[]; notes: { subject: string; reason: string }[] };
    expect(summary.accepted).toEqual(["item"]);
    const note = summary.notes.find((x) => x.subject.endsWith("models.py:5"));
    // A Python that reads it (3.12+) has nothing to leave out.
    const minor = Number(/Python 3\.(\d+)/.exec(spawnSync("python3", ["--version"], { encoding: "utf8" }).stdout)?.[1] ?? 99);
    if (minor < 12) expect(note?.reason).toContain("type ItemTitle = str");
    else expect(note).toBeUndefined();
  });
});

describe("extract, routes behind a decorator framework (nestjs-realworld-typeorm)", () => {
  it("reads NestJS @Controller routes and ties them to the entity their path names", () => {
    // lujakob/nestjs-realworld-example-app src/article/article.controller.ts:17-71 (decorators and
    // signatures kept, bodies and Swagger decorators trimmed) with src/article/article.entity.ts (trimmed).
    const dir = files({
      "article/article.entity.ts": `import { Entity, PrimaryGeneratedColumn, Column } from 'typeorm';

@Entity('article')
export class ArticleEntity {

  @PrimaryGeneratedColumn()
  id: number;

  @Column()
  slug: string;

  @Column()
  title: string;
}
`,
      "article/article.controller.ts": `import {Get, Post, Body, Put, Delete, Query, Param, Controller} from '@nestjs/common';

@Controller('articles')
export class ArticleController {

  @Get()
  async findAll(@Query() query) {}

  @Get('feed')
  async getFeed(@Query() query) {}

  @Get(':slug')
  async findOne(@Param('slug') slug) {}

  @Post()
  async create(@Body('article') articleData) {}

  @Put(':slug')
  async update(@Param() params, @Body('article') articleData) {}

  @Delete(':slug')
  async delete(@Param() params) {}
}
`,
    });
    const out = scratch("out");
    const r = runCharter(["extract", dir, "--domain", "x", "--output", out, "--yes", "--no-llm", "--format", "json"]);
    expect(r.status, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as { frameworks: string[]; notes: { subject: string; reason: string }[] };
    expect(summary.frameworks).toContain("NestJS");
    const route = readFileSync(join(out, "routes/article_api.contract.yaml"), "utf8");
    expect(route.match(/method:/g)?.length).toBe(5);
    expect(summary.notes.some((x) => x.subject === "GET /articles/feed")).toBe(true);
  });
});
