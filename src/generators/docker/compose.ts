import { stringify } from "yaml";
import type { DomainIR } from "../../compiler/index.js";

/** Default ports of the stack and the database health check. */
export const PORTS = { db: 5432, app: 8000, healer: 8083, frontend: 3000 } as const;
export const DB_HEALTHCHECK = { interval: "5s", timeout: "5s", retries: 5 } as const;

/** Where the healer container finds the contracts (mounted read-write) and keeps its state. */
export const HEALER_PROJECT_DIR = "/project";

const LLM_VARIABLES = [
  "SVC_AI_MODEL",
  "ANTHROPIC_API_KEY",
  "OPENAI_API_KEY",
  "GEMINI_API_KEY",
  "GROQ_API_KEY",
  "OPENROUTER_API_KEY",
  "OLLAMA_BASE_URL",
  "LMSTUDIO_BASE_URL",
];

/** The standard OpenTelemetry variables the app's tracing reads (app/observability.py). */
const OTEL_VARIABLES = [
  "OTEL_EXPORTER_OTLP_ENDPOINT",
  "OTEL_EXPORTER_OTLP_HEADERS",
  "OTEL_TRACES_EXPORTER",
  "OTEL_TRACES_SAMPLER",
  "OTEL_TRACES_SAMPLER_ARG",
  "OTEL_SERVICE_NAME",
];

/** `${NAME:-default}`: compose interpolation from the shell or `.env`, with the documented default. */
function fromEnv(name: string, fallback: string): string {
  return `\${${name}:-${fallback}}`;
}

/**
 * `${NAME:?message}`: a secret compose refuses to start without (item "no default secrets"); any
 * default written here would be known to everyone who reads the generator.
 */
function required(name: string, how: string): string {
  return `\${${name}:?${name} is not set: ${how} (see .env.example)}`;
}

const RANDOM = "put 32 or more random bytes in .env, e.g. openssl rand -hex 32";

/**
 * The compose file of the generated stack (docs/deploy.md): db, app, healer
 * and, when pages exist, frontend. Values come from `.env` through interpolation, so no secret is
 * written here or baked into an image.
 */
export function composeModel(ir: DomainIR): Record<string, unknown> {
  const pages = ir.pages.length > 0;
  const healerToken = required("SVC_HEALER_TOKEN", RANDOM);
  const db: DbAccess = {
    user: fromEnv("POSTGRES_USER", "app"),
    password: required("POSTGRES_PASSWORD", RANDOM),
    database: fromEnv("POSTGRES_DB", "app"),
  };
  const services: Record<string, unknown> = {
    db: dbService(db),
    app: appService(ir, db, healerToken),
    healer: healerService(db, healerToken),
  };
  if (pages) services.frontend = frontendService();
  return {
    name: ir.domain.replace(/_/g, "-"),
    services,
    volumes: { db_data: {}, healer_state: {} },
  };
}

/** The database's user, password and name, as compose interpolates them from `.env`. */
interface DbAccess {
  user: string;
  password: string;
  database: string;
}

function dbService(db: DbAccess): Record<string, unknown> {
  return {
    image: fromEnv("POSTGRES_IMAGE", "postgres:16-bookworm"),
    restart: "unless-stopped",
    environment: { POSTGRES_USER: db.user, POSTGRES_PASSWORD: db.password, POSTGRES_DB: db.database },
    // Not published: only the app reaches the database, over the compose network.
    volumes: ["db_data:/var/lib/postgresql/data"],
    healthcheck: {
      // `$$` keeps the variable for the container's shell instead of compose's interpolation.
      test: ["CMD-SHELL", 'pg_isready -U "$${POSTGRES_USER}" -d "$${POSTGRES_DB}"'],
      ...DB_HEALTHCHECK,
    },
  };
}

function appService(ir: DomainIR, db: DbAccess, healerToken: string): Record<string, unknown> {
  const pages = ir.pages.length > 0;
  return {
    build: { context: "./backend", dockerfile: "Dockerfile" },
    restart: "unless-stopped",
    // With a frontend the browser calls only the frontend: the API is published on loopback
    // unless APP_PUBLISH_ADDRESS says otherwise (0.0.0.0 to publish it). Without one, the API is
    // what users reach.
    ports: [`${fromEnv("APP_PUBLISH_ADDRESS", pages ? "127.0.0.1" : "0.0.0.0")}:${fromEnv("APP_HOST_PORT", String(PORTS.app))}:8000`],
    environment: appEnvironment(ir, db, healerToken),
    depends_on: { db: { condition: "service_healthy" }, healer: { condition: "service_healthy" } },
  };
}

