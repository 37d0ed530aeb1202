import type { ContractType } from "./model.js";

/**
 * Source type names (SQL, Prisma, Python, TypeScript, ORM column classes), lower-cased, to contract
 * types. One table for every adapter, so `varchar`, `String`, `CharField` and `str` map alike.
 */
const TYPES: Record<string, ContractType> = {
  // SQL (PostgreSQL and MySQL spellings)
  varchar: "string",
  "character varying": "string",
  char: "string",
  character: "string",
  nvarchar: "string",
  nchar: "string",
  citext: "string",
  enum: "string",
  set: "string",
  text: "text",
  tinytext: "text",
  mediumtext: "text",
  longtext: "text",
  int: "integer",
  integer: "integer",
  int2: "integer",
  int4: "integer",
  int8: "integer",
  smallint: "integer",
  tinyint: "integer",
  mediumint: "integer",
  bigint: "integer",
  serial: "integer",
  smallserial: "integer",
  bigserial: "integer",
  year: "integer",
  numeric: "number",
  decimal: "number",
  real: "number",
  float: "number",
  float4: "number",
  float8: "number",
  double: "number",
  "double precision": "number",
  money: "number",
  bool: "boolean",
  boolean: "boolean",
  bit: "boolean",
  timestamp: "datetime",
  timestamptz: "datetime",
  datetime: "datetime",
  "timestamp with time zone": "datetime",
  "timestamp without time zone": "datetime",
  date: "date",
  time: "string",
  timetz: "string",
  interval: "string",
  uuid: "uuid",
  json: "object",
  jsonb: "object",
  bytea: "string",
  blob: "string",
  longblob: "string",
  binary: "string",
  varbinary: "string",
  inet: "string",
  cidr: "string",
  tsvector: "text",
  // Prisma scalars
  string: "string",
  float64: "number",
  bytes: "string",
  // Python
  str: "string",
  bytes_: "string",
  decimal_: "number",
  dict: "object",
  list: "array",
  // SQLAlchemy column classes
  unicode: "string",
  unicodetext: "text",
  largebinary: "string",
  biginteger: "integer",
  smallinteger: "integer",
  // Django fields
  charfield: "string",
  slugfield: "string",
  textfield: "text",
  integerfield: "integer",
  bigintegerfield: "integer",
  smallintegerfield: "integer",
  positiveintegerfield: "integer",
  positivesmallintegerfield: "integer",
  bigautofield: "integer",
  autofield: "integer",
  floatfield: "number",
  decimalfield: "number",
  booleanfield: "boolean",
  datetimefield: "datetime",
  durationfield: "duration",
  datefield: "date",
  uuidfield: "uuid",
  emailfield: "email",
  urlfield: "string",
  jsonfield: "object",
  // TypeScript
  number: "number",
  object: "object",
};

/** The contract type of a source type name; `undefined` when unknown (the caller decides and notes it). */
export function mapTypeName(sourceType: string): ContractType | undefined {
  const key = sourceType.trim().toLowerCase();
  return TYPES[key] ?? TYPES[key.replace(/\(.*$/, "").trim()];
}

/** Formats that carry a contract type of their own (OpenAPI `format`, Django's EmailField). */
export function mapOpenApiType(type: string | undefined, format: string | undefined): { type: ContractType; format?: string } {
  switch (type) {
    case "integer":
      return { type: "integer" };
    case "number":
      return { type: "number" };
    case "boolean":
      return { type: "boolean" };
    case "array":
      return { type: "array" };
    case "object":
      return { type: "object" };
    default:
      break;
  }
  switch (format) {
    case "date-time":
      return { type: "datetime" };
    case "date":
      return { type: "date" };
    case "uuid":
      return { type: "uuid" };
    case "email":
      return { type: "email" };
    case undefined:
    case "":
      return { type: "string" };
    case "uri":
    case "url":
      return { type: "string", format: "uri" };
    case "hostname":
    case "ipv4":
    case "ipv6":
      return { type: "string", format };
    default:
      return { type: "string" };
  }
}

/** Default values the database computes: `now()`, `CURRENT_TIMESTAMP`, `gen_random_uuid()`. */
export function generatedDefault(expression: string): "now" | "uuid" | undefined {
  const e = expression.toLowerCase().replace(/\s+/g, "");
  if (/^(now\(\)|current_timestamp(\(\d*\))?|localtimestamp|current_date|getdate\(\)|sysdate\(\))$/.test(e)) return "now";
  if (/^(gen_random_uuid\(\)|uuid_generate_v[147]\(\)|uuidv[47]\(\)|uuid\(\)|uuid4\(\))$/.test(e)) return "uuid";
  return undefined;
}
