import type { DomainIR, EntityIR, WorkflowIR } from "../../compiler/ir.js";
import { hashHeader } from "../header.js";
import { filterFields, sortFields } from "./models.js";
import { compileExpr, constantName, indent, LINE_LENGTH, pyFrozenset, pyStr, pyStrTuple, pyTuple, pyValue } from "./python.js";

/** Pinned versions: the same contracts give the same requirements.txt, and a tested stack. */
export const REQUIREMENTS = [
  "asyncpg==0.32.0",
  "email-validator==2.4.0",
  "fastapi==0.165.0",
  "httpx==0.28.1",
  "orjson==3.13.0",
  "pydantic==2.14.3",
  "pydantic-settings==2.16.3",
  "pyjwt[crypto]==2.15.1",
  "uvicorn[standard]==0.54.0",
];

/** Ruff settings of the generated backend, so `ruff check` means the same with any ruff version. */
export function generatePyproject(ir: DomainIR): string {
  return [
    hashHeader(),
    "[project]",
    `name = ${pyStr(`${ir.domain.replace(/_/g, "-")}-backend`)}`,
    'version = "0.1.0"',
    'requires-python = ">=3.11"',
    "",
    "[tool.ruff]",
    'target-version = "py311"',
    `line-length = ${LINE_LENGTH}`,
    "",
    "[tool.ruff.lint]",
    'select = ["E4", "E7", "E9", "F", "I", "B", "UP", "RUF"]',
    "",
  ].join("\n");
}

export function generateRequirements(): string {
  return `${hashHeader()}${REQUIREMENTS.join("\n")}\n`;
}

export function generateConfig(ir: DomainIR): string {
  const auth = ir.auth !== null;
  const lines = [
    hashHeader(),
    `"""Settings of the ${ir.domain} application, read from the environment (and a .env file)."""`,
    "",
    ...(auth ? ["import warnings"] : []),
    "from typing import Literal",
    "",
    "from pydantic import ValidationError",
    "from pydantic_settings import BaseSettings, SettingsConfigDict",
    "",
    ...(auth ? ['PLACEHOLDER_SECRET = "change-me"', ""] : []),
    "",
    "class Settings(BaseSettings):",
    '    model_config = SettingsConfigDict(env_file=".env", extra="ignore")',
    "",
    '    APP_ENV: str = "development"',
    '    DATABASE_URL: str = "postgresql://app:app@localhost:5432/app"',
    '    DATABASE_BACKEND: Literal["postgres", "memory"] = "postgres"',
    "    DATABASE_POOL_SIZE: int = 10",
    "    PORT: int = 8000",
    '    CORS_ORIGINS: str = "*"',
    "    # Requests with a larger body are refused with 413.",
    "    MAX_BODY_BYTES: int = 1_048_576",
    `    AUTH_ENABLED: bool = ${auth ? "True" : "False"}`,
    ...(auth
      ? [
          '    AUTH_PROVIDER: Literal["jwt", "external"] = "jwt"',
          "    AUTH_SECRET: str = PLACEHOLDER_SECRET",
          "    AUTH_TOKEN_EXPIRE_MINUTES: int = 60",
          "    # Issuer of our own tokens (default: the domain name), or the one external tokens must carry.",
          "    AUTH_ISSUER: str | None = None",
          "    AUTH_AUDIENCE: str | None = None",
          "    AUTH_JWKS_URL: str | None = None",
          '    AUTH_ROLE_CLAIM: str = "role"',
          "    # Passwordless login (id or email only) for local development.",
          "    AUTH_DEV_LOGIN: bool = False",
        ]
      : []),
    "    SVC_HEALER_URL: str | None = None",
    "",
    "    @property",
    "    def cors_origins(self) -> list[str]:",
    '        return [origin.strip() for origin in self.CORS_ORIGINS.split(",") if origin.strip()]',
    "",
    "",
    "def load_settings() -> Settings:",
    '    """The settings, or an exit with a one-line reason (a configuration error is no bug: no traceback)."""',
    "    try:",
    "        loaded = Settings()",
    "    except ValidationError as exc:",
    `        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())`,
    '        raise SystemExit(f"invalid settings: {problems}") from None',
    ...(auth
      ? [
          '    if loaded.AUTH_ENABLED and loaded.AUTH_PROVIDER == "jwt" and loaded.AUTH_SECRET == PLACEHOLDER_SECRET:',
          '        if loaded.APP_ENV.lower() == "production":',
          "            raise SystemExit(",
          '                "refusing to start: AUTH_SECRET still has its placeholder value; set a real secret for APP_ENV=production"',
          "            )",
          "        warnings.warn(",
          '            "AUTH_SECRET has its placeholder value: anyone can forge tokens (refused with APP_ENV=production)",',
          "            stacklevel=2,",
          "        )",
        ]
      : []),
    "    return loaded",
    "",
    "",
    "settings = load_settings()",
    "",
  ];
  return lines.join("\n");
}

