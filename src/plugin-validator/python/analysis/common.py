"""What every concern uses: the findings and the shapes of names."""

import ast


class Findings:
    """Refusals (`items`) and warnings (accepted, but worth the author's attention)."""

    def __init__(self):
        self.items = []
        self.warnings = []

    def add(self, rule, message, node=None, line=1, column=0):
        if node is not None:
            line, column = getattr(node, 'lineno', line), getattr(node, 'col_offset', column)
        self.items.append((line, column, rule, message))

    def warn(self, rule, message, node):
        self.warnings.append((node.lineno, node.col_offset, rule, message))

    def has(self, rule):
        return any(item[2] == rule for item in self.items)


def is_dunder(name):
    return len(name) >= 4 and name.startswith('__') and name.endswith('__')


def is_private(name):
    return name.startswith('_') and not is_dunder(name)


class DepthError(Exception):
    pass


def is_str_constant(node, allowed=None):
    return (isinstance(node, ast.Constant) and isinstance(node.value, str)
            and (allowed is None or node.value in allowed))
