import type { DomainIR } from "../../compiler/index.js";
import { compareText } from "../../shared/text.js";

/** One configuration variable of the generated stack, as `.env.example` documents it. */
export interface Setting {
  name: string;
  /** Value written in `.env.example`; empty means "unset". */
  example: string;
  meaning: string;
}

export interface SettingGroup {
  readonly title: string;
  readonly settings: readonly Setting[];
}

/** Read by compose's db service and by the app to reach it. */
const DATABASE: SettingGroup = {
  title: "Database (compose starts PostgreSQL as the `db` service)",
  settings: [
    { name: "POSTGRES_USER", example: "app", meaning: "database user created by the db service (default app)" },
    {
      name: "POSTGRES_PASSWORD",
      example: "",
      meaning: "its password; required, no default (compose refuses to start without it): e.g. openssl rand -hex 32",
    },
    { name: "POSTGRES_DB", example: "app", meaning: "database name (default app)" },
    {
      name: "DATABASE_URL",
      example: "",
      meaning:
        "database connection string, postgresql://USER:PASSWORD@HOST:5432/DB (compose builds it from the POSTGRES_* values and the db service)",
    },
    {
      name: "DATABASE_BACKEND",
      example: "postgres",
      meaning: "postgres or memory (in-memory, no persistence, resets on restart); default postgres",
    },
    {
      name: "DATABASE_MIGRATE",
      example: "auto",
      meaning:
        "auto: the app applies its migrations on start, under a lock (compose's default), holding back destructive steps (dropped columns and tables, narrowed types) until `docker compose exec app python -m app.migrate --allow-destructive`; off (the app's own default): it only checks, and answers 503 naming `python -m app.migrate` while tables are missing",
    },
  ],
};

/** The generated app's serving settings that come before the domain-dependent publish address. */
const APP_SERVING: readonly Setting[] = [
  {
    name: "APP_ENV",
    example: "production",
    meaning:
      "development, test or production (default production); only an explicit development lets the app start with a weak AUTH_SECRET (with a warning) and seeds the bootstrap users unasked",
  },
  { name: "PORT", example: "8000", meaning: "API port (default 8000)" },
  { name: "APP_HOST_PORT", example: "8000", meaning: "host port compose publishes the API on (default 8000)" },
];

/** Authentication settings after AUTH_ENABLED, the same whatever the domain. */
const AUTH_SETTINGS: readonly Setting[] = [
  { name: "AUTH_PROVIDER", example: "jwt", meaning: "jwt or external (default jwt)" },
  {
    name: "AUTH_SECRET",
    example: "",
    meaning:
      "token signing secret, 32 or more random bytes (e.g. openssl rand -hex 32); required: compose refuses to start without it, and the app outside APP_ENV=development refuses a shorter one",
  },
  {
    name: "TRUSTED_PROXIES",
    example: "",
    meaning:
      "proxies (addresses, networks or host names, comma-separated) whose X-Forwarded-For names the client for the login throttle (default none; compose sets frontend)",
  },
  {
    name: "AUTH_SEED_USERS",
    example: "false",
    meaning:
      "true seeds the auth contract's bootstrap users, with the contract's passwords, on start (default: only under APP_ENV=development)",
  },
  { name: "AUTH_TOKEN_EXPIRE_MINUTES", example: "60", meaning: "access token lifetime in minutes (default 60)" },
  {
    name: "AUTH_LOGIN_MAX_FAILURES_PER_ACCOUNT",
    example: "5",
    meaning:
      "failed logins of one account within the window before POST /auth/login answers 429 with Retry-After (default 5; 0 = no limit; counted per app process)",
  },
  {
    name: "AUTH_LOGIN_MAX_FAILURES_PER_ADDRESS",
    example: "20",
    meaning: "failed logins from one client address within the window before 429 (default 20; 0 = no limit; counted per app process)",
  },
  { name: "AUTH_LOGIN_WINDOW_SECONDS", example: "900", meaning: "the sliding window of those counts, in seconds (default 900)" },
];

/** The app's pool, write, validation and reporting settings. */
const APP_RUNTIME: readonly Setting[] = [
  {
    name: "DATABASE_POOL_SIZE",
    example: "10",
    meaning: "database connections each app process opens at start and shares among its requests (default 10)",
  },
  {
    name: "DATABASE_POOL_TIMEOUT_SECONDS",
    example: "5",
    meaning: "how long a request waits for a connection while all are busy before it is answered 503 with Retry-After (default 5)",
  },
  {
    name: "DATABASE_BATCH_CREATES",
    example: "true",
    meaning:
      "creates of one entity that arrive while another is being written go together, by one multi-row INSERT; false writes each on its own (default true)",
  },
  {
    name: "RESPONSE_VALIDATION",
    example: "auto",
    meaning:
      "on checks every answer against its declared response model (a mismatch is a 500 reported to the Healer), off skips the check; auto (default) is on under APP_ENV=development or test",
  },
  {
    name: "GC_THRESHOLDS",
    example: "[50000,20,100]",
    meaning: "Python's garbage collector thresholds after start-up, as JSON (default [50000,20,100]; [700,10,10] is Python's own)",
  },
  {
    name: "IDEMPOTENCY_TTL_SECONDS",
    example: "86400",
    meaning: "how long a create sent with an Idempotency-Key header answers its repeats with its first response (default 86400)",
  },
  {
    name: "SVC_HEALER_URL",
    example: "",
    meaning: "Healer endpoint the app reports unhandled errors to (default none; compose sets http://healer:8083)",
  },
];