/** app/domain.py: the contracts' facts as data (entity metadata, route FQNs by path). */
export function generateDomain(ir: DomainIR, entities: EntityIR[]): string {
  const metas = entities.map((e) => {
    const seqField = e.fields.find((f) => f.computed?.kind === "sequence");
    const seq = seqField?.computed?.kind === "sequence" ? seqField.computed : null;
    const writable = e.fields.filter((f) => f.writable);
    const refs = e.fields.filter((f) => f.references).map((f) => [f.name, f.references?.entityName ?? ""] as const);
    const hasCreatedAt = e.fields.some((f) => f.name === "created_at");
    const serverDefaults = e.fields.filter((f) => !f.writable && f.hasDefault && f.computed === null && f.name !== "state");
    const args = [
      `name=${pyStr(e.name)}`,
      `table=${pyStr(e.table)}`,
      `columns=${pyStrTuple(e.fields.map((f) => f.name))}`,
      `json_columns=${pyFrozenset(e.fields.filter((f) => f.type === "array" || f.type === "object").map((f) => f.name))}`,
      `filterable=${pyFrozenset(filterFields(e).map((f) => f.name))}`,
      `sortable=${pyFrozenset(sortFields(e).map((f) => f.name))}`,
      `searchable=${pyStrTuple(e.searchFields)}`,
      `required=${pyFrozenset(writable.filter((f) => f.required).map((f) => f.name))}`,
      `immutable=${pyFrozenset(writable.filter((f) => f.immutable).map((f) => f.name))}`,
      ...(seq && seqField
        ? [
            `sequence=SequenceSpec(column=${pyStr(seqField.name)}, name=${pyStr(seq.sequenceName)}, format=${pyStr(seq.format)}, prefix=${pyStr(seq.prefix ?? "")})`,
          ]
        : []),
      `soft_delete=${e.softDelete ? "True" : "False"}`,
      `references={${refs.map(([k, v]) => `${pyStr(k)}: ${pyStr(v)}`).join(", ")}}`,
      // Same rule as the postgres target's foreign keys: required references RESTRICT, others SET NULL.
      `restrict_delete=${pyFrozenset(e.fields.filter((f) => f.references && f.required).map((f) => f.name))}`,
      `default_order=${pyStrTuple(hasCreatedAt ? ["created_at", "id"] : ["id"])}`,
      ...(serverDefaults.length > 0
        ? [`server_defaults={${serverDefaults.map((f) => `${pyStr(f.name)}: ${pyValue(f.default)}`).join(", ")}}`]
        : []),
    ];
    return `${constantName(e.name)} = EntityMeta(\n${indent(args.map((a) => `${a},`).join("\n"))}\n)`;
  });
  const usesSeq = entities.some((e) => e.fields.some((f) => f.computed?.kind === "sequence"));
  const routes = [...ir.routes].sort((a, b) => (a.basePath < b.basePath ? -1 : a.basePath > b.basePath ? 1 : 0));
  return [
    hashHeader(),
    `"""What the contracts of the ${ir.domain} domain say, as data the static modules are driven by."""`,
    "",
    `from app.repositories.base import EntityMeta${usesSeq ? ", SequenceSpec" : ""}`,
    "",
    `DOMAIN = ${pyStr(ir.domain)}`,
    "",
    ...metas.flatMap((m) => [m, ""]),
    `ENTITIES = ${pyTuple(entities.map((e) => constantName(e.name)))}`,
    "",
    "# Base path -> (entity contract, Route contract), to name the contract of a failing request to the Healer.",
    `ROUTE_CONTRACTS = ${pyTuple(routes.map((r) => `(${pyStr(r.basePath)}, ${pyStr(r.entity)}, ${pyStr(r.fqn)})`))}`,
    "",
  ].join("\n");
}

