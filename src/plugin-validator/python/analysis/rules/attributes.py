"""Attribute rules: dunder, private and dangerous names read or stored on any object, and the
self/cls/isinstance exemptions that let a plugin use its own private names (door 1)."""

import ast

from ..common import attribute_problem, is_dunder, is_private
from ..registry import RULES, checks
from ..tables import (
    ALLOWED_DUNDER_METHODS, BUILTIN_NAMES_OK_AS_ATTRIBUTES, DANGEROUS_ATTRIBUTES, DANGEROUS_ATTRIBUTE_PREFIXES,
    FILE_WRITING_METHODS, FORBIDDEN_BUILTINS, IDENTIFIER, MAX_TRUSTED_ANCESTRY, MODULE_REACHING_ATTRIBUTES,
    NAME_TAKING_CALLS, OPEN_LIKE, PUBLIC_UNDERSCORE_ATTRIBUTES, READABLE_DUNDER_ATTRIBUTES)


class AttributesRules:
    # --- attributes

    # --- attributes: each rule judges every ast.Attribute, in this order (see registry.py).

    @checks(ast.Attribute)
    def check_attribute_store(self, node, scope):
        """Door 3: an attribute is stored only on an object of the plugin's own."""
        if isinstance(node.ctx, ast.Load):
            return
        quals = self.node_qualnames(node.value, scope)
        if quals:
            self.report('module-tampering', "Assigning to attributes of '%s' is not allowed" % quals[0], node)
        elif not self.plugin_object(node.value, scope, 0):
            root = self.chain_root(node.value, scope)
            if root:
                rule = 'dynamic-name' if root.split('.')[0] in ('dataclasses', 'typing', 'enum') else 'module-tampering'
                self.report(rule, "Assigning to attributes of objects '%s' hands out is not allowed" % root, node)
            else:
                self.report('module-tampering', "Assigning to attributes of an object the analyser cannot trace to the "
                            "plugin's own classes is not allowed: it may be a library object (a dataclasses Field, "
                            'whose name becomes code)', node)

    @checks(ast.Attribute)
    def check_attribute(self, node, scope):
        self.check_attribute_name(node.attr, node, node.value, scope, isinstance(node.ctx, ast.Load), self.parent(node))

    @checks(ast.Attribute)
    def check_module_member(self, node, scope):
        for qual in self.node_qualnames(node.value, scope):
            self.check_member(qual, node.attr, node)

    @checks(ast.Attribute)
    def check_format_method(self, node, scope):
        if node.attr in ('format', 'format_map'):
            self.check_format(node, scope, self.parent(node))

    @checks(ast.Attribute)
    def check_callable_member(self, node, scope):
        """yaml.load and the callables that may only be called directly, however they are reached."""
        attr = node.attr
        parent = self.parent(node)
        called = isinstance(parent, ast.Call) and parent.func is node
        quals = self.node_qualnames(node.value, scope)
        for qual in quals:
            if '%s.%s' % (qual, attr) in ('yaml.load', 'yaml.load_all') and not called:
                self.report('unsafe-yaml-load', 'yaml.%s may only be called directly, with Loader=yaml.SafeLoader'
                            % attr, node)
        for qual in quals:
            self.check_callable_used_directly('%s.%s' % (qual, attr), node, called)

    @checks(ast.Attribute)
    def check_register_method(self, node, scope):
        if node.attr == 'register' and isinstance(node.ctx, ast.Load):
            self.check_register(node, scope, self.parent(node))

    @checks(ast.Attribute)
    def check_open_method(self, node, scope):
        if node.attr == 'open' and not any(q + '.open' in OPEN_LIKE for q in self.node_qualnames(node.value, scope)):
            self.check_method_open(node, self.parent(node))

    @checks(ast.Attribute)
    def check_class_member(self, node, scope):
        if isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name) and not is_dunder(node.attr):
            self.check_method_through_class(node, scope)

    def check_attribute_name(self, attr, node, value, scope, load, parent, in_pattern=False):
        """The rules on an attribute name, whatever it is read on."""
        if attr in FORBIDDEN_BUILTINS and attr not in BUILTIN_NAMES_OK_AS_ATTRIBUTES:
            self.report('forbidden-name', "Use of forbidden name '%s'" % attr, node)
            return
        if is_dunder(attr):
            called = isinstance(parent, ast.Call) and parent.func is node
            own = value is not None and self.own_class(value, scope) is not None
            nxt = parent.attr if isinstance(parent, ast.Attribute) and parent.value is node else None
            allowed = ((attr in READABLE_DUNDER_ATTRIBUTES and load)
                       or (attr == '__class__' and load and nxt in ('__name__', '__qualname__'))
                       or (attr in ALLOWED_DUNDER_METHODS and called
                           and (own or self.is_base_call_on_self(node, scope))))
            if not allowed:
                self.report('dunder-access', "Access to dunder name '%s' is not allowed" % attr, node)
            return
        if attr in DANGEROUS_ATTRIBUTES or attr.startswith(DANGEROUS_ATTRIBUTE_PREFIXES):
            self.report('dangerous-attribute', "Use of dangerous attribute '%s'" % attr, node)
            return
        if attr in MODULE_REACHING_ATTRIBUTES:
            self.report('dangerous-attribute', "Attribute '%s' reaches a forbidden module" % attr, node)
            return
        if attr in FILE_WRITING_METHODS:
            self.report('open-write', "Writing files with .%s() is not allowed" % attr, node)
            return
        if attr == 'attrgetter' and not self.is_key_attrgetter(node, parent):
            self.report('dangerous-attribute', 'attrgetter only as key=attrgetter("name", ...) with literal names '
                        'that pass the attribute rules', node)
            return
        if (attr in NAME_TAKING_CALLS and not (isinstance(parent, ast.Call) and parent.func is node)
                and not self.names_a_type(node)):
            if not in_pattern:
                self.report('dynamic-name', '%s may only be called directly, with literal names' % attr, node)
            return
        if is_private(attr) and attr not in PUBLIC_UNDERSCORE_ATTRIBUTES:
            owner = self.own_class(value, scope) if value is not None else None
            if owner is None:
                owner = self.checked_instance_class(value, node, scope)
            if owner is None or not self.owns_name(owner, attr):
                why = ''
                if owner is not None and self.trust_ended(owner):
                    why = (": class '%s' may not be what its statement says (a decorator, a class keyword, a "
                           'library base, a class handed out as a value, or over %d ancestors)'
                           % (owner.name, MAX_TRUSTED_ANCESTRY))
                elif owner is not None:
                    why = (': no class of its own binds it for certain (in the class body or in __init__), '
                           'or a library base of its family has it')
                self.report('private-access', "Access to private attribute '%s' is not allowed%s" % (attr, why), node)

    def checked_instance_class(self, value, node, scope):
        """The method's class C when `value` is a parameter of the method, never rebound, that
        isinstance(value, C) has checked where `node` runs (`if isinstance(other, C): ...`,
        `isinstance(other, C) and ...`, or after `if not isinstance(other, C): return ...`).
        Only then is `other._key` the class's own name: on any other object, a class that binds
        a private name would unlock it everywhere (`loop._make_subprocess_transport`)."""
        method = scope.method_of
        if not isinstance(value, ast.Name) or method is None:
            return None
        meanings = self.meanings(value.id, scope)
        if meanings and all(m.kind == 'value' and m.scope is scope and m.binding is not None and self.builds_instance_of(
                m.binding.value, method, scope) for m in meanings):
            return method  # `new = C(...)`: an instance of the class itself
        if not meanings or not all(m.kind == 'param' and m.binding.node is scope.node for m in meanings):
            return None
        if self.only_compared(node) and self.comparisons_are_pure():
            return method  # `self._severity < other._severity`: a value compared is never run or kept
        is_check = lambda test: self.is_isinstance_check(test, value.id, method, scope)
        child, parent = node, self.parent(node)
        while parent is not None and child is not scope.node:
            if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test and (
                    child in parent.body if isinstance(parent, ast.If) else child is parent.body):
                if is_check(parent.test):
                    return method
            elif isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.And):
                if any(is_check(v) for v in parent.values[:parent.values.index(child)]):
                    return method
            for field in ('body', 'orelse', 'finalbody'):
                block = getattr(parent, field, None)
                if isinstance(block, list):
                    position = self.position_in_block(block, child)
                    if position is not None:
                        guard = self.first_guard(block, value.id, method, is_check)
                        if guard is not None and guard < position:
                            return method
            child, parent = parent, self.parent(parent)
        return None

    def position_in_block(self, block, statement):
        """The index of a statement in its block, from an index built once per block (a scan per
        read was quadratic in a long method)."""
        index = self.block_index.get(id(block))
        if index is None:
            index = self.block_index[id(block)] = {id(each): position for position, each in enumerate(block)}
        return index.get(id(statement))

    def first_guard(self, block, name, method, is_check):
        """The index of the first `if not isinstance(name, C): return ...` of a block, or None; once
        per block, name and class."""
        key = (id(block), name, id(method))
        if key not in self.guard_cache:
            found = None
            for position, earlier in enumerate(block):
                if (isinstance(earlier, ast.If) and isinstance(earlier.test, ast.UnaryOp)
                        and isinstance(earlier.test.op, ast.Not) and is_check(earlier.test.operand)
                        and isinstance(earlier.body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))):
                    found = position
                    break
            self.guard_cache[key] = found
        return self.guard_cache[key]

    def builds_instance_of(self, value, cls, scope):
        """`C(...)` (or `cls(...)` in C's classmethod) where C has no base from outside the plugin
        and no `__new__` of its own, which could return any object."""
        if (not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)) or self.trust_ended(cls)
                or not self.only_plugin_bases(cls)):
            return False
        if any('__new__' in self.class_names[id(c)] for c in self.plugin_ancestry(cls)):
            return False
        if self.own_class(value.func, scope) is cls:
            return True
        meanings = self.meanings_when_bound(value.func.id, scope)
        return bool(meanings) and all(m.kind == 'class' and m.binding.node is cls for m in meanings)

    def only_compared(self, node):
        parent = self.parent(node)
        while isinstance(parent, (ast.Tuple, ast.List)) and isinstance(parent.ctx, ast.Load):
            node, parent = parent, self.parent(parent)
        return isinstance(parent, ast.Compare)

    def is_isinstance_check(self, test, name, cls, scope):
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            return any(self.is_isinstance_check(v, name, cls, scope) for v in test.values)
        if not (self.is_builtin_call(test, 'isinstance', scope) and len(test.args) == 2 and not test.keywords
                and all(m.kind == 'builtin' for m in self.meanings_when_bound('isinstance', scope))):
            return False  # the builtin for certain: a plugin's own isinstance could answer True
        subject, checked = test.args
        if not (isinstance(subject, ast.Name) and subject.id == name and isinstance(checked, ast.Name)):
            return False
        meanings = self.meanings_when_bound(checked.id, scope)
        return (bool(meanings) and all(m.kind == 'class' and m.binding.node is cls for m in meanings)
                and not self.trust_ended(cls) and self.only_plugin_bases(cls))

    def literal_attribute_call(self, call):
        """getattr(obj, 'name'[, default]) with a literal name: the same as obj.name, checked as such."""
        if len(call.args) < 2 or call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
            return False
        name = call.args[1]
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str) and IDENTIFIER.match(name.value)):
            return False
        if attribute_problem(name.value) or name.value in FILE_WRITING_METHODS:
            return False
        scope = self.node_scope[id(call)]
        load = call.func.id == 'getattr'
        if not load and (self.qualnames(call.args[0], scope) or len(call.args) != (3 if call.func.id == 'setattr' else 2)):
            return False
        synthetic = ast.Attribute(value=call.args[0], attr=name.value,
                                  ctx=ast.Load() if load else ast.Store())
        ast.copy_location(synthetic, call)
        self.parents[id(synthetic)] = self.parent(call)
        self.node_scope[id(synthetic)] = scope
        for rule in RULES[ast.Attribute]:
            rule(self, synthetic, scope)
        return True
