"""Classes: plain classes at module level whose bases are the plugin's own plain classes (or
`object`, or a builtin exception), no keywords, decorators only the builtins and `@dataclass` with
literal options, dunder methods from a short list; match class patterns on own or builtin classes;
item stores only on containers."""

import ast

from ..common import is_dunder, is_private
from ..registry import checks
from ..table import BUILTINS, DUNDER_METHODS, MODULES, PROPERTY_PARTS, TYPES
from ..types import library_entry

CLASS_BODY = (ast.FunctionDef, ast.Assign, ast.AnnAssign, ast.Pass)
DATACLASS = 'F:dataclasses.dataclass'
DATACLASS_OPTIONS = frozenset(MODULES['dataclasses']['dataclass']['kw'])


class ClassesRules:
    @checks(ast.ClassDef)
    def check_class(self, node, scope):
        if scope is not self.module_scope:
            self.report('class-machinery', 'Define classes at the top level of the module', node)
        if node.keywords:
            self.report('class-machinery', 'Class keywords (metaclass=, ...) are outside the plugin profile: write '
                        'a plain class', node.keywords[0].value)
        for base in node.bases:
            if not self.is_plain_base(base):
                self.report('class-machinery', 'A base class must be a plain class of the plugin, object or a builtin '
                            'exception: library classes are not bases in the profile (keep the library object in an '
                            'attribute instead)', base)
        for decorator in node.decorator_list:
            if not self.is_dataclass_decorator(decorator):
                self.report('class-machinery', 'The only class decorator of the profile is @dataclass (with literal '
                            'options)', decorator)
        for statement in node.body:
            if not (isinstance(statement, CLASS_BODY) or isinstance(statement, ast.Expr)
                    and isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str)):
                self.report('class-machinery', 'A class body holds methods, constants and a docstring: move this '
                            'statement into a method', statement)
            elif isinstance(statement, ast.Assign) and not all(isinstance(t, ast.Name) for t in statement.targets):
                self.report('class-machinery', 'A class body assigns plain names only', statement)

    def is_plain_base(self, base):
        atoms = self.type_of(base)
        if len(atoms) != 1 or isinstance(base, ast.Starred):
            return False
        (atom,) = atoms
        if atom.startswith('OC:') or atom == 'F:builtins.object':
            return True
        return atom.startswith('F:builtins.') and bool(BUILTINS.get(atom[11:], {}).get('exception'))

    def is_dataclass_decorator(self, decorator):
        if self.type_of(decorator) == {DATACLASS}:
            return True
        return (isinstance(decorator, ast.Call) and self.type_of(decorator.func) == {DATACLASS} and not decorator.args
                and all(k.arg in DATACLASS_OPTIONS and isinstance(k.value, ast.Constant)
                        and isinstance(k.value.value, bool) for k in decorator.keywords))

    @checks(ast.FunctionDef)
    def check_function(self, node, scope):
        in_class = scope.kind == 'class'
        if in_class and is_dunder(node.name) and node.name not in DUNDER_METHODS:
            self.report('class-machinery', "Special method '%s' is outside the plugin profile (it may define %s)"
                        % (node.name, ', '.join(sorted(DUNDER_METHODS))), node)
        elif in_class and is_private(node.name):
            self.report('private-access', "Method '%s' starts with '_': the profile has no private attributes; "
                        'name it %s' % (node.name, node.name.lstrip('_') or 'without the underscore'), node)
        for decorator in node.decorator_list:
            if not (in_class and self.is_method_decorator(decorator, scope)):
                self.report('class-machinery', 'Decorators are outside the profile except @staticmethod, @classmethod, '
                            '@property and @name.setter in a class body: call the function directly', decorator)

    def is_method_decorator(self, decorator, scope):
        if self.decorator_kind(decorator):
            return True
        if not (isinstance(decorator, ast.Attribute) and decorator.attr in PROPERTY_PARTS
                and isinstance(decorator.value, ast.Name)):
            return False
        bindings = scope.bindings.get(decorator.value.id, [])
        return bool(bindings) and all(b.kind == 'def' and any(
            self.decorator_kind(d) == 'property' or isinstance(d, ast.Attribute) and d.attr in PROPERTY_PARTS
            for d in b.node.decorator_list) for b in bindings)

    @checks(ast.MatchClass)
    def check_match_class(self, node, scope):
        atoms = self.type_of(node.cls)
        if not (len(atoms) == 1 and self.matches_itself(next(iter(atoms)))):
            self.report('match-pattern', 'Class patterns are allowed on the plugin\'s own classes and on builtin '
                        'types (str(), int(), ...): match a value or a mapping instead', node.cls)
        for attr in node.kwd_attrs:
            if is_dunder(attr) or is_private(attr):
                self.report('private-access' if is_private(attr) else 'dunder-access',
                            "Pattern attribute '%s' is outside the plugin profile: match a public attribute" % attr,
                            node)

    def matches_itself(self, atom):
        if atom.startswith('OC:'):
            return True
        entry = library_entry(atom) if atom.startswith('F:builtins.') else None
        return bool(entry and TYPES.get(entry.get('class'), {}).get('$match'))

    @checks(ast.Subscript)
    def check_item_store(self, node, scope):
        if isinstance(node.ctx, ast.Load):
            return
        for atom in sorted(self.type_of(node.value)):
            if atom in ('?', 'X', 'N') or atom.startswith('OI:'):
                continue
            if atom.startswith('T:') and TYPES.get(atom[2:], {}).get('$item_store'):
                continue
            self.report('item-store', 'Item stores are allowed on lists, dicts and the other containers of the '
                        'profile: build a container of your own', node)
            return
