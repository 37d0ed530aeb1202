"""Django's own view of a code base's models, as JSON: the independent parse behind the extract judge.

Usage: python django_facts.py ROOT APP [APP ...]   (APP: a dotted package under ROOT with a models module)
Django itself imports the apps and builds its model registry; every concrete model's fields are
printed as Django's `_meta` sees them. On a failure the output is {"error", "file"} so the caller
can leave that app out and try again.
"""

import json
import os
import sys
import tempfile
import traceback


def jsonable(v):
    try:
        json.dumps(v)
        return True
    except (TypeError, ValueError):
        return False


def main():
    root, apps = sys.argv[1], sys.argv[2:]
    sys.path.insert(0, root)
    # A trimmed copy of a project keeps its imports by the project's package name
    # (`from styleguide_example.common.models import BaseModel`): that package is the root.
    package = os.environ.get("CHARTER_JUDGE_PACKAGE")
    if package:
        import types

        alias = types.ModuleType(package)
        alias.__path__ = [os.path.abspath(root)]
        sys.modules[package] = alias
    holder = tempfile.mkdtemp(prefix="charter-django-judge-")
    # One AppConfig per app, labelled by its dotted path: two apps both called `models` stay apart.
    with open(os.path.join(holder, "charter_judge_apps.py"), "w") as f:
        f.write("from django.apps import AppConfig\n")
        for i, app in enumerate(apps):
            f.write(f"class A{i}(AppConfig):\n    name = {app!r}\n    label = {app.replace('.', '_')!r}\n")
            f.write("    default_auto_field = 'django.db.models.AutoField'\n")
    sys.path.insert(0, holder)
    import django
    from django.conf import settings

    settings.configure(
        INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth"]
        + [f"charter_judge_apps.A{i}" for i in range(len(apps))],
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
        DEFAULT_AUTO_FIELD="django.db.models.AutoField",
        USE_TZ=True,
    )
    try:
        django.setup()
    except BaseException as e:  # noqa: BLE001 - the caller drops the app the traceback names
        frames = [fr.filename for fr in traceback.extract_tb(e.__traceback__) if fr.filename.startswith(os.path.abspath(root))]
        print(json.dumps({"error": f"{type(e).__name__}: {e}", "file": frames[-1] if frames else None}))
        return
    from django.apps import apps as registry

    out = []
    for app in apps:
        config = registry.get_app_config(app.replace(".", "_"))
        for model in config.get_models():
            meta = model._meta
            if meta.abstract or meta.proxy or not meta.managed:
                continue
            fields = []
            for fld in meta.concrete_fields:
                d = fld.default if fld.has_default() else None
                info = {
                    "name": fld.name,
                    "attname": fld.attname,
                    "column": fld.column,
                    "type": fld.get_internal_type(),
                    "cls": type(fld).__name__,
                    "null": fld.null,
                    "blank": fld.blank,
                    "hasDefault": fld.has_default(),
                    "maxLength": fld.max_length,
                    "unique": fld.unique,
                    "primaryKey": fld.primary_key,
                    "autoCreated": fld.auto_created,
                    "autoNow": bool(getattr(fld, "auto_now", False)),
                    "autoNowAdd": bool(getattr(fld, "auto_now_add", False)),
                }
                if fld.has_default():
                    info["default"] = d if (not callable(d) and jsonable(d)) else None
                    info["defaultCallable"] = callable(d)
                    if callable(d):
                        info["defaultName"] = getattr(d, "__name__", None)
                if fld.choices:
                    info["choices"] = [c for c, _ in fld.flatchoices if jsonable(c)]
                if fld.is_relation and fld.related_model is not None:
                    info["relatedModel"] = fld.related_model.__name__
                    info["onDelete"] = fld.remote_field.on_delete.__name__
                fields.append(info)
            many = [{"name": m.name, "relatedModel": getattr(m.related_model, "__name__", str(m.related_model))} for m in meta.local_many_to_many]
            out.append(
                {
                    "name": model.__name__,
                    "table": meta.db_table,
                    "file": sys.modules[model.__module__].__file__,
                    "fields": fields,
                    "manyToMany": many,
                }
            )
    print(json.dumps({"models": out}))


if __name__ == "__main__":
    main()
