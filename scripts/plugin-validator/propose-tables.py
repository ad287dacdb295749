#!/usr/bin/env python3
"""Proposes members for the plugin validator's reviewed tables; it never writes them.

    python3 scripts/plugin-validator/propose-tables.py

For each standard-library module in src/plugin-validator/python/tables.json it lists the public
names of the module (as this Python has them) that the table neither allows nor refuses, and the
listed names the module no longer has. A reviewer decides each one, by the rules of
docs/plugin-validator.md (nothing that hands out a module, a loader, a file writer, a code
evaluator or a frame), edits tables.json by hand, and raises rules_version when a change may
refuse a plugin that was accepted before.
"""
import importlib
import json
import sys
import types
from pathlib import Path

TABLES = Path(__file__).resolve().parents[2] / 'src/plugin-validator/python/tables.json'


def main():
    tables = json.loads(TABLES.read_text(encoding='utf-8'))
    for name, table in sorted(tables['modules'].items()):
        if name.split('.')[0] not in sys.stdlib_module_names:
            continue  # third-party and framework tables are reviewed by hand
        module = importlib.import_module(name)
        known = set(table.get('members', ())) | set(table.get('refused', {}))
        public = {n for n in dir(module) if not n.startswith('_')}
        unreviewed = sorted(
            n for n in public - known if not isinstance(getattr(module, n, None), types.ModuleType)
        )
        gone = sorted(set(table.get('members', ())) - public)
        if unreviewed or gone:
            print(f'{name}:')
            if unreviewed:
                print('  not reviewed: ' + ', '.join(unreviewed))
            if gone:
                print('  listed but absent: ' + ', '.join(gone))


if __name__ == '__main__':
    main()
