"""isinstance narrowing: a parameter checked with `isinstance(x, C)` (C a class of the plugin) is an
object of the plugin inside the check: `if isinstance(other, Port): other.number`,
`return isinstance(other, Port) and other.number == self.number`, and after an early
`if not isinstance(other, Port): return ...` at the top of the function body. Only for a name that is
a parameter and nothing else in its function (no rebinding between the check and the read); the
plugin's classes have only plugin bases, so every instance of one is the plugin's own."""

import ast

SCOPE_BOUNDARIES = (ast.FunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp, ast.DictComp,
                    ast.GeneratorExp)


class NarrowingRules:
    def narrowed_to_own(self, name):
        meanings = self.meanings(name.id, self.node_scope[id(name)])
        if len(meanings) != 1 or meanings[0].kind != 'param':
            return False
        child, parent = name, self.parent(name)
        while parent is not None and not isinstance(parent, SCOPE_BOUNDARIES):
            if isinstance(parent, ast.If) and id(child) in self.body_ids(parent) and self.guards(parent.test, name.id):
                return True
            if isinstance(parent, ast.IfExp) and child is parent.body and self.guards(parent.test, name.id):
                return True
            if isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.And):
                first = self.and_guards(parent, name.id)
                if first is not None and first < self.position_in(parent.values, child):
                    return True
            child, parent = parent, self.parent(parent)
        if isinstance(parent, ast.FunctionDef):
            first = self.early_guards(parent).get(name.id)
            return (first is not None and id(child) in self.body_ids(parent)
                    and first < self.position_in(parent.body, child))
        return False

    # Each block's facts once, so that a long body or `and` chain is not scanned per read.
    def body_ids(self, node):
        return self.positions(node.body)

    def position_in(self, items, child):
        return self.positions(items)[id(child)]

    def and_guards(self, node, name):
        """Index of the first value of an `and` chain that guards `name`, or None (once per chain and name)."""
        key = ('and', id(node), name)
        if key not in self.guard_cache:
            self.guard_cache[key] = next(
                (index for index, value in enumerate(node.values) if self.guards(value, name)), None)
        return self.guard_cache[key]

    def guards(self, test, name):
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            return any(self.guards(value, name) for value in test.values)
        return (isinstance(test, ast.Call) and self.type_of(test.func) == {'F:builtins.isinstance'}
                and len(test.args) == 2 and not test.keywords and isinstance(test.args[0], ast.Name)
                and test.args[0].id == name and self.own_classes(test.args[1]))

    def own_classes(self, node):
        elements = node.elts if isinstance(node, ast.Tuple) else [node]
        return all(len(t) == 1 and next(iter(t)).startswith('OC:') for t in map(self.type_of, elements))

    def early_guards(self, function):
        """name -> index of the first `if not isinstance(name, C): return/raise` of the body (once per def)."""
        known = self.guard_cache.get(('early', id(function)))
        if known is None:
            known = self.guard_cache[('early', id(function))] = {}
            for index, statement in enumerate(function.body):
                if (isinstance(statement, ast.If) and not statement.orelse and statement.body
                        and isinstance(statement.body[-1], (ast.Return, ast.Raise))
                        and isinstance(statement.test, ast.UnaryOp) and isinstance(statement.test.op, ast.Not)):
                    test = statement.test.operand
                    if isinstance(test, ast.Call) and test.args and isinstance(test.args[0], ast.Name) \
                            and self.guards(test, test.args[0].id):
                        known.setdefault(test.args[0].id, index)
        return known
