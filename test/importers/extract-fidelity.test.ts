import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { ImportNote } from "../../src/importers/model.js";
import { runCharter } from "../support/cli.js";
import { files, scratch, validates } from "./support.js";

/**
 * Issue 38's code-base classes, each on a small hand-written input shaped like the public code base
 * that showed it: what `charter extract` carries, and the note (with its fact) for what it changes.
 */

interface Extracted {
  dir: string;
  notes: ImportNote[];
  fields: (entity: string) => Record<string, Record<string, unknown>>;
  spec: (entity: string) => Record<string, unknown>;
  workflow: (name: string) => Record<string, unknown>;
  about: (subject: string, fact: string) => string[];
}

function extract(input: string, domain: string): Extracted {
  const dir = scratch("out");
  const r = runCharter(["extract", input, "--domain", domain, "--output", dir, "--yes", "--no-llm", "--format", "json"]);
  expect(r.status, r.stderr).toBe(0);
  validates(dir);
  const notes = (JSON.parse(r.stdout) as { notes: ImportNote[] }).notes;
  const read = (rel: string): Record<string, unknown> =>
    (parse(readFileSync(join(dir, rel), "utf8")) as { spec: Record<string, unknown> }).spec;
  const spec = (entity: string): Record<string, unknown> => read(`entities/${entity}.contract.yaml`);
  return {
    dir,
    notes,
    spec,
    workflow: (name) => read(`workflows/${name}.contract.yaml`),
    fields: (entity) => spec(entity).fields as Record<string, Record<string, unknown>>,
    about: (subject, fact) => notes.filter((x) => x.subject === subject && x.fact === fact).map((x) => x.reason),
  };
}

describe("charter extract, Django (issue 38)", () => {
  it("reads positional and keyword on_delete, choices named by module constants and Choices classes, DurationField", () => {
    const input = files({
      "tracker/models.py": `from django.db import models

PRIORITY_CHOICES = (("low", "Low"), ("high", "High"))
DEFAULT_PRIORITY = "low"


class Stage(models.TextChoices):
    TODO = "todo", "To do"
    DONE = "done", "Done"


class Size(models.IntegerChoices):
    SMALL = 1, "Small"
    LARGE = 3, "Large"


class Project(models.Model):
    name = models.CharField(max_length=80)


class Task(models.Model):
    project = models.ForeignKey(Project, models.CASCADE)
    owner = models.ForeignKey("Project", on_delete=models.SET_NULL, null=True, related_name="owned")
    parent = models.ForeignKey("self", models.PROTECT, null=True)
    priority = models.CharField(max_length=4, choices=PRIORITY_CHOICES, default=DEFAULT_PRIORITY)
    stage = models.CharField(max_length=4, choices=Stage.choices, default=Stage.TODO)
    size = models.IntegerField(choices=Size, default=Size.LARGE)
    estimate = models.DurationField()
    spent = models.DurationField(null=True)
`,
    });
    const x = extract(input, "tracker");
    const task = x.fields("task");
    expect(task.project_id).toMatchObject({ required: true, references: { entity: "entity/tracker/project", on_delete: "cascade" } });
    expect(task.owner_id).toMatchObject({ references: { entity: "entity/tracker/project" } });
    expect(task.owner_id?.references).not.toHaveProperty("on_delete"); // set_null is an optional reference's default
    expect(task.parent_id).toMatchObject({ references: { entity: "entity/tracker/task", on_delete: "restrict" } });
    expect(task.priority).toMatchObject({ enum: ["low", "high"], default: "low" });
    // A status-like enum becomes the workflow; its default is the initial state.
    expect(x.workflow("task_lifecycle")).toMatchObject({ initial: "todo", states: { todo: {}, done: {} } });
    expect(task.size).toMatchObject({ type: "integer", enum: [1, 3], default: 3 });
    // Django's DurationField is the contract's duration type (ISO 8601), no note needed.
    expect(task.estimate).toMatchObject({ type: "duration", required: true });
    expect(task.spent).toMatchObject({ type: "duration" });
    expect(task.spent).not.toHaveProperty("required");
  });
});

