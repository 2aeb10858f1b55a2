#!/usr/bin/env python3
"""Validates OCSF event lines (JSON, one per line, on stdin) against vendored OCSF schema
files (argv[1]: the schema directory, as in github.com/ocsf/ocsf-schema). Checks, per
event: the class (by class_uid, its category and type_uid), every required attribute,
`at_least_one` constraints, attribute types and enums (merged from the dictionary, the
class chain and its includes/profiles), and that no attribute lies outside the class or
object. Prints one line per problem and exits 1 if there is any; else prints a count."""
import json
import os
import sys

ROOT = sys.argv[1]


def load(rel):
    with open(os.path.join(ROOT, rel)) as f:
        return json.load(f)


DICT = load("dictionary.json")
TYPES = DICT["types"]["attributes"]
CATEGORIES = load("categories.json")["attributes"]


def merge(into, attrs):
    for name, spec in attrs.items():
        if name == "$include":
            continue
        cur = dict(into.get(name, {}))
        enum = dict(cur.get("enum", {}))
        enum.update(spec.get("enum", {}) if isinstance(spec, dict) else {})
        cur.update(spec if isinstance(spec, dict) else {})
        if enum:
            cur["enum"] = enum
        into[name] = cur


def with_includes(doc, attrs):
    # A profile's attributes belong to an event only when its metadata.profiles names it.
    for inc in doc.get("attributes", {}).get("$include", []):
        if not inc.startswith("profiles/"):
            merge(attrs, load(inc).get("attributes", {}))
    merge(attrs, doc.get("attributes", {}))


def class_files():
    out = {}
    for d, _, files in os.walk(os.path.join(ROOT, "events")):
        for f in files:
            doc = load(os.path.relpath(os.path.join(d, f), ROOT))
            out[doc["name"]] = doc
    return out


CLASSES = class_files()


def class_attrs(doc, profiles):
    chain = []
    while doc is not None:
        chain.append(doc)
        doc = CLASSES.get(doc.get("extends")) if doc.get("extends") else None
    attrs, constraints = {}, {}
    for d in reversed(chain):
        with_includes(d, attrs)
        constraints.update(d.get("constraints", {}))
    for p in profiles:
        if os.path.exists(os.path.join(ROOT, "profiles", p + ".json")):
            merge(attrs, load("profiles/" + p + ".json")["attributes"])
    return attrs, constraints


def object_attrs(name):
    attrs, constraints, chain = {}, {}, []
    while name and name != "object":
        doc = load("objects/" + name + ".json")
        chain.append(doc)
        name = doc.get("extends")
    for d in reversed(chain):
        with_includes(d, attrs)
        constraints.update(d.get("constraints", {}))
    return attrs, constraints


def base_type(t):
    while t in TYPES and TYPES[t].get("type"):
        t = TYPES[t]["type"]
    return t


def check_scalar(path, value, t, problems):
    ok = {
        "string_t": lambda v: isinstance(v, str),
        "integer_t": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "long_t": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "float_t": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "boolean_t": lambda v: isinstance(v, bool),
        "json_t": lambda v: True,
    }.get(base_type(t))
    if ok is None:
        problems.append(f"{path}: unknown type {t}")
    elif not ok(value):
        problems.append(f"{path}: {value!r} is not a {t}")


# The schema's compiler fills these in per class; checked against the class itself below.
COMPUTED = {"class_uid", "category_uid", "type_uid"}


def check_value(path, name, spec, value, problems):
    dspec = dict(DICT["attributes"].get(name, {}))
    enum = dict(dspec.get("enum", {}))
    enum.update(spec.get("enum", {}))
    dspec.update(spec)
    t = dspec.get("type")
    if t is None:
        problems.append(f"{path}: not in the dictionary")
        return
    if dspec.get("is_array"):
        if not isinstance(value, list):
            problems.append(f"{path}: expected an array")
            return
        items = value
    else:
        items = [value]
    for i, v in enumerate(items):
        p = f"{path}[{i}]" if dspec.get("is_array") else path
        if t == "object":
            if not isinstance(v, dict):
                problems.append(f"{p}: expected an object")
        elif t.endswith("_t"):
            check_scalar(p, v, t, problems)
            if enum and name not in COMPUTED and str(v) not in enum:
                problems.append(f"{p}: {v!r} is not one of {sorted(enum)}")
        else:
            check_object(p, t, v, problems)


def check_fields(path, attrs, constraints, obj, problems):
    for name, spec in attrs.items():
        if spec.get("requirement") == "required" and name not in obj:
            problems.append(f"{path}: missing required {name}")
    group = constraints.get("at_least_one")
    if group and not any(k in obj for k in group):
        problems.append(f"{path}: needs at least one of {group}")
    for name, value in obj.items():
        if name not in attrs:
            problems.append(f"{path}.{name}: not an attribute here")
            continue
        check_value(f"{path}.{name}", name, attrs[name], value, problems)


def check_object(path, name, value, problems):
    if not isinstance(value, dict):
        problems.append(f"{path}: expected a {name} object")
        return
    attrs, constraints = object_attrs(name)
    check_fields(path, attrs, constraints, value, problems)


def category_of(doc):
    while "category" not in doc:
        doc = CLASSES[doc["extends"]]
    return doc["category"]


def check_event(e):
    problems = []
    uid = e.get("class_uid")
    cls = next((c for c in CLASSES.values() if c.get("uid") is not None and
                CATEGORIES[category_of(c)]["uid"] * 1000 + c["uid"] == uid), None)
    if cls is None:
        return [f"class_uid {uid!r}: not a vendored class"]
    category = category_of(cls)
    if e.get("category_uid") != CATEGORIES[category]["uid"]:
        problems.append(f"category_uid {e.get('category_uid')!r} is not {category}'s")
    if e.get("type_uid") != uid * 100 + e.get("activity_id", -1):
        problems.append("type_uid is not class_uid * 100 + activity_id")
    profiles = e.get("metadata", {}).get("profiles", [])
    attrs, constraints = class_attrs(cls, profiles)
    check_fields(cls["name"], attrs, constraints, e, problems)
    return problems


def main():
    n = bad = 0
    for line in sys.stdin:
        if not line.strip():
            continue
        n += 1
        for p in check_event(json.loads(line)):
            bad += 1
            print(f"line {n}: {p}")
    print(f"{n} events checked, {bad} problems")
    return 1 if bad or n == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