export function generateDeps(ir: DomainIR): string {
  const auth = ir.auth !== null;
  return [
    hashHeader(),
    `"""What the route modules depend on: the caller (\`CurrentUser\`)${auth ? ", role checks" : ""} and the repositories."""`,
    "",
    "from collections.abc import Mapping",
    ...(auth ? [""] : ["from typing import Annotated", "", "from fastapi import Depends", ""]),
    ...(auth ? ["from app.auth.deps import CurrentUser, role_dependencies"] : ["from app.principal import ANONYMOUS, User"]),
    "from app.repositories.base import Repository",
    "",
    ...(auth
      ? ['__all__ = ["CurrentUser", "repository", "role_dependencies", "use_repositories"]', ""]
      : [
          "",
          "async def current_user() -> User:",
          '    """The domain has no auth contract: every request is the anonymous administrator."""',
          "    return ANONYMOUS",
          "",
          "",
          "CurrentUser = Annotated[User, Depends(current_user)]",
        ]),
    "",
    "# The repositories of the open storage by entity name, set by the lifespan (app/main.py). A route",
    "# looks its own up with repository() rather than through Depends(): one dependency fewer for",
    "# FastAPI to solve on every request, and the storage is the same for the whole process anyway.",
    "_repositories: dict[str, Repository] = {}",
    "",
    "",
    "def use_repositories(repositories: Mapping[str, Repository]) -> None:",
    "    _repositories.clear()",
    "    _repositories.update(repositories)",
    "",
    "",
    "def repository(entity: str) -> Repository:",
    "    return _repositories[entity]",
    "",
  ].join("\n");
}

function workflowConstant(w: WorkflowIR): string {
  const terminal = w.states.filter((s) => s.terminal).map((s) => s.name);
  const transitions = w.states.map((s) => `${pyStr(s.name)}: ${pyStrTuple(w.transitions[s.name] ?? [])},`);
  const guards = w.guards.map((g) => {
    const args = [
      ...(g.requireFields.length ? [`require_fields=${pyStrTuple(g.requireFields)}`] : []),
      ...(g.condition
        ? [`condition=lambda values: ${compileExpr(g.condition.expr)}`, `condition_source=${pyStr(g.condition.source)}`]
        : []),
    ];
    return `(${pyStr(g.from)}, ${pyStr(g.to)}): Guard(\n${indent(args.map((a) => `${a},`).join("\n"))}\n),`;
  });
  const effects = w.sideEffects.map((s) => {
    const events = s.actions.flatMap((a) => ("emitEvent" in a ? [a.emitEvent] : []));
    const set: Record<string, unknown> = {};
    for (const a of s.actions) if ("set" in a) Object.assign(set, a.set);
    const args = [...(events.length ? [`events=${pyStrTuple(events)}`] : []), ...(Object.keys(set).length ? [`set=${pyValue(set)}`] : [])];
    return `(${pyStr(s.from)}, ${pyStr(s.to)}): Effects(${args.join(", ")}),`;
  });
  const args = [
    `name=${pyStr(w.name)}`,
    `initial=${pyStr(w.initial)}`,
    `states=${pyStrTuple(w.states.map((s) => s.name))}`,
    `terminal=${pyFrozenset(terminal)}`,
    `transitions={\n${indent(transitions.join("\n"))}\n}`,
    ...(guards.length ? [`guards={\n${indent(guards.join("\n"))}\n}`] : []),
    ...(effects.length ? [`effects={\n${indent(effects.join("\n"))}\n}`] : []),
  ];
  const typeOverrides = w.typeOverrides?.overrides.length ? w.typeOverrides : null;
  if (typeOverrides) {
    args.push(`type_field=${pyStr(typeOverrides.field)}`);
    const overrides = typeOverrides.overrides.map((o) => {
      const t = Object.entries(o.transitions).map(([from, to]) => `${pyStr(from)}: ${pyStrTuple(to)}`);
      return `${pyStr(o.value)}: {${t.join(", ")}},`;
    });
    args.push(`type_overrides={\n${indent(overrides.join("\n"))}\n}`);
  }
  return `${constantName(w.name)} = Workflow(\n${indent(args.map((a) => `${a},`).join("\n"))}\n)`;
}

