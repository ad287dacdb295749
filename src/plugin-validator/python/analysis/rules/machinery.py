"""Class machinery: logging.Formatter subclasses, methods read through their class, match classes."""

import ast

from ..common import is_dunder, is_private, is_str_constant
from ..registry import checks
from ..tables import SELF_MATCHING_BUILTINS


class MachineryRules:
    # A logging.Formatter's style decides whether its fields are read as attributes (str.format).
    def makes_formatter(self, call, quals, scope):
        """logging.Formatter(...), a plugin subclass of it, or __init__ on self/super() in one."""
        if 'logging.Formatter' in quals:
            return True
        func = call.func
        if isinstance(func, ast.Name):
            return any(m.kind == 'class' and self.derives_from_formatter(m.binding.node)
                       for m in self.meanings(func.id, scope))
        if isinstance(func, ast.Attribute) and func.attr == '__init__':
            owner = self.own_class(func.value, scope)
            return owner is not None and self.derives_from_formatter(owner)
        return False

    def derives_from_formatter(self, classdef):
        """A base is logging.Formatter, or a plugin class that derives from it; each class decided
        once from its bases' answers (its whole ancestry per class was quadratic in a chain). A
        base still being decided (a cycle of rebound names) counts as one: its calls are checked."""
        known = self.formatter_classes
        pending, started = [(classdef, False)], set()
        while pending:
            cls, bases_done = pending.pop()
            if id(cls) in known or (not bases_done and id(cls) in started):
                continue
            scope = self.node_scope[id(cls)]
            parents = [m.binding.node for base in cls.bases if isinstance(base, ast.Name)
                       for m in self.meanings_when_bound(base.id, scope) if m.kind == 'class']
            if bases_done:
                known[id(cls)] = (any('logging.Formatter' in self.qualnames(base, scope) for base in cls.bases)
                                  or any(known.get(id(p), True) for p in parents))
            else:
                started.add(id(cls))
                pending.append((cls, True))
                pending += [(p, False) for p in parents if id(p) not in known]
        return known[id(classdef)]

    def check_formatter_arguments(self, call):
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            self.report('dynamic-name', 'logging.Formatter() arguments must be written out (its style decides '
                        'how fields are read)', call)
        elif len(call.args) >= 3 and not is_str_constant(call.args[2], ('%', '$')):
            self.report('dynamic-name', "logging.Formatter style other than '%' or '$' is not allowed", call.args[2])

    def check_method_through_class(self, node, scope):
        """`C.method` (called with anything as self, aliased, passed to partial or map, a
        property's fget) is refused when the method trusts self with private names."""
        meanings = self.meanings_when_bound(node.value.id, scope)
        if not meanings or not all(m.kind == 'class' for m in meanings) or self.is_base_call_on_self(node, scope):
            return
        for meaning in meanings:
            if self.member_trusts_self(meaning.binding.node, node.attr):
                self.report('private-access', "Method '%s' uses private attributes: call it on an instance"
                            % node.attr, node)
                return

    def is_base_call_on_self(self, node, scope):
        """`Base.method(self, ...)` in a method of a plugin class that derives from the plugin class
        Base: the method runs on the real self, as super() would call it."""
        call = self.parent(node)
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and isinstance(call, ast.Call)
                and call.func is node and call.args and not isinstance(call.args[0], ast.Starred)):
            return False
        owner = self.own_class(call.args[0], scope)
        if owner is None or not isinstance(call.args[0], ast.Name):
            return False
        bases = self.meanings_when_bound(node.value.id, scope)
        return bool(bases) and all(m.kind == 'class' and m.binding.node in self.plugin_ancestry(owner)
                                   for m in bases)

    def member_trusts_self(self, cls, attr):
        """Whether C.attr may be a function that trusts its first argument with private names:
        a def of that name that uses them, or anything else bound to that name in a class that has
        such a def (`g = f`, `p = property(f)`), in C or the plugin classes it derives from."""
        for owner in self.plugin_ancestry(cls):
            trusting = self.trusting_methods(owner)
            for binding in self.scope_of[id(owner)].bindings.get(attr, []):
                if id(binding.node) in trusting if binding.kind == 'def' else trusting:
                    return True
        return False

    def trusting_methods(self, owner):
        """The ids of the methods of a class body that trust self with private names, once per
        class: `C.m` read a thousand times would walk every method a thousand times."""
        found = self.trusting_cache.get(id(owner))
        if found is None:
            found = self.trusting_cache[id(owner)] = frozenset(
                id(statement) for statement in owner.body
                if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))
                and not self.is_static(statement) and not self.is_classmethod(statement)
                and self.uses_private_self(statement))
        return found

    def is_classmethod(self, function):
        """Reached through its class, a classmethod is bound to the class: cls is still C (the
        builtin for certain: a plugin's own `classmethod` may return the function itself)."""
        scope = self.node_scope[id(function)]
        return any(self.builtin_named(d, 'classmethod', scope) for d in function.decorator_list)

    def check_method_in_class_body(self, node, scope):
        """In the class body, a method that trusts self is only defined, never used as a value
        (`x = f(other)`, `g = f`, `property(f)`): that would call it with anything as self.
        `@f.setter` on a property of the same name stays allowed."""
        parent = self.parent(node)
        if (isinstance(parent, ast.Attribute) and parent.attr in ('setter', 'getter', 'deleter')
                and isinstance(self.parent(parent), (ast.FunctionDef, ast.AsyncFunctionDef))):
            return
        for meaning in self.meanings(node.id, scope):
            function = meaning.binding.node if meaning.kind == 'def' else None
            if (function is not None and meaning.scope is scope and not self.is_static(function)
                    and not self.is_classmethod(function) and self.uses_private_self(function)):
                self.report('private-access', "Method '%s' uses private attributes: call it on an instance"
                            % node.id, node)
                return

    def uses_private_self(self, function):
        found = self.private_use_cache.get(id(function))
        if found is None:
            found = self.private_use_cache[id(function)] = any(
                isinstance(child, ast.Attribute) and (is_private(child.attr) or is_dunder(child.attr))
                for child in ast.walk(function))
        return found

    # --- match statements

    @checks(ast.MatchClass)
    def check_MatchClass(self, node, scope):
        for attr in node.kwd_attrs:
            self.check_attribute_name(attr, node, None, scope, True, None, in_pattern=True)
        if not node.patterns:
            return
        meanings = self.meanings_when_bound(node.cls.id, scope) if isinstance(node.cls, ast.Name) else []
        if meanings and all(m.kind == 'builtin' and m.qualname in SELF_MATCHING_BUILTINS for m in meanings):
            if len(node.patterns) == 1:
                return
        if meanings and all(m.kind == 'class' and self.is_closed_class(m.binding.node, 0) for m in meanings):
            return
        self.report('match-pattern', 'Positional patterns only on classes the plugin defines (their '
                    '__match_args__ decide which attributes are read)', node)

    def is_closed_class(self, cls, depth):
        if depth > 10 or cls.keywords:
            return False
        scope = self.node_scope[id(cls)]
        for decorator in cls.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            quals = self.qualnames(target, scope)
            if not quals or not all(q == 'dataclasses.dataclass' for q in quals):
                return False
        for base in cls.bases:
            if not isinstance(base, ast.Name):
                return False
            meanings = self.meanings_when_bound(base.id, scope)
            if not meanings or not all(m.kind == 'class' and self.is_closed_class(m.binding.node, depth + 1)
                                       for m in meanings):
                if not all(m.kind == 'builtin' and m.qualname == 'object' for m in meanings):
                    return False
        return True