describe("charter extract, SQLModel and SQLAlchemy (issue 38)", () => {
  it("reads sa_column foreign keys, enum member defaults, plain annotated defaults and default factories", () => {
    const input = files({
      "app/models.py": `import enum
import uuid
from datetime import datetime

from sqlalchemy import Column, ForeignKey, Integer, String
from sqlmodel import Field, SQLModel


class RunStatus(str, enum.Enum):
    CREATED = "created"
    RUNNING = "running"


class Session(SQLModel, table=True):
    __tablename__ = "session"
    id: int | None = Field(default=None, primary_key=True)
    title: str = Field(max_length=100)


class Run(SQLModel, table=True):
    id: uuid.UUID = Field(default_factory=uuid.uuid4, primary_key=True)
    session_id: int = Field(sa_column=Column(Integer, ForeignKey("session.id", ondelete="CASCADE"), nullable=False))
    status: RunStatus = Field(default=RunStatus.RUNNING)
    version: str = "0.0.1"
    label: str = Field(sa_column=Column(String(30), nullable=True))
    created_at: datetime = Field(default_factory=datetime.utcnow)
    seed: str = Field(default_factory=make_seed)
`,
    });
    const x = extract(input, "runs");
    const run = x.fields("run");
    expect(run.session_id).toMatchObject({
      type: "uuid",
      required: true,
      references: { entity: "entity/runs/session", on_delete: "cascade" },
    });
    // Once "CREATED does not fit": the member's value is the default, and the workflow's initial state.
    expect(x.workflow("run_lifecycle")).toMatchObject({ initial: "running", states: { created: {}, running: {} } });
    expect(x.notes.filter((note) => /does not fit/.test(note.reason))).toEqual([]);
    expect(run.version).toEqual({ type: "string", default: "0.0.1" });
    expect(run.label).toEqual({ type: "string", constraints: { maxLength: 30 } });
    expect(run).not.toHaveProperty("created_at"); // the implicit created_at
    expect(run.seed).toEqual({ type: "string" });
    expect(x.about("Run.seed", "default")).toEqual(["default_factory make_seed runs in Python; left out, the field is optional"]);
  });
});

describe("charter extract, TypeORM and NestJS (issue 38)", () => {
  it("reads @DeleteDateColumn as soft delete and enum member defaults from another file; service calls are no routes", () => {
    const input = files({
      "src/user/role.enum.ts": `export enum Role {
  Reader = "reader",
  Editor = "editor",
}
`,
      "src/user/user.entity.ts": `import { Column, CreateDateColumn, DeleteDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from "typeorm";
import { Role } from "./role.enum";

@Entity("users")
export class UserEntity {
  @PrimaryGeneratedColumn("uuid")
  id: string;

  @Column({ length: 60 })
  name: string;

  @Column({ type: "enum", enum: Role, default: Role.Editor })
  role: Role;

  @CreateDateColumn()
  createdAt: Date;

  @UpdateDateColumn()
  updatedAt: Date;

  @DeleteDateColumn()
  deletedAt?: Date;
}
`,
      "src/mail/mail.service.ts": `import { Injectable } from "@nestjs/common";
import { ConfigService } from "@nestjs/config";

@Injectable()
export class MailService {
  constructor(private readonly configService: ConfigService, private readonly cache: Map<string, string>) {}

  host(): string {
    return this.configService.get("mail.host", "localhost") ?? cache.get("/mail", "x");
  }
}

const configService = new ConfigService();
export const port = configService.get("mail.port", 25);
`,
      "src/http/routes.ts": `import express from "express";

const users = express.Router();
users.get("/users", (_req, res) => res.json([]));
users.delete("/users/:id", (_req, res) => res.status(204).end());
export default users;
`,
    });
    const x = extract(input, "accounts");
    const user = x.spec("user");
    expect(user.mixins).toEqual(expect.arrayContaining(["mixin/stdlib/soft_deletable"]));
    const fields = x.fields("user");
    expect(fields).not.toHaveProperty("deleted_at");
    expect(fields.name).toEqual({ type: "string", required: true, constraints: { maxLength: 60 } });
    expect(fields.role).toMatchObject({ enum: ["reader", "editor"], default: "editor" });
    const skippedOps = x.notes.filter((n) => /^(GET|POST|PUT|PATCH|DELETE) /.test(n.subject)).map((n) => n.subject);
    expect(skippedOps.filter((s) => /mail/.test(s))).toEqual([]);
    const routes = parse(readFileSync(join(x.dir, "routes/user_api.contract.yaml"), "utf8")) as {
      spec: { endpoints: { method: string; path: string }[] };
    };
    expect(routes.spec.endpoints.map((e) => `${e.method} ${e.path}`)).toEqual(["GET /", "DELETE /{id}"]);
  });
});

describe("charter extract, Flask-SQLAlchemy (microblog)", () => {
  it("reads db.Model classes with so.Mapped[...] columns and no __tablename__", () => {
    // Shaped like miguelgrinberg/microblog's app/models.py: module aliases, Optional, ForeignKey(User.id).
    const input = files({
      "app/models.py": `from typing import Optional
import sqlalchemy as sa
import sqlalchemy.orm as so
from app import db


class User(db.Model):
    id: so.Mapped[int] = so.mapped_column(primary_key=True)
    username: so.Mapped[str] = so.mapped_column(sa.String(64), index=True, unique=True)
    about_me: so.Mapped[Optional[str]] = so.mapped_column(sa.String(140))


class Post(db.Model):
    id: so.Mapped[int] = so.mapped_column(primary_key=True)
    body: so.Mapped[str] = so.mapped_column(sa.String(140))
    user_id: so.Mapped[int] = so.mapped_column(sa.ForeignKey(User.id), index=True)
    author: so.Mapped[User] = so.relationship(back_populates="posts")
`,
    });
    const x = extract(input, "blog");
    expect(x.fields("user")).toEqual({
      username: { type: "string", required: true, constraints: { maxLength: 64 } },
      about_me: { type: "string", constraints: { maxLength: 140 } },
    });
    expect(x.fields("post").user_id).toMatchObject({ type: "uuid", required: true, references: { entity: "entity/blog/user" } });
  });
});