/** Read by app/observability.py. */
const OBSERVABILITY: SettingGroup = {
  title: "Logs, metrics and traces (app/observability.py)",
  settings: [
    { name: "LOG_FORMAT", example: "json", meaning: "json (one object a line, for a collector) or text (for a person) (default json)" },
    { name: "LOG_LEVEL", example: "INFO", meaning: "DEBUG, INFO, WARNING or ERROR (default INFO)" },
    {
      name: "LOG_REQUESTS",
      example: "true",
      meaning: "one line per request: request and trace ids, route, status, duration, user id (default true)",
    },
    {
      name: "METRICS_ENABLED",
      example: "true",
      meaning: "GET /metrics in Prometheus' format: requests per route and status, pool, events, agent runs, Healer reports (default true)",
    },
    { name: "METRICS_TOKEN", example: "", meaning: "bearer token /metrics asks for (default none: open to whoever reaches the port)" },
    {
      name: "METRICS_PORT",
      example: "",
      meaning:
        "serves /metrics on this port instead of the API's (default none; one process: with several workers only the first serves it)",
    },
    { name: "METRICS_HOST", example: "0.0.0.0", meaning: "address of that port (default 0.0.0.0)" },
    {
      name: "OTEL_EXPORTER_OTLP_ENDPOINT",
      example: "",
      meaning: "OTLP/HTTP collector, e.g. http://otel-collector:4318; set, it turns tracing on (default none: no tracing)",
    },
    { name: "OTEL_TRACES_EXPORTER", example: "", meaning: "otlp, console or none (default otlp once an endpoint is set)" },
    { name: "OTEL_EXPORTER_OTLP_HEADERS", example: "", meaning: "headers of the export requests, key=value,... (default none)" },
    {
      name: "OTEL_TRACES_SAMPLER",
      example: "",
      meaning:
        "e.g. parentbased_traceidratio (default parentbased_always_on: every request, about half the throughput); a request left out costs about 2%",
    },
    { name: "OTEL_TRACES_SAMPLER_ARG", example: "", meaning: "the sampler's ratio, e.g. 0.01 (default none)" },
    { name: "OTEL_SERVICE_NAME", example: "", meaning: "service name of the spans (default the domain name)" },
  ],
};

/** Read by the Healer service. */
const HEALER: SettingGroup = {
  title: "Healer",
  settings: [
    { name: "SVC_HEALER_PORT", example: "8083", meaning: "Healer port (default 8083)" },
    {
      name: "HEALER_HOST_PORT",
      example: "8083",
      meaning: "host port compose publishes the Healer on, on 127.0.0.1 only (default 8083)",
    },
    { name: "SVC_HEALER_WEBHOOK_URL", example: "", meaning: "webhook for Healer notifications (default none)" },
    {
      name: "SVC_HEALER_TRACE_URL",
      example: "",
      meaning: "link from a ticket to the failed request's trace, a template with {trace_id} or {request_id} (default none)",
    },
    { name: "SVC_HEALER_WEBHOOK_SECRET", example: "", meaning: "signs webhook bodies with HMAC-SHA256 when set (default none)" },
    {
      name: "SVC_HEALER_TOKEN",
      example: "",
      meaning:
        "required: the Healer's token (e.g. openssl rand -hex 32); the app sends it with its reports, and every Healer POST and ticket read needs it",
    },
    {
      name: "HEALER_DATABASE_URL",
      example: "",
      meaning:
        "postgres:// URL of a ticket store shared by several Healer replicas (schema healer, created on start); default empty: SQLite in .forge/healer/healer.db",
    },
  ],
};

/** Read by every LLM caller, in src/llm/. */
const LLM_PROVIDERS: SettingGroup = {
  title: "LLM providers (Healer proposals, factory, extractor, agents); first configured wins",
  settings: [
    { name: "SVC_AI_MODEL", example: "", meaning: "forces a specific model as provider:model (default empty)" },
    { name: "ANTHROPIC_API_KEY", example: "", meaning: "hosted provider 1 (default empty)" },
    { name: "OPENAI_API_KEY", example: "", meaning: "hosted provider 2 (default empty)" },
    { name: "GEMINI_API_KEY", example: "", meaning: "hosted provider 3 (default empty)" },
    { name: "GROQ_API_KEY", example: "", meaning: "hosted provider 4, has a free tier (default empty)" },
    { name: "OPENROUTER_API_KEY", example: "", meaning: "hosted provider 5 (default empty)" },
    { name: "OLLAMA_BASE_URL", example: "", meaning: "address of a local Ollama server, no key needed (default empty)" },
    { name: "LMSTUDIO_BASE_URL", example: "", meaning: "address of a local LM Studio server, no key needed (default empty)" },
  ],
};

