"""CPython's own view of programs, for the plugin validator's differential test.

Reads a JSON list of base64 sources on stdin and writes, for each, what the validator's view
(src/plugin-validator/python/view.py) must equal: the statements from ast, and per symbol table
the identifiers and the resolution of each name read there. Only ast, symtable and tokenize: none
of the analyser's code.
"""
import ast
import base64
import io
import json
import symtable
import sys
import tokenize


def view(raw):
    encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    # utf-8-sig when the file starts with a BOM: one BOM is dropped, as CPython's tokenizer does.
    text = raw.decode(encoding)
    tree = ast.parse(text)
    table = symtable.symtable(text, '<plugin>', 'exec')
    return {'statements': statements(tree), 'scopes': scopes(table, tree)}


def statements(tree):
    result = []

    def visit(node, depth):
        if isinstance(node, ast.stmt):
            result.append([type(node).__name__, node.lineno, node.col_offset, node.end_lineno,
                           node.end_col_offset, depth])
            depth += 1
        for child in ast.iter_child_nodes(node):
            visit(child, depth)

    visit(tree, 0)
    return result


def scopes(top, tree):
    result = []
    tables = []

    def collect(table, parents):
        tables.append((table, parents))
        for child in table.get_children():
            collect(child, parents + [table])

    collect(top, [])
    for table, parents in tables:
        reads = {}
        for symbol in table.get_symbols():
            name = symbol.get_name()
            if name.startswith('.') or name == '__class__' or not symbol.is_referenced():
                continue
            reads[name] = resolution(table, symbol, parents)
        result.append({
            'type': table.get_type(),
            'name': table.get_name(),
            'line': table.get_lineno(),
            'identifiers': sorted(s.get_name() for s in table.get_symbols() if written(s)),
            'reads': dict(sorted(reads.items())),
        })
    # Scopes of one line, kind and name (two comprehensions on a line) in an order both views share.
    result.sort(key=lambda s: (s['line'], s['type'], s['name'], json.dumps([s['identifiers'], s['reads']])))
    return result


def written(symbol):
    """A name that occurs in the table's own code (not one a closure passes through it, nor the
    implicit __class__ cell of a method that calls super())."""
    if symbol.get_name().startswith('.') or symbol.get_name() == '__class__':
        return False
    return (symbol.is_referenced() or symbol.is_assigned() or symbol.is_parameter() or symbol.is_imported()
            or symbol.is_declared_global() or symbol.is_nonlocal() or symbol.is_namespace())


def resolution(table, symbol, parents):
    kind = table.get_type()
    if kind == 'function':
        if symbol.is_parameter():
            return 'parameter'
        if symbol.is_local():
            return 'local'
        if symbol.is_free() or symbol.is_nonlocal():
            return 'free'
        return 'global'
    if kind == 'class' and symbol.is_local() and not symbol.is_declared_global():
        return 'class-local'
    return 'global'


def main():
    sources = json.load(sys.stdin)
    out = []
    for source in sources:
        raw = base64.b64decode(source)
        try:
            out.append(view(raw))
        except (SyntaxError, ValueError, UnicodeDecodeError, RecursionError, MemoryError, LookupError):
            out.append(None)
    json.dump(out, sys.stdout)


if __name__ == '__main__':
    main()
