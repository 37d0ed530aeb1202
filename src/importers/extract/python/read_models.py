"""Reads Python files with the standard library's `ast` and prints what the extractor needs as JSON.

Input: file paths as arguments. Output (stdout): one JSON object {"files": [...]} where each file
lists its imports, its classes (bases, keyword arguments, class-level assignments with the call
that builds them, inner classes) and its decorated functions (route decorators). Nothing is
imported or executed: the code base under review never runs.
"""

import ast
import json
import math
import sys


def value(node):
    """A JSON-able view of an expression: constants, names, calls, lists, subscripts."""
    if node is None:
        return None
    if isinstance(node, ast.Constant):
        v = node.value
        # JSON has no infinities, and an integer past 2**53 is no longer itself in JavaScript.
        if isinstance(v, float) and not math.isfinite(v):
            return {"kind": "other", "source": repr(v)}
        if isinstance(v, int) and not isinstance(v, bool) and abs(v) > 2**53:
            return {"kind": "other", "source": "<large integer>"}
        if isinstance(v, (str, int, float, bool)) or v is None:
            return {"kind": "const", "value": v}
        return {"kind": "other", "source": ast.unparse(node)}
    if isinstance(node, (ast.Name, ast.Attribute)):
        return {"kind": "name", "id": ast.unparse(node)}
    if isinstance(node, ast.Call):
        return {
            "kind": "call",
            "func": ast.unparse(node.func),
            "args": [value(a) for a in node.args],
            "kwargs": {k.arg: value(k.value) for k in node.keywords if k.arg},
        }
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return {"kind": "list", "items": [value(e) for e in node.elts]}
    if isinstance(node, ast.Subscript):
        return {
            "kind": "subscript",
            "value": ast.unparse(node.value),
            "slice": value(node.slice),
            "source": ast.unparse(node),
        }
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, (int, float))
        and not isinstance(node.operand.value, bool)
    ):
        negated = value(node.operand)
        if negated["kind"] == "const":
            negated["value"] = -negated["value"]
        return negated
    return {"kind": "other", "source": ast.unparse(node)}


def _named(node, *names):
    return isinstance(node, ast.Subscript) and ast.unparse(node.value).split(".")[-1] in names


def _union_members(node):
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union_members(node.left) + _union_members(node.right)
    if _named(node, "Union"):
        return list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    return [node]


def read_annotation(node):
    """The parts of a type annotation a Pydantic field needs, read from its tree rather than its text:
    Annotated[T, Field(...)] metadata, Optional / `| None`, Literal values and list item types."""
    metadata = []
    if _named(node, "Annotated") and isinstance(node.slice, ast.Tuple) and node.slice.elts:
        metadata = [value(m) for m in node.slice.elts[1:]]
        node = node.slice.elts[0]
    optional = False
    if _named(node, "Optional"):
        optional = True
        node = node.slice
    members = _union_members(node)
    present = [m for m in members if not (isinstance(m, ast.Constant) and m.value is None)]
    if len(present) < len(members):
        optional = True
    if len(present) == 1:
        node = present[0]
    out = {"optional": optional, "base": ast.unparse(node), "metadata": metadata}
    if _named(node, "Literal"):
        elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        out["base"] = "Literal"
        out["literal"] = [e.value for e in elts if isinstance(e, ast.Constant)]
    elif _named(node, "list", "List", "Sequence", "set", "Set", "frozenset", "FrozenSet"):
        out["base"] = "list"
        out["items"] = ast.unparse(node.slice)
    elif isinstance(node, ast.Subscript):
        out["base"] = ast.unparse(node.value)
    return out


def read_class(node):
    body = []
    inner = []
    for stmt in node.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            body.append(
                {"name": stmt.targets[0].id, "annotation": None, "value": value(stmt.value), "line": stmt.lineno}
            )
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            body.append(
                {
                    "name": stmt.target.id,
                    "annotation": ast.unparse(stmt.annotation),
                    "type": read_annotation(stmt.annotation),
                    "value": value(stmt.value),
                    "line": stmt.lineno,
                }
            )
        elif isinstance(stmt, ast.ClassDef):
            inner.append(read_class(stmt))
    doc = ast.get_docstring(node)
    return {
        "name": node.name,
        "line": node.lineno,
        "bases": [ast.unparse(b) for b in node.bases],
        "keywords": {k.arg: value(k.value) for k in node.keywords if k.arg},
        "doc": doc,
        "body": body,
        "inner": inner,
    }


def parse_tolerant(source, path):
    """Parses the file; a line this Python cannot read (syntax newer than it, `type X = ...`) is
    replaced by `pass` at its indentation and parsing goes on, up to 50 lines: the rest of the file
    is still read. Returns the tree and the lines given up, or raises the first SyntaxError."""
    lines = source.decode("utf-8", errors="replace").split("\n")
    skipped = []
    first = None
    for _ in range(50):
        try:
            return ast.parse("\n".join(lines), filename=path), skipped
        except SyntaxError as e:
            first = first or e
            n = (e.lineno or 0) - 1
            if n < 0 or n >= len(lines) or lines[n].strip() in ("", "pass"):
                raise first from None
            indent = len(lines[n]) - len(lines[n].lstrip())
            skipped.append({"line": n + 1, "message": e.msg, "text": lines[n].strip()[:80]})
            # A clause header (`except A, B:` of Python 3.14) cannot become `pass`: the `try` would
            # lose its handler. A bare clause of the same keyword keeps the block structure.
            keyword = lines[n].strip().split(" ")[0].rstrip(":")
            lines[n] = " " * indent + (keyword + ":" if keyword in ("except", "else", "finally") else "pass")
    raise first


def _unreadable(path, message, line=1, column=1):
    # The same keys as a file that was read, so the reader never meets a missing list.
    return {
        "path": path,
        "error": {"message": message, "line": line or 1, "column": column or 1},
        "imports": [],
        "classes": [],
        "functions": [],
        "assignments": [],
        "skipped": [],
    }


def read_file(path):
    """One file's view; any failure (unreadable file, null bytes, a tree too deep) becomes that
    file's located error, never the end of the whole run."""
    try:
        return _read_file(path)
    except SyntaxError as e:
        return _unreadable(path, e.msg, e.lineno, e.offset)
    except RecursionError:
        return _unreadable(path, "nested too deeply for Python's parser")
    except Exception as e:  # noqa: BLE001 - every other failure is this file's, reported with its name
        return _unreadable(path, f"{type(e).__name__}: {e}")


def _read_file(path):
    with open(path, "rb") as f:
        source = f.read()
    tree, skipped = parse_tolerant(source, path)
    imports = []
    classes = []
    functions = []
    assignments = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imports.append(node.module)
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            classes.append(read_class(node))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.append(
                {"name": node.name, "line": node.lineno, "decorators": [value(d) for d in node.decorator_list]}
            )
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            assignments.append({"name": node.targets[0].id, "value": value(node.value), "line": node.lineno})
    return {
        "path": path,
        "imports": sorted(set(imports)),
        "classes": classes,
        "functions": functions,
        "assignments": assignments,
        "skipped": skipped,
    }


def main():
    # `-` reads the paths from stdin, one a line: a whole code base can exceed the argument list's limit.
    paths = sys.stdin.read().splitlines() if sys.argv[1:] == ["-"] else sys.argv[1:]
    files = [read_file(p) for p in paths if p]
    json.dump({"files": files}, sys.stdout)


if __name__ == "__main__":
    main()
