"""What every concern uses: the findings, name shapes, call arguments and the attribute-name rule."""

import ast

from .tables import (
    BUILTIN_NAMES_OK_AS_ATTRIBUTES, DANGEROUS_ATTRIBUTES, DANGEROUS_ATTRIBUTE_PREFIXES, FORBIDDEN_BUILTINS,
    FORBIDDEN_MODULE_SET, IDENTIFIER, MODULE_REACHING_ATTRIBUTES, PUBLIC_UNDERSCORE_ATTRIBUTES,
    READABLE_DUNDER_ATTRIBUTES)


class Findings:
    def __init__(self):
        self.items = []

    def add(self, rule, message, node=None, line=1, column=0):
        if node is not None:
            line, column = getattr(node, 'lineno', line), getattr(node, 'col_offset', column)
        self.items.append((line, column, rule, message))

    def has(self, rule):
        return any(item[2] == rule for item in self.items)


def is_dunder(name):
    return len(name) >= 4 and name.startswith('__') and name.endswith('__')


def is_private(name):
    return len(name) > 1 and name.startswith('_') and not is_dunder(name)


def is_forbidden_module(dotted):
    """`os` forbids `os` and `os.path`, not `osmosis`."""
    if dotted in FORBIDDEN_MODULE_SET:
        return True
    if '.' not in dotted:
        return False
    parts = dotted.split('.')
    return any('.'.join(parts[:end]) in FORBIDDEN_MODULE_SET for end in range(1, len(parts)))


class DepthError(Exception):
    pass


ABSENT = object()
UNKNOWN = object()


def call_argument(call, position, keyword):
    for kw in call.keywords:
        if kw.arg is None:
            return UNKNOWN
        if kw.arg == keyword:
            return kw.value
    for index, argument in enumerate(call.args):
        if isinstance(argument, ast.Starred):
            return UNKNOWN
        if index == position:
            return argument
    return ABSENT


def parameter_default(function, index):
    """The default of a def's positional parameter `index`, or None when it has none."""
    positional = function.args.posonlyargs + function.args.args
    defaults = dict(zip(positional[len(positional) - len(function.args.defaults):], function.args.defaults))
    return defaults.get(positional[index])


def parameter_keyword(function, index, name):
    """The keyword a call may pass positional parameter `index` by: '' when it is positional-only."""
    return name if index >= len(function.args.posonlyargs) else ''


def is_str_constant(node, allowed=None):
    return (isinstance(node, ast.Constant) and isinstance(node.value, str)
            and (allowed is None or node.value in allowed))


def is_false(node):
    return isinstance(node, ast.Constant) and node.value in (False, None, 0)


def literal_names(node):
    """'a b', 'a,b', ['a', 'b'], [('a', int)], {'a': int}: names a library turns into attributes."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        names = node.value.replace(',', ' ').split()
    elif isinstance(node, (ast.List, ast.Tuple)):
        names = []
        for element in node.elts:
            if isinstance(element, (ast.Tuple, ast.List)) and element.elts:
                element = element.elts[0]
            if not (isinstance(element, ast.Constant) and isinstance(element.value, str)):
                return False
            names.append(element.value)
    elif isinstance(node, ast.Dict):
        names = []
        for key in node.keys:
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                return False
            names.append(key.value)
    else:
        return False
    return all(IDENTIFIER.match(n) and not n.startswith('_') for n in names)


def attribute_problem(attr):
    if is_dunder(attr):
        if attr in READABLE_DUNDER_ATTRIBUTES:
            return None
        return ('dunder-access', "Access to dunder name '%s' is not allowed" % attr)
    if is_private(attr) and attr not in PUBLIC_UNDERSCORE_ATTRIBUTES:
        return ('private-access', "Access to private attribute '%s' is not allowed" % attr)
    if attr in DANGEROUS_ATTRIBUTES or attr.startswith(DANGEROUS_ATTRIBUTE_PREFIXES) or \
            attr in MODULE_REACHING_ATTRIBUTES:
        return ('dangerous-attribute', "Use of dangerous attribute '%s'" % attr)
    if attr in FORBIDDEN_BUILTINS and attr not in BUILTIN_NAMES_OK_AS_ATTRIBUTES:
        return ('forbidden-name', "Use of forbidden name '%s'" % attr)
    return None


def all_args(args):
    return args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]


def assigned_names(statement):
    targets = []
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
        targets = [statement.target]
    names = []
    for target in targets:
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                names.append(node.id)
    return names