/** Read by the contract review step. */
const CONTRACT_REVIEW: SettingGroup = {
  title: "Contract review",
  settings: [
    { name: "EDITOR", example: "", meaning: "editor used for contract review (default empty)" },
    { name: "VISUAL", example: "", meaning: "visual editor used for contract review (default empty)" },
  ],
};

/** Read by app/dispatcher.py; only a domain with agents has it. */
const DISPATCHER: SettingGroup = {
  title: "Events dispatcher and agents (app/dispatcher.py; the agents run only when an LLM provider is configured)",
  settings: [
    {
      name: "DISPATCH_MODE",
      example: "process",
      meaning:
        "process: on PostgreSQL a worker process per app process dispatches events and runs agents; inline: in the app process (default process)",
    },
    { name: "DISPATCH_POOL_SIZE", example: "5", meaning: "database connections of that worker process (default 5)" },
    { name: "DISPATCH_BATCH_SIZE", example: "32", meaning: "events claimed at once, the earliest pending one per record (default 32)" },
    {
      name: "DISPATCH_POLL_SECONDS",
      example: "0.25",
      meaning: "how often the dispatcher looks for events written elsewhere (default 0.25)",
    },
    {
      name: "DISPATCH_LEASE_SECONDS",
      example: "120",
      meaning: "how long a claim lasts: a killed replica's events go back to the others after it (default 120)",
    },
    { name: "DISPATCH_MAX_ATTEMPTS", example: "8", meaning: "attempts before an event is parked (parked_at, last_error) (default 8)" },
    { name: "DISPATCH_BACKOFF_SECONDS", example: "1", meaning: "first retry delay, doubled each time, at most an hour (default 1)" },
  ],
};

/** Read by the frontend service; only a domain with pages has it. */
const FRONTEND: SettingGroup = {
  title: "Frontend",
  settings: [
    { name: "FRONTEND_HOST_PORT", example: "3000", meaning: "host port compose publishes the frontend on (default 3000)" },
    {
      name: "NEXT_PUBLIC_API_URL",
      example: "http://localhost:8000",
      meaning: "API address the browser calls, built into the frontend (default http://localhost:8000)",
    },
  ],
};

/** The generated application's own settings; the publish address and AUTH_ENABLED follow the domain. */
function applicationGroup(ir: DomainIR): SettingGroup {
  const auth = ir.auth !== null;
  return {
    title: "Generated application",
    settings: [
      ...APP_SERVING,
      {
        name: "APP_PUBLISH_ADDRESS",
        example: "",
        meaning: `host address compose publishes the API on (default ${ir.pages.length > 0 ? "127.0.0.1: the browser calls only the frontend; 0.0.0.0 publishes the API" : "0.0.0.0"})`,
      },
      { name: "CORS_ORIGINS", example: "*", meaning: "comma-separated allowed origins (default *)" },
      {
        name: "AUTH_ENABLED",
        example: auth ? "true" : "false",
        meaning: `enables the auth middleware (default ${auth ? "true: the domain has an auth Infra contract" : "false: the domain has no auth Infra contract"})`,
      },
      ...AUTH_SETTINGS,
      ...APP_RUNTIME,
    ],
  };
}

/** Variables the domain's Infra contracts declare that no group above documents, by name; null when none. */
function declaredGroup(ir: DomainIR, groups: readonly SettingGroup[]): SettingGroup | null {
  const known = new Set(groups.flatMap((g) => g.settings.map((s) => s.name)));
  const declared = ir.infra
    .flatMap((i) => Object.entries(i.envVars))
    .filter(([name]) => !known.has(name))
    .sort(([a], [b]) => compareText(a, b));
  if (declared.length === 0) return null;
  return {
    title: "Declared by the domain's Infra contracts",
    settings: declared.map(([name, meaning]) => ({ name, example: "", meaning })),
  };
}

/**
 * Every configuration variable of the generated stack (with the LLM keys Charter's own tools
 * read, and the variables compose itself reads), grouped by who reads it. The defaults are the
 * ones the generated app and the Healer apply when the variable is unset.
 */
export function settingGroups(ir: DomainIR): SettingGroup[] {
  const groups = [DATABASE, applicationGroup(ir), OBSERVABILITY, HEALER, LLM_PROVIDERS, CONTRACT_REVIEW];
  if (ir.agents.length > 0) groups.push(DISPATCHER);
  if (ir.pages.length > 0) groups.push(FRONTEND);
  const declared = declaredGroup(ir, groups);
  if (declared) groups.push(declared);
  return groups;
}

/** `.env.example`: every variable with its meaning and default, ready to copy to `.env`. */
export function renderEnvExample(ir: DomainIR, header: string): string {
  const lines = [header.trimEnd(), "# Copy to .env and adjust; compose and the generated app read it. Never commit .env.", ""];
  for (const group of settingGroups(ir)) {
    lines.push(`# --- ${group.title}`);
    for (const s of group.settings) lines.push(`# ${s.meaning}`, `${s.name}=${s.example}`);
    lines.push("");
  }
  return `${lines.join("\n").trimEnd()}\n`;
}
