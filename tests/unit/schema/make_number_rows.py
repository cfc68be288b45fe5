#!/usr/bin/env python3
"""Writes the number rows of json_schema_corpus.jsonl (multipleOf, minimum/maximum, enum and
uniqueItems across int, long, double and decimal) from an oracle written apart from docguard
with Python's decimal module, on the server's rules (each row's "source" names where they are):
- multipleOf: the value's Decimal128 remainder by the divisor's is zero with no flag raised; a
  double becomes a Decimal128 by rounding its exact value to 34 digits, then to 15 significant
  digits, ties to even; NaN and infinities raise a flag or leave a non-zero remainder, so they
  are never multiples.
- minimum/maximum: exact comparison across types; NaN satisfies <= and >= only against NaN,
  and never < or >.
- enum and uniqueItems: exact equality across types, NaN equals NaN, -0 equals 0.
Usage: make_number_rows.py > rows.jsonl (the first 316 rows of the corpus are its output)."""
import json
from decimal import Decimal, Context, ROUND_HALF_EVEN

EXACT = Context(prec=20000, rounding=ROUND_HALF_EVEN, Emax=999999, Emin=-999999)


def typed(kind, text):
    return {"int": {"$numberInt": text}, "long": {"$numberLong": text},
            "double": {"$numberDouble": text}, "decimal": {"$numberDecimal": text}}[kind]


def exact(kind, text):
    """The value's exact Decimal (a double's exact binary value)."""
    if kind == "double":
        return Decimal(float(text))
    return Decimal(text)


def as_decimal128(kind, text):
    if kind != "double":
        return Decimal(text)
    d = Decimal(float(text))
    if not d.is_finite() or d == 0:
        return d
    d34 = Context(prec=34, rounding=ROUND_HALF_EVEN).plus(d)
    return Context(prec=15, rounding=ROUND_HALF_EVEN).plus(d34)


def is_multiple(vk, vt, dk, dt):
    x, y = as_decimal128(vk, vt), as_decimal128(dk, dt)
    if not x.is_finite():
        return False
    return EXACT.remainder(x, y) == 0


def compare_ok(vk, vt, op, bk, bt):
    x, b = exact(vk, vt), exact(bk, bt)
    if x.is_nan() or b.is_nan():
        return op in ("<=", ">=") and x.is_nan() and b.is_nan()
    return {"<": x < b, "<=": x <= b, ">": x > b, ">=": x >= b}[op]


def equal(a, b):
    x, y = exact(*a), exact(*b)
    if x.is_nan() or y.is_nan():
        return x.is_nan() and y.is_nan()
    return x == y


FMOD = "src/mongo/db/matcher/schema/expression_internal_schema_fmod.cpp, src/mongo/platform/decimal128.cpp"
COMPARE = "src/mongo/db/matcher/expression_leaf.cpp, src/mongo/base/compare_numbers.h"
rows = []


def row(name, schema, document, valid, source):
    rows.append({"name": name, "schema": schema, "document": document, "valid": valid,
                 "source": source})


