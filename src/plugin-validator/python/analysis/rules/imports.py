"""Import rules: forbidden modules, the tables' members, and one meaning per imported name."""

import ast

from ..common import is_dunder, is_forbidden_module, is_private
from ..registry import checks
from ..tables import (
    BUILTIN_NAMES_OK_AS_ATTRIBUTES, FORBIDDEN_BUILTINS, FORBIDDEN_MODULES, FUTURE_FEATURES, MODULE_TABLES,
    OBJECT_TABLES)


class ImportsRules:
    # --- imports

    @checks(ast.Import)
    def check_Import(self, node, scope):
        for alias in node.names:
            self.check_module(alias.name, alias)

    @checks(ast.ImportFrom)
    def check_ImportFrom(self, node, scope):
        if node.level:
            self.report('relative-import', 'Relative imports are not allowed', node)
            return
        module = node.module or ''
        if module == '__future__':
            for alias in node.names:
                if alias.name not in FUTURE_FEATURES:
                    self.report('forbidden-import', "Unknown __future__ feature '%s'" % alias.name, node)
            return
        if not self.check_module(module, node):
            return
        for alias in node.names:
            if alias.name == '*':
                self.report('star-import', 'Star imports are not allowed', node)
                continue
            self.check_member(module, alias.name, node, imported=True)

    def check_module(self, dotted, node):
        if is_forbidden_module(dotted):
            self.report('forbidden-import', "Import of forbidden module '%s'" % dotted, node)
            return False
        if any(part.startswith('_') for part in dotted.split('.')):
            self.report('forbidden-import', "Import of private module '%s' is not allowed" % dotted, node)
            return False
        if dotted not in MODULE_TABLES:
            self.report('forbidden-import', "Import of module '%s' is not allowed" % dotted, node)
            return False
        return True

    def table(self, qualname):
        return MODULE_TABLES.get(qualname) or OBJECT_TABLES.get(qualname)

    def check_member(self, qualname, name, node, imported=False):
        """`qualname.name` where qualname has a table: listed, or refused."""
        table = self.table(qualname)
        if table is None:
            return
        full = '%s.%s' % (qualname, name)
        if imported and is_private(name):
            self.report('private-access', "Import of private name '%s' is not allowed" % full, node)
            return
        if imported and name in FORBIDDEN_MODULES and name not in table.get('members', ()):
            self.report('forbidden-import', "Use of forbidden module '%s' through '%s'" % (name, qualname), node)
            return
        refused = table.get('refused', {})
        if name in refused:
            rule, why = refused[name].split(': ', 1)
            self.report(rule, "'%s' is not allowed: %s" % (full, why), node)
        elif name in table.get('members', ()):
            return
        elif is_forbidden_module(full):
            self.report('forbidden-import', "%s forbidden module '%s'" % ('Import of' if imported else 'Use of', full),
                        node)
        elif full in MODULE_TABLES:
            return
        elif not (is_dunder(name) or is_private(name)) or imported:
            # (Private and dunder names have their own rules; an import of one is refused here.)
            self.report('module-attribute', "'%s' is not part of the allowed API of '%s'" % (name, qualname), node)

    def check_not_rebinding_import(self, name, scope, node, qualname=None):
        """One name, one meaning: what an import binds is not rebound (nor shadowed in an inner
        scope) except by an import of the same thing."""
        key = (name, id(scope))
        imports = self.import_cache.get(key)
        if imports is None:
            bindings = [b for _, b in self.global_bindings(name)] + scope.bindings.get(name, [])
            imports = self.import_cache[key] = {b.qualname for b in bindings if b.kind == 'import'}
        if imports and not (qualname is not None and imports == {qualname}):
            self.report('module-tampering', "Rebinding '%s', a name bound by an import, is not allowed" % name, node)

    @checks(ast.alias)
    def check_alias(self, node, scope):
        parent = self.parent(node)
        if isinstance(parent, ast.ImportFrom):
            if node.name in FORBIDDEN_BUILTINS and node.name not in BUILTIN_NAMES_OK_AS_ATTRIBUTES:
                self.report('forbidden-name', "Import of the forbidden name '%s'" % node.name, parent)
            bound, qualname = node.asname or node.name, '%s.%s' % (parent.module or '', node.name)
        else:
            bound = node.asname or node.name.split('.')[0]
            qualname = node.name if node.asname else bound
        if is_dunder(bound):
            self.report('dunder-access', "Importing as '%s' is not allowed" % bound, parent)
        self.check_bound_name(bound, parent)
        self.check_not_rebinding_import(bound, scope, parent, qualname)
