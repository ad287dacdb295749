"""Door 1's facts: names a class binds for certain, and comparison methods that are pure."""

import ast

from ..scopes import COMPREHENSION_TYPES
from ..tables import COMPARISON_METHODS


class TrustRules:
    def certainly_bound(self):
        """Per class id, the names a class binds for certain: a def, a class or an assignment with
        a value directly in its body, and attributes stored on self in `__init__`/`__post_init__`
        or a method they call on self; not annotations without a value, nor a name `del` anywhere
        in the body or on self, nor stores in other methods (which may never run)."""
        if self.certain_names is not None:
            return self.certain_names
        certain, deleted, stores, calls = {}, {}, {}, {}
        for class_id, cls in self.plugin_classes.items():
            names = certain[class_id] = set()
            for name, bindings in self.scope_of[class_id].bindings.items():
                if any(b.kind == 'del' for b in bindings):
                    continue
                for binding in bindings:
                    statement = binding.node if binding.kind in ('def', 'class') else self.statement_of(binding.node)
                    if statement is not None and self.parent(statement) is cls and (
                            binding.kind in ('def', 'class') or isinstance(statement, (ast.Assign, ast.AugAssign))
                            or (isinstance(statement, ast.AnnAssign) and statement.value is not None)):
                        names.add(name)
        for node in self.order:
            if type(node) is not ast.Attribute or not isinstance(node.value, ast.Name):
                continue
            scope = self.node_scope[id(node)]
            method = scope.node
            if scope.method_of is None or self.own_class(node.value, scope) is not scope.method_of:
                continue
            key = (id(scope.method_of), method.name)
            if isinstance(node.ctx, ast.Del):
                deleted.setdefault(id(scope.method_of), set()).add(node.attr)
            elif isinstance(node.ctx, ast.Store):
                stores.setdefault(key, set()).add(node.attr)
            elif isinstance(self.parent(node), ast.Call) and self.parent(node).func is node:
                calls.setdefault(key, set()).add(node.attr)
        for class_id in self.plugin_classes:
            run, pending = set(), ['__init__', '__post_init__']
            while pending:
                name = pending.pop()
                if name not in run:
                    run.add(name)
                    pending += calls.get((class_id, name), ())
                    certain[class_id] |= stores.get((class_id, name), set())
            certain[class_id] -= deleted.get(class_id, set())
        self.certain_names = certain
        return certain

    def comparisons_are_pure(self):
        """Whether every comparison or `in` method of the plugin's classes (`__eq__`, `__lt__`,
        `__contains__`, ...) is a def that uses its other operand only to compare it or check its
        class: `a == other._x` hands other._x to them, and one that keeps or returns it (`return
        other`) would give the plugin a library's private value."""
        if self.pure_comparisons is None:
            pure = True
            for class_id in self.plugin_classes:
                for name, bindings in self.scope_of[class_id].bindings.items():
                    if name in COMPARISON_METHODS and not all(
                            b.kind == 'def' and self.is_pure_comparison(b.node) for b in bindings):
                        pure = False
            self.pure_comparisons = pure
        return self.pure_comparisons

    def is_pure_comparison(self, function):
        args = function.args
        if (function.decorator_list or isinstance(function, ast.AsyncFunctionDef) or args.vararg or args.kwarg
                or args.kwonlyargs or len(args.posonlyargs + args.args) != 2):
            return False
        other = (args.posonlyargs + args.args)[1].arg
        for node in ast.walk(function):
            if isinstance(node, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef) + COMPREHENSION_TYPES):
                if node is not function:
                    return False
            if isinstance(node, ast.Name) and node.id == other and not self.only_compared_operand(node):
                return False
        return True

    def only_compared_operand(self, node):
        """`other`, `other.x.y` or `type(other)`, alone or in a tuple, as an operand of a comparison
        or the first argument of isinstance, whose result is returned, tested or negated."""
        parent = self.parent(node)
        while True:
            if isinstance(parent, ast.Attribute) and parent.value is node:
                pass
            elif isinstance(parent, ast.Tuple) and isinstance(parent.ctx, ast.Load):
                pass
            elif (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.args
                  and parent.args[0] is node and parent.func.id in ('type', 'isinstance')
                  and all(m.kind == 'builtin' for m in self.meanings(parent.func.id, self.node_scope[id(parent)]))):
                if parent.func.id == 'isinstance':
                    node, parent = parent, self.parent(parent)
                    break
            elif isinstance(parent, ast.Compare):
                node, parent = parent, self.parent(parent)
                break
            else:
                return False
            node, parent = parent, self.parent(parent)
        while isinstance(parent, (ast.BoolOp, ast.Compare)) or (
                isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)):
            node, parent = parent, self.parent(parent)
        return (isinstance(parent, ast.Return) or (isinstance(parent, (ast.If, ast.IfExp, ast.While, ast.Assert))
                                                     and parent.test is node))