export function generateWorkflows(ir: DomainIR, workflows: WorkflowIR[]): string {
  const usesExpr = workflows.some((w) => w.guards.some((g) => g.condition));
  const usesGuard = workflows.some((w) => w.guards.length > 0);
  const usesEffects = workflows.some((w) => w.sideEffects.length > 0);
  const names = [...(usesEffects ? ["Effects"] : []), ...(usesGuard ? ["Guard"] : []), ...(workflows.length ? ["Workflow"] : [])];
  return [
    hashHeader(),
    `"""The state machines of the ${ir.domain} domain (Workflow contracts)."""`,
    "",
    ...(usesExpr ? ["from app import expr"] : []),
    ...(names.length ? [`from app.workflow import ${names.join(", ")}`, ""] : []),
    ...workflows.flatMap((w) => [`# ${w.fqn}${w.description ? `: ${w.description}` : ""}`, workflowConstant(w), ""]),
  ].join("\n");
}

export function generateBootstrap(ir: DomainIR): string {
  const users = (ir.auth?.users ?? []).map(
    (u) =>
      `BootstrapUser(id=${pyStr(u.id)}, email=${pyStr(u.email)}, role=${pyStr(u.role)}, password=${u.password === null ? "None" : pyStr(u.password)}),`,
  );
  return [
    hashHeader(),
    `"""Roles and bootstrap users of ${ir.auth?.fqn ?? "the auth contract"}; passwords are hashed on first start."""`,
    "",
    "from app.auth.users import BootstrapUser",
    "",
    `ROLES = ${pyStrTuple(ir.auth?.roles ?? [])}`,
    "",
    `BOOTSTRAP_USERS = ${users.length ? `(\n${indent(users.join("\n"))}\n)` : "()"}`,
    "",
  ].join("\n");
}

export function generateMain(ir: DomainIR, routeModules: string[]): string {
  const auth = ir.auth !== null;
  const title = ir.domain.charAt(0).toUpperCase() + ir.domain.slice(1);
  return [
    hashHeader(),
    `"""The ${ir.domain} API: the FastAPI application and its wiring."""`,
    "",
    "import logging",
    "from collections.abc import AsyncIterator",
    "from contextlib import asynccontextmanager",
    "",
    "from fastapi import FastAPI",
    "from fastapi.middleware.cors import CORSMiddleware",
    "",
    "from app import deps, errors",
    ...(auth ? ["from app.auth import routes as auth_routes", "from app.auth import setup as auth_setup"] : []),
    "from app.config import settings",
    "from app.domain import DOMAIN, ENTITIES",
    "from app.limits import BodySizeLimitMiddleware",
    "from app.paths import TrailingSlashMiddleware",
    "from app.responses import ORJSONResponse",
    `from app.routes import ${routeModules.join(", ")}`,
    "from app.storage import open_storage",
    "",
    'logger = logging.getLogger("app")',
    "",
    "",
    "@asynccontextmanager",
    "async def lifespan(app: FastAPI) -> AsyncIterator[None]:",
    "    async with open_storage(settings.DATABASE_BACKEND, settings.DATABASE_URL, settings.DATABASE_POOL_SIZE, ENTITIES) as storage:",
    "        deps.use_repositories(storage.repositories)",
    ...(auth
      ? [
          "        app.state.auth_provider = auth_setup.make_provider()",
          "        app.state.user_store = await auth_setup.make_user_store(storage.pool)",
          "        if not settings.AUTH_ENABLED:",
          '            logger.warning("AUTH_ENABLED=false: every request is treated as an administrator")',
        ]
      : []),
    "        yield",
    "",
    "",
    "app = FastAPI(",
    `    title=${pyStr(`${title} API`)},`,
    "    lifespan=lifespan,",
    "    default_response_class=ORJSONResponse,",
    ")",
    "errors.install(app)",
    "app.add_middleware(BodySizeLimitMiddleware, max_bytes=settings.MAX_BODY_BYTES)",
    "app.add_middleware(TrailingSlashMiddleware)",
    "app.add_middleware(",
    "    CORSMiddleware,",
    "    allow_origins=settings.cors_origins,",
    '    allow_credentials="*" not in settings.cors_origins,',
    '    allow_methods=["*"],',
    '    allow_headers=["*"],',
    ")",
    "",
    "",
    '@app.get("/health", tags=["health"], operation_id="health")',
    "async def health() -> dict[str, str]:",
    '    return {"status": "ok", "domain": DOMAIN}',
    "",
    "",
    "# The routes go onto the app itself: include_router would keep each router as a nested layer",
    "# that every request walks through. APIRouter has already applied its prefix and tags to them.",
    `for router in [${[...(auth ? ["auth_routes"] : []), ...routeModules].map((m) => `${m}.router`).join(", ")}]:`,
    "    app.router.routes.extend(router.routes)",
    "",
  ].join("\n");
}
