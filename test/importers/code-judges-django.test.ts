import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { judge } from "../support/import-judges/extract.js";
import { extractJson } from "./support.js";

/**
 * The extract judge on Django code bases: Django itself imports the models and the facts its
 * `_meta` holds are compared with the contracts `charter extract` wrote.
 */

const work = mkdtempSync(join(tmpdir(), "charter-django-judge-"));

describe("extract judge (Django's own model registry)", () => {
  it("finds no silent difference in a Django app whose changes are all named, and calls each unnamed one silent", async () => {
    const input = join(work, "tracker");
    mkdirSync(join(input, "tracker"), { recursive: true });
    writeFileSync(join(input, "tracker/__init__.py"), "");
    writeFileSync(
      join(input, "tracker/models.py"),
      `from django.db import models

PRIORITY_CHOICES = (("low", "Low"), ("high", "High"))


class Project(models.Model):
    name = models.CharField(max_length=80, unique=True)
    budget = models.DecimalField(max_digits=10, decimal_places=2, default=0)


class Task(models.Model):
    project = models.ForeignKey(Project, models.CASCADE)
    reviewer = models.ForeignKey(Project, models.PROTECT, null=True, related_name="reviews")
    priority = models.CharField(max_length=4, choices=PRIORITY_CHOICES, default="low")
    estimate = models.DurationField()
    done = models.BooleanField(default=False)
`,
    );
    const { domainDir, notes } = extractJson(input);
    const r = await judge({ inputPath: input, domainDir, notes });
    expect(r.unjudged).toEqual([]);
    expect(r.compared).toBeGreaterThan(20);
    expect(r.silent).toEqual([]);
    const unnamed = await judge({ inputPath: input, domainDir, notes: [] });
    expect(unnamed.silent.map((s) => `${s.subject} ${s.fact}`)).toEqual(
      expect.arrayContaining(["Project.budget type", "Project.name unique"]),
    );
  });

  it("judges the committed Django fixtures; apps Django cannot import are named, not judged", async () => {
    const app = resolve("test/fixtures/importers/codebases/django_app");
    const a = extractJson(app);
    const r = await judge({ inputPath: app, domainDir: a.domainDir, notes: a.notes });
    expect(r.compared).toBeGreaterThan(40);
    expect(r.silent).toEqual([]);
    // django-styleguide: the user model inherits Django's AbstractBaseUser and PermissionsMixin,
    // whose fields the extractor cannot see; the notes say so, and the judge agrees.
    const styleguide = resolve("test/fixtures/import-corpus/django-styleguide/input");
    const s = extractJson(styleguide);
    const j = await judge({ inputPath: styleguide, domainDir: s.domainDir, notes: s.notes });
    expect(j.compared).toBeGreaterThan(100);
    expect(j.silent).toEqual([]);
    expect(j.unjudged.map((u) => u.split(":")[0])).toEqual(expect.arrayContaining(["files"]));
  });

  it("judges SQLAlchemy tables by SQLAlchemy's own MetaData", async () => {
    const app = resolve("test/fixtures/importers/codebases/fastapi_app");
    const { domainDir, notes } = extractJson(app);
    const r = await judge({ inputPath: app, domainDir, notes });
    expect(r.unjudged).toEqual([]);
    expect(r.compared).toBeGreaterThan(30);
    expect(r.silent).toEqual([]);
    const unnamed = await judge({ inputPath: app, domainDir, notes: [] });
    expect(unnamed.silent.map((s) => `${s.subject} ${s.fact}`)).toEqual(expect.arrayContaining(["tickets.estimate type"]));
  });
});
