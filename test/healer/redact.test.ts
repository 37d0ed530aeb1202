import { describe, expect, it } from "vitest";
import { classifyError, fingerprintOf, redactContext, redactStacktrace, redactText } from "../../src/healer/index.js";

/*
 * Runtime messages as asyncpg, PostgreSQL, pydantic and Python word them: the values they quote
 * leave, the words that classify the error (exception, constraint, column, table) stay.
 */

const ID = "3f0e8a52-1c1b-4e0e-9a55-000000000001";

const CASES: { message: string; values: string[]; kept: string[] }[] = [
  {
    message: `asyncpg.exceptions.UniqueViolationError: duplicate key value violates unique constraint "customers_email_key"\nDETAIL:  Key (email)=(alice@example.com) already exists.`,
    values: ["alice@example.com"],
    kept: ["UniqueViolationError", '"customers_email_key"', "Key (email)=", "already exists"],
  },
  {
    message: `NotNullViolationError: null value in column "name" of relation "customers" violates not-null constraint\nDETAIL:  Failing row contains (${ID}, null, bob@x.org, +49 170 1234567, 1990-04-01).`,
    values: [ID, "bob@x.org", "1234567", "1990-04-01"],
    kept: ['column "name"', 'relation "customers"', "not-null constraint", "Failing row contains"],
  },
  {
    message: `ForeignKeyViolationError: insert or update on table "orders" violates foreign key constraint "fk_orders_customer_id"\nDETAIL:  Key (customer_id)=(${ID}) is not present in table "customers".`,
    values: [ID],
    kept: ['table "orders"', '"fk_orders_customer_id"', "Key (customer_id)=", 'table "customers"'],
  },
  {
    message: `DataError: invalid input for query argument $1: 'carol' (invalid UUID 'carol': length must be between 32..36 characters, got 5)`,
    values: ["carol"],
    kept: ["DataError", "invalid UUID"],
  },
  {
    message: `asyncpg.exceptions.InvalidTextRepresentationError: invalid input syntax for type uuid: "dave-smith"`,
    values: ["dave-smith"],
    kept: ["InvalidTextRepresentationError", "invalid input syntax for type uuid"],
  },
  {
    message:
      "1 validation error for Customer\nemail\n  value is not a valid email address: An email address must have an @-sign. [type=value_error, input_value='erin, at home [x]', input_type=str]",
    values: ["erin", "at home"],
    kept: ["validation error for Customer", "type=value_error", "input_type=str"],
  },
  {
    message: "ValueError: cannot store {'email': 'frank@x.io', 'name': 'Frank Miller', 'salary': 52000}",
    values: ["frank@x.io", "Frank Miller", "52000"],
    kept: ["ValueError", "'email':", "'name':", "'salary':"],
  },
  {
    message: "KeyError: 'field_3'",
    values: [],
    kept: ["KeyError: 'field_3'"],
  },
  {
    message: "AttributeError: 'NoneType' object has no attribute 'email'",
    values: [],
    kept: ["AttributeError: 'NoneType' object has no attribute 'email'"],
  },
];

describe("redaction of runtime messages", () => {
  it.each(CASES)("$message", ({ message, values, kept }) => {
    const r = redactText(message);
    for (const v of values) expect(r).not.toContain(v);
    for (const k of kept) expect(r).toContain(k);
    // Idempotent: a stored message redacts to itself, so it fingerprints as the raw one did.
    expect(redactText(r)).toBe(r);
    // What classified the raw message classifies the redacted one the same way.
    const raw = classifyError({ source: "runtime", message, statusCode: 500 });
    expect(classifyError({ source: "runtime", message: r, statusCode: 500 })).toEqual(raw);
  });

  it("a status code stated in the message stays: it classifies the error", () => {
    expect(redactText("RuntimeError: upstream answered status_code=503")).toContain("status_code=503");
  });

  it("the same error with 50 different rows has one fingerprint", () => {
    const prints = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const message = `asyncpg.exceptions.NotNullViolationError: null value in column "name" of relation "customers" violates not-null constraint\nDETAIL:  Failing row contains (${i}, user${i}@example.com, ${1000 + i * 7}).`;
      prints.add(fingerprintOf("entity/shop/customer", "runtime_500", message, "runtime"));
    }
    expect(prints.size).toBe(1);
    // Two different constraints stay two problems.
    const other = fingerprintOf(
      "entity/shop/customer",
      "runtime_500",
      'duplicate key value violates unique constraint "customers_email_key"\nDETAIL:  Key (email)=(a@b.c) already exists.',
      "runtime",
    );
    expect(prints.has(other)).toBe(false);
  });

  it("a traceback keeps its frames and code, loses the values in its exception lines", () => {
    const trace = [
      "Traceback (most recent call last):",
      '  File "/app/app/repositories/postgres.py", line 252, in _insert',
      "    row = await executor.fetchrow(self._insert_sql(columns, bool(events)), *args)",
      "          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
      'asyncpg.exceptions.CheckViolationError: new row for relation "customers" violates check constraint "ck_customers_email"',
      "DETAIL:  Failing row contains (gina@example.com, Gina Lopez).",
      "",
      "During handling of the above exception, another exception occurred:",
      "",
      "ValueError: {'email': 'gina@example.com'}",
    ].join("\n");
    const r = redactStacktrace(trace);
    expect(r).not.toContain("gina");
    expect(r).not.toContain("Gina");
    expect(r).toContain('  File "/app/app/repositories/postgres.py", line 252, in _insert');
    expect(r).toContain("    row = await executor.fetchrow(self._insert_sql(columns, bool(events)), *args)");
    expect(r).toContain('violates check constraint "ck_customers_email"');
    const ctx = redactContext({ stacktrace: trace, path: `/customers/${ID}`, status_code: 500, extra: { body: ["gina@example.com"] } });
    expect(JSON.stringify(ctx)).not.toContain("gina");
    expect(ctx.status_code).toBe(500);
    expect(ctx.stacktrace).toBe(r);
  });
});