multiple_cases = [
    # (value kind, value, divisor kind, divisor)
    ("double", "19.99", "double", "0.01"), ("double", "0.3", "double", "0.1"),
    ("double", "19.995", "double", "0.01"), ("double", "0.7", "double", "0.1"),
    ("double", "1.1", "double", "0.1"), ("double", "4.35", "double", "0.05"),
    ("double", "99.99", "double", "0.01"), ("double", "0.07", "double", "0.01"),
    ("double", "1e-7", "double", "1e-8"), ("double", "12.5", "double", "2.5"),
    ("double", "12.6", "double", "2.5"), ("double", "123456789.12", "double", "0.01"),
    ("double", "0.1", "double", "0.3"), ("double", "10", "int", "5"),
    ("double", "10.5", "int", "5"), ("int", "12", "int", "5"), ("int", "15", "int", "5"),
    ("int", "-15", "int", "5"), ("int", "0", "int", "7"), ("long", "9007199254740993", "int", "3"),
    ("long", "9007199254740993", "int", "2"), ("long", "9223372036854775807", "int", "7"),
    ("long", "-9223372036854775808", "int", "2"), ("int", "3", "double", "0.1"),
    ("int", "7", "double", "3.5"), ("decimal", "19.995", "decimal", "0.005"),
    ("decimal", "19.995", "decimal", "0.01"), ("decimal", "0.3", "double", "0.1"),
    ("decimal", "1E+20", "int", "7"), ("decimal", "1.000000000000000000000000000000001", "double", "0.1"),
    ("decimal", "NaN", "int", "1"), ("decimal", "Infinity", "int", "1"),
    ("double", "NaN", "int", "1"), ("double", "Infinity", "double", "0.5"),
    ("double", "-0.0", "double", "0.1"), ("double", "1e300", "double", "1e-300"),
    ("double", "5e-324", "double", "5e-324"), ("double", "0.30000000000000004", "double", "0.1"),
    ("double", "2.675", "double", "0.005"), ("double", "1.0000000000000002", "double", "1"),
    ("double", "0.1", "decimal", "0.1"), ("double", "0.1", "decimal", "0.01"),
    ("double", "0.15", "decimal", "0.05"), ("int", "100", "decimal", "0.25"),
    ("int", "101", "decimal", "0.25"), ("long", "1000000000000000000", "decimal", "1E+18"),
    ("long", "1000000000000000001", "decimal", "1E+18"), ("double", "33.33", "double", "3.333"),
    ("double", "1.23456789012345678", "double", "1e-15"), ("double", "123.456", "double", "0.001"),
]
for vk, vt, dk, dt in multiple_cases:
    ok = is_multiple(vk, vt, dk, dt)
    row(f"multipleOf {dt} ({dk}) on {vt} ({vk})",
        {"properties": {"x": {"multipleOf": typed(dk, dt)}}}, {"x": typed(vk, vt)}, ok, FMOD)

bounds = [("int", "0"), ("long", "9007199254740993"), ("double", "0.1"), ("decimal", "0.1"),
          ("decimal", "-0"), ("double", "NaN"), ("double", "-Infinity"), ("long", "-9223372036854775808")]
values = [("int", "0"), ("long", "9007199254740992"), ("long", "9007199254740993"),
          ("long", "9007199254740994"), ("double", "9007199254740992"), ("double", "0.1"),
          ("decimal", "0.1"), ("decimal", "0.1000000000000000055511151231257827"),
          ("decimal", "0.1000000000000000055511151231257828"), ("double", "-0.0"),
          ("double", "NaN"), ("decimal", "NaN"), ("double", "Infinity"), ("decimal", "-Infinity"),
          ("double", "-9.3e18")]
for bk, bt in bounds:
    for vk, vt in values:
        for keyword, exclusive, op in (("minimum", False, ">="), ("maximum", True, "<")):
            spec = {keyword: typed(bk, bt)}
            if exclusive:
                spec["exclusiveMaximum"] = True
            row(f"{keyword}{' exclusive' if exclusive else ''} {bt} ({bk}) on {vt} ({vk})",
                {"properties": {"x": spec}}, {"x": typed(vk, vt)},
                compare_ok(vk, vt, op, bk, bt), COMPARE)

enum_pairs = [(("long", "9007199254740993"), ("long", "9007199254740992")),
              (("long", "9007199254740993"), ("double", "9007199254740992")),
              (("long", "9007199254740992"), ("double", "9007199254740992")),
              (("decimal", "0.1"), ("double", "0.1")), (("decimal", "0.5"), ("double", "0.5")),
              (("decimal", "1.000"), ("int", "1")), (("double", "NaN"), ("double", "NaN")),
              (("decimal", "NaN"), ("double", "NaN")), (("double", "-0.0"), ("int", "0")),
              (("decimal", "-0E+3"), ("double", "0")), (("decimal", "1E+2"), ("long", "100")),
              (("decimal", "9223372036854775807"), ("long", "9223372036854775807")),
              (("decimal", "9223372036854775808"), ("double", "9223372036854775808"))]
for a, b in enum_pairs:
    row(f"enum [{a[1]} ({a[0]})] on {b[1]} ({b[0]})", {"properties": {"x": {"enum": [typed(*a)]}}},
        {"x": typed(*b)}, equal(a, b), "src/mongo/db/matcher/schema/json_schema_parser.cpp (enum), " + COMPARE)
    row(f"uniqueItems [{a[1]} ({a[0]}), {b[1]} ({b[0]})]",
        {"properties": {"x": {"uniqueItems": True}}}, {"x": [typed(*a), typed(*b)]},
        not equal(a, b), "src/mongo/db/matcher/schema/expression_internal_schema_unique_items.cpp, " + COMPARE)

for r in rows:
    print(json.dumps(r))
