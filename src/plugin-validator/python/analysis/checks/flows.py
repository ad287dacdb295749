"""Values whose use the profile restricts, wherever they appear: modules (only `module.member`),
library callables with restricted arguments (only called), a Logger (only `name.method(...)`),
a dataclass field (only in a dataclass body); and every read of a resource list, which
CommandDump must not be handed once read (calls.py)."""

import ast

from ..registry import checks
from ..types import library_entry
from .calls import callee_name

RESTRICTED_ATOMS = frozenset(['T:logging.Logger', 'T:owtf.Resources', 'T:dataclasses.Field', 'X'])
LOAD = ast.Load()
EXPRESSIONS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.IfExp, ast.BoolOp, ast.NamedExpr)


class FlowsRules:
    @checks(*EXPRESSIONS)
    def check_flow(self, node, scope):
        atoms = self.types_cache.get(id(node)) or self.type_of(node)
        restricted = self.restricted_types.get(atoms)
        if restricted is None:
            restricted = self.restricted_types[atoms] = any(
                atom.startswith(('M:', 'F:', 'B:')) or atom in RESTRICTED_ATOMS for atom in atoms)
        if not restricted or not isinstance(getattr(node, 'ctx', LOAD), ast.Load):
            return
        for atom in (atoms if len(atoms) == 1 else sorted(atoms)):
            if atom.startswith('M:'):
                if not self.is_object_of_attribute(node):
                    self.report('module-attribute', "Module %s used as a value: use its members (%s.name)"
                                % (atom[2:], atom[2:]), node)
                    return
            elif atom.startswith(('F:', 'B:')):
                if not self.library_value_allowed(node, atom):
                    self.report('library-value', '%s has restricted arguments and may only be called directly: '
                                'call it here, or wrap the call in a function of your own' % callee_name(atom), node)
                    return
            elif atom == 'T:logging.Logger':
                if not (self.is_bound_to_name(node) or self.is_method_call_object(node)):
                    self.report('restricted-value', 'A Logger is used only as logger.info("...", value) (a name bound '
                                'to logging.getLogger(...)): never stored, passed, returned or compared', node)
                    return
            elif atom == 'T:owtf.Resources':
                self.note_resources_read(node)
            elif atom == 'T:dataclasses.Field':
                if not self.is_class_field(node):
                    self.report('restricted-value', 'dataclasses.field(...) is used only as the value of an annotated '
                                'name in a @dataclass body (x: int = field(default=0))', node)
                    return
            elif atom == 'X':
                if not self.is_bound_to_name(node):
                    self.report('restricted-value', 'The checker cannot follow this value (its name is bound from '
                                'itself): bind it once from the call that makes it', node)
                    return

    def is_object_of_attribute(self, node):
        parent = self.parent(node)
        return isinstance(parent, ast.Attribute) and parent.value is node

    def is_bound_to_name(self, node):
        parent = self.parent(node)
        return isinstance(node, ast.Call) and (
            isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)
            or isinstance(parent, ast.AnnAssign) and isinstance(parent.target, ast.Name))

    def is_method_call_object(self, node):
        parent = self.parent(node)
        return (isinstance(node, ast.Name) and isinstance(parent, ast.Attribute) and parent.value is node
                and isinstance(self.parent(parent), ast.Call) and self.parent(parent).func is parent)

    def library_value_allowed(self, node, atom):
        entry = library_entry(atom)
        if entry is None:
            return True
        if entry.get('annotation'):
            return self.in_annotation(node)
        parent = self.parent(node)
        if isinstance(parent, ast.Call) and parent.func is node:
            return True
        if (entry.get('decorator') and isinstance(parent, (ast.FunctionDef, ast.ClassDef))
                and id(node) in self.positions(parent.decorator_list)):
            return True
        if isinstance(parent, ast.Attribute) and parent.value is node:
            return True  # `datetime.datetime.now`, `str.lower`: the member is judged on its own
        if entry.get('exception'):
            return True
        return entry.get('value', atom.startswith('B:'))

    def in_annotation(self, node):
        """Part of a parameter's, a return's or an annotated name's annotation."""
        child, parent = node, self.parent(node)
        while isinstance(parent, ast.expr):
            child, parent = parent, self.parent(parent)
        return (isinstance(parent, ast.arg) and parent.annotation is child
                or isinstance(parent, ast.FunctionDef) and parent.returns is child
                or isinstance(parent, ast.AnnAssign) and parent.annotation is child)

    def note_resources_read(self, node):
        """A resource list read other than by a helper that takes one may be changed: CommandDump
        refuses a name read that way (calls.py, check_resources_unchanged)."""
        parent = self.parent(node)
        if isinstance(parent, ast.Call) and parent.func is not node:
            index = self.positions(parent.args).get(id(node))
            if index is not None and any(str(index) in (library_entry(atom) or {}).get('resources', {})
                                         for atom in self.type_of(parent.func)):
                return
        if isinstance(node, ast.Name):
            for meaning in self.meanings(node.id, self.node_scope[id(node)]):
                self.resources_read.add((node.id, id(meaning.scope)))

    def is_class_field(self, node):
        parent = self.parent(node)
        return (isinstance(node, ast.Call) and isinstance(parent, ast.AnnAssign) and parent.value is node
                and isinstance(self.parent(parent), ast.ClassDef))
