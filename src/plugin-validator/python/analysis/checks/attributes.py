"""Attributes: no `_` or dunder attribute, the reserved names on every value, and each member
looked up in the table by the value's type (names safe on every type where the type is unknown)."""

import ast
import string

from ..common import is_dunder, is_private
from ..registry import checks
from ..types import member
from ..table import (
    DUNDER_METHODS, PLAIN_FIELD, PROPERTY_PARTS, RESERVED_ATTRIBUTES, RESERVED_PREFIXES, TEMPLATE_METHODS, UNTYPED)

OWN_STORE_ATOMS = ('OI:', 'OC:')


def reserved(attr):
    return attr in RESERVED_ATTRIBUTES or attr.startswith(RESERVED_PREFIXES)


def template_problem(template, depth=0):
    """Why a literal str.format template is outside the profile, or None: only plain fields
    (`{}`, `{0}`, `{name}`, with conversions and format specs), never `{0.attr}` or `{0[key]}`."""
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError as error:
        return 'the template does not parse (%s)' % error
    for _, field, spec, _ in parts:
        if field is None:
            continue
        if not PLAIN_FIELD.match(field):
            return "field '{%s}' reads an attribute or an item: pass the value itself ({0}, {name})" % field
        if spec and depth < 2:
            problem = template_problem(spec, depth + 1)
            if problem:
                return problem
    return None


class AttributesRules:
    @checks(ast.Attribute)
    def check_attribute(self, node, scope):
        attr = node.attr
        if attr[0] != '_':
            pass
        elif is_dunder(attr):
            if not (attr in DUNDER_METHODS and self.type_of(node.value) == {'S'}
                    and isinstance(self.parent(node), ast.Call) and self.parent(node).func is node):
                self.report('dunder-access', "Dunder attribute '%s' is outside the plugin profile: call the "
                            'operation instead (str(x), len(x), x == y, ...)' % attr, node)
            return
        elif is_private(attr):
            self.report('private-access', "Attribute '%s' starts with '_': the profile has no private attributes; "
                        'name it %s' % (attr, attr.lstrip('_') or 'without the underscore'), node)
            return
        if reserved(attr):
            if attr in TEMPLATE_METHODS:
                self.check_template(node)
            else:
                self.report('reserved-attribute', "Attribute '%s' is reserved on every value (it reaches the "
                            "interpreter's or the framework's internals): %s" % (attr, reserved_instead(attr)), node)
            return
        if not isinstance(node.ctx, ast.Load):
            if not all(atom.startswith(OWN_STORE_ATOMS) or atom == 'N' for atom in self.type_of(node.value)):
                self.report('attribute-store', "Setting '%s' on a value that is not proven the plugin's own object: "
                            'set attributes on self in a method, or on an object built with C(...) in the same '
                            'function' % attr, node)
            return
        if attr in PROPERTY_PARTS:
            parent = self.parent(node)
            if isinstance(parent, ast.FunctionDef) and id(node) in self.positions(parent.decorator_list):
                return  # `@title.setter`: judged with the method's decorators (classes.py)
        atoms = self.type_of(node.value)
        for atom in (atoms if len(atoms) == 1 else sorted(atoms)):
            if self.check_member(node, atom):
                return

    def check_member(self, node, atom):
        attr = node.attr
        if atom in ('?', 'X'):
            if attr not in UNTYPED and not (isinstance(node.value, ast.Name) and self.narrowed_to_own(node.value)):
                self.report('untyped-attribute', "'%s' is not safe on every type the checker cannot tell apart here: "
                            'give the value a known type (assign it from the call that makes it, or check it with '
                            'isinstance) or use a method the profile allows on untyped values' % attr, node)
                return True
            return False
        if atom.startswith(('OI:', 'OC:')) or atom in ('S', 'N', 'T:None'):
            return False  # the plugin's own objects; on None (or a name never bound) the read raises
        result, allowed = member(atom, attr)
        if result:
            return False
        what = describe(atom)
        rule = 'module-attribute' if atom.startswith('M:') else 'type-attribute'
        choices = ('; it allows %s' % ', '.join(allowed[:15]) + (', ...' if len(allowed) > 15 else '')
                   if allowed else '')
        self.report(rule, "'%s' is not in the plugin profile's table of %s%s" % (attr, what, choices), node)
        return True

    def check_template(self, node):
        value = node.value
        if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
            self.report('format-string', ".%s() is allowed only on a literal template: write the string at the "
                        "call (\"{} of {}\".format(a, b)) or use an f-string" % node.attr, node)
            return
        problem = template_problem(value.value)
        if problem:
            self.report('format-string', 'Template of .%s(): %s' % (node.attr, problem), node)


def reserved_instead(attr):
    if attr in ('manager', 'handlers', 'parent', 'root', 'stream'):
        return 'log with logger.info("...", value)'
    if attr == 'mro':
        return 'use isinstance(value, C)'
    return 'use the values themselves'


def describe(atom):
    if atom.startswith('M:'):
        return 'module %s' % atom[2:]
    if atom.startswith('T:'):
        return "type %s" % atom[2:]
    if atom.startswith('F:'):
        return '%s' % atom[2:].replace(':static', '')
    if atom.startswith('B:'):
        return 'method %s' % atom[2:].replace('|', '.')
    if atom == 'OF':
        return "the plugin's functions (they have no attributes in the profile)"
    return atom

