"""SQLAlchemy's own view of a code base's tables, as JSON: the independent parse behind the extract
judge for SQLModel and SQLAlchemy code bases.

Usage: python sqlalchemy_facts.py ROOT FILE [FILE ...]
Each file is imported as a module of ROOT (SQLAlchemy and SQLModel build their MetaData as the
classes are defined); every table of every MetaData is printed with its columns as SQLAlchemy
sees them. A file that cannot be imported is named in "unjudged".
"""

import enum
import gc
import importlib
import importlib.machinery
import json
import os
import sys


class DeferredAnnotations(importlib.machinery.SourceFileLoader):
    """Compiles the code base's modules with deferred annotations: code written for Python 3.14
    (`items: list[Item]` before Item is defined) imports on an older Python as it does there."""

    def source_to_code(self, data, path, *, _optimize=-1):
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        if "from __future__ import annotations" not in text:
            text = "from __future__ import annotations\n" + text
        return compile(text, path, "exec", dont_inherit=True, optimize=_optimize)


class UnderRoot(importlib.machinery.PathFinder):
    root = ""

    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec and spec.origin and spec.origin.startswith(cls.root) and spec.origin.endswith(".py"):
            spec.loader = DeferredAnnotations(fullname, spec.origin)
        return spec


def jsonable(v):
    try:
        json.dumps(v)
        return True
    except (TypeError, ValueError):
        return False


def main():
    root, files = os.path.abspath(sys.argv[1]), sys.argv[2:]
    sys.path.insert(0, root)
    UnderRoot.root = root
    sys.meta_path.insert(0, UnderRoot)
    unjudged = []
    for f in files:
        module = os.path.relpath(os.path.abspath(f), root)[: -len(".py")].replace(os.sep, ".")
        if module.endswith(".__init__"):
            module = module[: -len(".__init__")]
        try:
            importlib.import_module(module)
        except BaseException as e:  # noqa: BLE001 - a module this venv cannot import is named, not judged
            unjudged.append(f"{module}: {type(e).__name__}: {e}")
    from sqlalchemy import MetaData

    tables = {}
    for md in [o for o in gc.get_objects() if isinstance(o, MetaData)]:
        for t in md.tables.values():
            cols = []
            for c in t.columns:
                info = {
                    "name": c.name,
                    "type": type(c.type).__name__,
                    "length": getattr(c.type, "length", None),
                    "nullable": bool(c.nullable),
                    "primaryKey": bool(c.primary_key),
                    "unique": bool(c.unique),
                    "serverDefault": c.server_default is not None,
                    "fks": [
                        {"table": fk.column.table.name, "column": fk.column.name, "ondelete": fk.ondelete}
                        for fk in c.foreign_keys
                    ],
                }
                enum_class = getattr(c.type, "enum_class", None)
                if enum_class is not None:
                    info["enum"] = [m.value for m in enum_class]
                elif getattr(c.type, "enums", None):
                    info["enum"] = list(c.type.enums)
                if c.default is not None:
                    arg = c.default.arg
                    if isinstance(arg, enum.Enum):
                        arg = arg.value
                    info["defaultCallable"] = callable(arg)
                    info["defaultName"] = getattr(arg, "__name__", None) if callable(arg) else None
                    info["default"] = arg if (not callable(arg) and jsonable(arg)) else None
                cols.append(info)
            tables[t.name] = {"name": t.name, "columns": cols}
    print(json.dumps({"tables": sorted(tables.values(), key=lambda t: t["name"]), "unjudged": unjudged}))


if __name__ == "__main__":
    main()
