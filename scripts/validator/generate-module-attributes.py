#!/usr/bin/env python3
"""Writes the public attributes of each allowed standard-library module, for the plugin validator.

    python3 scripts/validator/generate-module-attributes.py > src/community-plugins/validator/stdlib-module-attributes.json

The modules are the standard-library entries of the validator's allow-list, read from
allowed-modules.ts so that the list lives in one place. A module's table holds its public names
(no leading underscore) minus the ones that are modules: `logging.os` or `enum.bltns` hand out
another module, and only submodules that are themselves allowed may be reached that way (the
validator checks those against the allow-list). Run it with the Python the plugins run on,
and commit the result: the table is reviewable data, regenerated for a new Python.
"""
import importlib
import json
import re
import sys
import types
from pathlib import Path

ALLOW_LIST = Path(__file__).resolve().parents[2] / 'src/community-plugins/validator/allowed-modules.ts'


def allowed_modules():
    source = ALLOW_LIST.read_text(encoding='utf-8')
    block = source[source.index('ALLOWED_MODULES'):source.index(']);')]
    return re.findall(r"^\s*'([\w.]+)',", block, re.MULTILINE)


def public_attributes(module):
    names = []
    for name in dir(module):
        if name.startswith('_'):
            continue
        if isinstance(getattr(module, name, None), types.ModuleType):
            continue
        names.append(name)
    return sorted(names)


def main():
    tables = {}
    for name in allowed_modules():
        if name.split('.')[0] not in sys.stdlib_module_names:
            continue  # third-party and framework modules are not installed here
        tables[name] = public_attributes(importlib.import_module(name))
    json.dump(
        {'python': sys.version.split()[0], 'modules': tables},
        sys.stdout,
        indent=1,
        sort_keys=True,
    )
    sys.stdout.write('\n')


if __name__ == '__main__':
    main()
