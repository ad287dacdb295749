"""The analyser's view of a program, for the differential test against CPython's own ast/symtable.

What the rules stand on: the statements (type, position, nesting), the scope each identifier was
placed in, and how each name read in a scope resolves (local, parameter, free, global). The test
computes the same from a fresh python3 with only ast, symtable and tokenize, and fails on any
difference.
"""
import ast
import json

import analyser


def program_view(raw):
    findings = analyser.Findings()
    text = analyser.check_bytes(raw, findings)
    if text is None:
        return {'refused': sorted({item[2] for item in findings.items})}
    tree = analyser.parse(raw, findings)
    if tree is None:
        return {'refused': sorted({item[2] for item in findings.items})}
    try:
        walk = analyser.Analyser(tree, findings)
        walk.collect()
    except analyser.DepthError:
        return {'refused': ['too-deep']}
    if walk.needs_symtable and not analyser.symtable_accepts(text, findings):
        return {'refused': sorted({item[2] for item in findings.items})}
    return {'statements': statements(tree), 'scopes': scopes(walk)}


def statements(tree):
    result = []
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, ast.stmt):
            result.append([type(node).__name__, node.lineno, node.col_offset, node.end_lineno, node.end_col_offset,
                           depth])
            depth += 1
        for child in reversed(list(ast.iter_child_nodes(node))):
            stack.append((child, depth))
    return result


def scopes(walk):
    """Per scope: the identifiers the analyser placed in it, and how it resolves each one read there."""
    placed = {id(scope): set() for scope in walk.all_scopes}
    unevaluated = unevaluated_annotations(walk.tree)
    reads = {id(scope): set() for scope in walk.all_scopes}
    for node in walk.order:
        scope = walk.node_scope[id(node)]
        if id(node) in unevaluated:
            continue
        if isinstance(node, ast.Name):
            placed[id(scope)].add(node.id)
            if isinstance(node.ctx, ast.Store) and isinstance(walk.parent(node), ast.NamedExpr):
                # A walrus target in a comprehension is also bound outside it (symtable has it in both).
                target = scope
                while isinstance(target.node, analyser.COMPREHENSION_TYPES):
                    target = target.parent
                placed[id(target)].add(node.id)
            if isinstance(node.ctx, ast.Load):
                reads[id(scope)].add(node.id)
        elif isinstance(node, ast.arg):
            placed[id(walk.scope_of[id(walk.parent(walk.parent(node)))])].add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            placed[id(scope)].add(node.name)
        elif isinstance(node, ast.alias):
            placed[id(scope)].add(node.asname or node.name.split('.')[0] if node.name != '*' else '*')
        elif isinstance(node, ast.Global):
            # `global x` names x in the function and in the module (symtable has it in both).
            placed[id(scope)].update(node.names)
            placed[id(walk.module_scope)].update(node.names)
        elif isinstance(node, ast.Nonlocal):
            placed[id(scope)].update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            placed[id(scope)].add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            placed[id(scope)].add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            placed[id(scope)].add(node.rest)
    result = []
    for scope in walk.all_scopes:
        resolved = {}
        for name in sorted(reads[id(scope)]):
            resolved[name] = resolution(walk, name, scope)
        node = scope.node
        result.append({
            'type': scope.kind,
            'name': scope.name,
            'line': scope.lineno,
            'node': [type(node).__name__, getattr(node, 'lineno', 0), getattr(node, 'col_offset', 0)],
            'identifiers': sorted(placed[id(scope)] - {'*'}),
            'reads': resolved,
        })
    # Scopes of one line, kind and name (two comprehensions on a line) in an order both views share.
    result.sort(key=lambda s: (s['line'], s['type'], s['name'], json.dumps([s['identifiers'], s['reads']])))
    return result


def unevaluated_annotations(tree):
    """Under `from __future__ import annotations` annotations are strings, never read as names
    (the rules still check them as code)."""
    future = any(isinstance(s, ast.ImportFrom) and s.module == '__future__' and
                 any(a.name == 'annotations' for a in s.names) for s in tree.body)
    if not future:
        return set()
    nodes = set()
    for node in ast.walk(tree):
        annotations = []
        if isinstance(node, ast.arg) and node.annotation is not None:
            annotations.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            annotations.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            annotations.append(node.annotation)
        for annotation in annotations:
            nodes.update(id(n) for n in ast.walk(annotation))
    return nodes


def resolution(walk, name, scope):
    """The scope the analyser gives a name read here, which decides where resolve() looks for its
    bindings (this scope, an enclosing function, or the module's)."""
    where = scope.scope_of_name(name)
    if scope.kind == 'function':
        if where is analyser.LOCAL:
            return 'parameter' if scope.flags.get(name, 0) & analyser.DEF_PARAM else 'local'
        return 'free' if where is analyser.FREE else 'global'
    if scope.kind == 'class' and where is analyser.LOCAL:
        return 'class-local'
    return 'global'
