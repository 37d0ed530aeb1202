import type { EntityIR } from "../../compiler/ir.js";
import { hashHeader } from "../header.js";
import { assign, call } from "./py-layout.js";
import { constantName, Imports, pyModuleName } from "./python.js";

/** The constant of app/hooks.py holding an entity's hooks (`ticket` -> `TICKET`). */
export const hooksConstant = (entityName: string): string => constantName(entityName);

/**
 * The hooks an entity's routes call, with what each is given: its subject, then the caller. The
 * routes call them all; a user's module defines any of them (app/custom/hooks/<entity>.py).
 */
const HOOKS = [
  { name: "before_create", params: "CreateT, User" },
  { name: "after_create", params: "PublicT, User" },
  { name: "before_update", params: "UUID, UpdateT, User" },
  { name: "after_update", params: "PublicT, User" },
  { name: "before_delete", params: "UUID, User" },
  { name: "after_delete", params: "UUID, User" },
  { name: "before_transition", params: "UUID, str, User" },
  { name: "after_transition", params: "PublicT, User" },
] as const;

/** The name of a hook, as the routes call it. */
export type HookName = (typeof HOOKS)[number]["name"];

const PREAMBLE = `"""The hooks the generated routes call around the writes of each entity.

A hook does nothing unless the entity's app/custom/hooks/<entity>.py (yours: charter writes it
once) defines a function of its name; then that function is the hook. Only the functions a module
defines are taken, so a module that defines one hook, or one written before a hook existed, keeps
working when charter adds another. See charter's docs/customizing.md.
"""`;

const HOOKS_CLASS = `CreateT = TypeVar("CreateT")
UpdateT = TypeVar("UpdateT")
PublicT = TypeVar("PublicT")


async def nothing(*_: object) -> None:
    """What a hook does unless the entity's hooks module defines it."""


@dataclass(frozen=True, slots=True)
class Hooks(Generic[CreateT, UpdateT, PublicT]):
    """The hooks of one entity: each the function of that name in its hooks module, or \`nothing\`.

    An after-hook is given the record as a validated public model; the routes build it only for a
    hook that is not \`nothing\`.
    """

${HOOKS.map((h) => `    ${h.name}: Callable[[${h.params}], Awaitable[None]] = nothing`).join("\n")}


def defined_in(module: ModuleType) -> dict[str, Any]:
    """The hooks \`module\` defines, by name."""
    return {f.name: getattr(module, f.name) for f in fields(Hooks) if callable(getattr(module, f.name, None))}`;

/**
 * app/hooks.py: each entity's hooks, the functions its owned hooks module defines over defaults
 * that do nothing. The routes call the hooks through here rather than the user's module, so a hook
 * charter adds later never breaks a module written before it.
 */
export function generateHooks(entities: readonly EntityIR[]): string {
  const imports = new Imports();
  for (const [module, names] of Object.entries({
    "collections.abc": ["Awaitable", "Callable"],
    dataclasses: ["dataclass", "fields"],
    types: ["ModuleType"],
    typing: ["Any", "Generic", "TypeVar"],
    uuid: ["UUID"],
    "app.principal": ["User"],
  }))
    for (const n of names) imports.add(module, n);
  for (const e of entities) {
    imports.module(`app.custom.hooks.${pyModuleName(e.name)}`);
    for (const suffix of ["Create", "Public", "Update"]) imports.add(`app.models.${pyModuleName(e.name)}`, `${e.className}${suffix}`);
  }
  const constants = entities.map((e) =>
    assign(
      `${hooksConstant(e.name)}: Hooks[${e.className}Create, ${e.className}Update, ${e.className}Public]`,
      call("Hooks", [`**defined_in(app.custom.hooks.${pyModuleName(e.name)})`]),
    ),
  );
  // A domain with no served entity has no constants: the module then ends with the class.
  const tail = constants.length > 0 ? ["", "", ...constants] : [];
  return [hashHeader(), PREAMBLE, "", imports.render(), "", HOOKS_CLASS, ...tail, ""].join("\n");
}
