#!/usr/bin/env python3
"""Checks rules.known_bases and rules.identity_class_decorators of the validator's tables.json
against CPython (door 1 of issue 32: an exemption trusts only a class family the tree proves).

    python3 scripts/plugin-validator/check-known-bases.py

For each library base class listed, the names a plugin class deriving from it could take for its
own: every single-underscore name of the class and of its metaclass, every single-underscore
attribute the code of a class in its MRO reads or stores (on self or anything), and `format` and
`format_map` when the class is a str (they read a template). The table must list exactly those.
Each identity decorator must return the class it is given. Prints each difference; exits 1 on any.
"""
import ast
import enum
import importlib
import inspect
import json
import sys
import textwrap
from pathlib import Path

TABLES = Path(__file__).resolve().parents[2] / 'src/plugin-validator/python/tables.json'


def is_private(name):
    return name.startswith('_') and not name.startswith('__')


def resolve(qualname):
    module, _, name = qualname.rpartition('.')
    return getattr(importlib.import_module(module), name)


def held_names(cls):
    names = {n for n in dir(cls) if is_private(n)} | {n for n in dir(type(cls)) if is_private(n)}
    for klass in cls.__mro__:
        try:
            source = textwrap.dedent(inspect.getsource(klass))
        except (OSError, TypeError):
            continue  # written in C: dir() has its names
        names.update(node.attr for node in ast.walk(ast.parse(source))
                     if isinstance(node, ast.Attribute) and is_private(node.attr))
    if issubclass(cls, str):
        names |= {'format', 'format_map'}
    return sorted(names)


def returns_its_class(qualname):
    decorator = resolve(qualname)
    if qualname == 'enum.unique':
        cls = enum.Enum('Probe', 'A B')
    else:
        cls = type('Probe', (), {'__lt__': lambda self, other: False, '__annotations__': {}})
    return decorator(cls) is cls


def main():
    rules = json.loads(TABLES.read_text())['rules']
    problems = []
    for qualname, listed in rules['known_bases'].items():
        expected = held_names(resolve(qualname))
        if sorted(listed) != expected:
            problems.append('%s: listed %s, CPython %s' % (qualname, sorted(listed), expected))
    for qualname in rules['identity_class_decorators']:
        if not returns_its_class(qualname):
            problems.append('%s does not return the class it is given' % qualname)
    for problem in problems:
        print(problem)
    print('%d known bases, %d identity decorators, %d differences under %s' % (
        len(rules['known_bases']), len(rules['identity_class_decorators']), len(problems), sys.version.split()[0]))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