/** The generated app's settings: each from `.env` with the app's own default, secrets required. */
function appEnvironment(ir: DomainIR, db: DbAccess, healerToken: string): Record<string, string> {
  const auth = ir.auth !== null;
  const pages = ir.pages.length > 0;
  return {
    APP_ENV: fromEnv("APP_ENV", "production"),
    PORT: "8000",
    DATABASE_BACKEND: "postgres",
    DATABASE_URL: `postgresql://${db.user}:${db.password}@db:5432/${db.database}`,
    // The app applies its migrations on start, under an advisory lock (scaled replicas run them once).
    DATABASE_MIGRATE: fromEnv("DATABASE_MIGRATE", "auto"),
    CORS_ORIGINS: fromEnv("CORS_ORIGINS", "*"),
    AUTH_ENABLED: fromEnv("AUTH_ENABLED", auth ? "true" : "false"),
    AUTH_PROVIDER: fromEnv("AUTH_PROVIDER", "jwt"),
    AUTH_SECRET: required("AUTH_SECRET", RANDOM),
    // The contract's bootstrap users (and their published passwords) only when asked for.
    AUTH_SEED_USERS: fromEnv("AUTH_SEED_USERS", "false"),
    AUTH_TOKEN_EXPIRE_MINUTES: fromEnv("AUTH_TOKEN_EXPIRE_MINUTES", "60"),
    AUTH_LOGIN_MAX_FAILURES_PER_ACCOUNT: fromEnv("AUTH_LOGIN_MAX_FAILURES_PER_ACCOUNT", "5"),
    AUTH_LOGIN_MAX_FAILURES_PER_ADDRESS: fromEnv("AUTH_LOGIN_MAX_FAILURES_PER_ADDRESS", "20"),
    AUTH_LOGIN_WINDOW_SECONDS: fromEnv("AUTH_LOGIN_WINDOW_SECONDS", "900"),
    DATABASE_POOL_SIZE: fromEnv("DATABASE_POOL_SIZE", "10"),
    DATABASE_POOL_TIMEOUT_SECONDS: fromEnv("DATABASE_POOL_TIMEOUT_SECONDS", "5"),
    DATABASE_BATCH_CREATES: fromEnv("DATABASE_BATCH_CREATES", "true"),
    RESPONSE_VALIDATION: fromEnv("RESPONSE_VALIDATION", "auto"),
    GC_THRESHOLDS: fromEnv("GC_THRESHOLDS", "[50000,20,100]"),
    IDEMPOTENCY_TTL_SECONDS: fromEnv("IDEMPOTENCY_TTL_SECONDS", "86400"),
    SVC_HEALER_URL: `http://healer:${PORTS.healer}`,
    SVC_HEALER_TOKEN: healerToken,
    // The frontend's server forwards the browser's address; no one else may name the client.
    TRUSTED_PROXIES: fromEnv("TRUSTED_PROXIES", pages ? "frontend" : ""),
    LOG_FORMAT: fromEnv("LOG_FORMAT", "json"),
    LOG_LEVEL: fromEnv("LOG_LEVEL", "INFO"),
    // GET /metrics on the API's port, for a Prometheus on the compose network (app:8000); with
    // METRICS_TOKEN set, only for that bearer token.
    METRICS_ENABLED: fromEnv("METRICS_ENABLED", "true"),
    METRICS_TOKEN: fromEnv("METRICS_TOKEN", ""),
    // Traces: off until an OTLP endpoint is given.
    ...Object.fromEntries(OTEL_VARIABLES.map((name) => [name, fromEnv(name, "")])),
  };
}

function healerService(db: DbAccess, healerToken: string): Record<string, unknown> {
  return {
    build: { context: "./healer", dockerfile: "Dockerfile" },
    restart: "unless-stopped",
    // Loopback only: its review pages are for the operator on this machine; the app reports over
    // the compose network.
    ports: [`127.0.0.1:${fromEnv("HEALER_HOST_PORT", String(PORTS.healer))}:8083`],
    environment: {
      SVC_HEALER_PORT: String(PORTS.healer),
      SVC_HEALER_WEBHOOK_URL: fromEnv("SVC_HEALER_WEBHOOK_URL", ""),
      SVC_HEALER_WEBHOOK_SECRET: fromEnv("SVC_HEALER_WEBHOOK_SECRET", ""),
      SVC_HEALER_TOKEN: healerToken,
      // Empty: tickets in SQLite on the healer_state volume; a postgres:// URL moves them to PostgreSQL.
      HEALER_DATABASE_URL: fromEnv("HEALER_DATABASE_URL", ""),
      // The app's database, read only to count the rows a proposal's destructive steps touch
      // (the review page's "drops column ... N rows"); the Healer never writes to it.
      SVC_HEALER_APP_DATABASE_URL: `postgresql://${db.user}:${db.password}@db:5432/${db.database}`,
      // Links a ticket to the failed request's trace, e.g. https://tempo.example/trace/{trace_id}.
      SVC_HEALER_TRACE_URL: fromEnv("SVC_HEALER_TRACE_URL", ""),
      ...Object.fromEntries(LLM_VARIABLES.map((name) => [name, fromEnv(name, "")])),
    },
    volumes: [
      // The contracts, read-write so accepted fixes land in the user's files. A project made by
      // charter-init keeps them in ../domains (this file is in runtime/).
      `${fromEnv("CHARTER_CONTRACTS_DIR", "../domains")}:${HEALER_PROJECT_DIR}/domains:rw`,
      `healer_state:${HEALER_PROJECT_DIR}/.forge`,
    ],
  };
}

function frontendService(): Record<string, unknown> {
  const apiUrl = fromEnv("NEXT_PUBLIC_API_URL", `http://localhost:${PORTS.app}`);
  return {
    // The Next.js server calls the API: at run time through the app service (API_URL); the
    // build's address is only its default.
    build: { context: "./frontend", dockerfile: "Dockerfile", args: { NEXT_PUBLIC_API_URL: apiUrl } },
    restart: "unless-stopped",
    ports: [`${fromEnv("FRONTEND_HOST_PORT", String(PORTS.frontend))}:3000`],
    environment: { NEXT_PUBLIC_API_URL: apiUrl, API_URL: fromEnv("API_URL", `http://app:${PORTS.app}`) },
    depends_on: { app: { condition: "service_healthy" } },
  };
}

export function renderCompose(ir: DomainIR, header: string): string {
  return `${header}${stringify(composeModel(ir), { lineWidth: 0, sortMapEntries: false })}`;
}
