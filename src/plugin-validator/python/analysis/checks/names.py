"""Names: the vetted builtins, no dunder name but `__name__`/`__doc__`, no dunder string, no
rebinding of an imported name; a name the plugin never binds is a warning (decisions/unbound-names.md)."""

import ast
import sys

from ..common import is_dunder, is_private
from ..registry import checks
from ..table import DUNDER_NAMES, DUNDER_STRINGS, FORBIDDEN_BUILTINS, MODULE_METADATA, UNBINDABLE_BUILTINS

FORBIDDEN_INSTEAD = {
    'open': "read files through the framework's helpers; a plugin does not open files",
    'getattr': 'write the attribute name: obj.name', 'setattr': 'assign the attribute: obj.name = value',
    'hasattr': "write the attribute name, or keep the values in a dict and test `key in d`",
    'delattr': 'delete the attribute by name: del obj.name', 'vars': 'keep the values in a dict',
    'type': 'use isinstance(value, C)', 'id': 'compare with `is`', 'dir': 'list the names you need',
    'eval': 'parse the data (json.loads, int(), ...)', 'exec': 'write the code in the plugin',
    'compile': 'write the code in the plugin (re.compile for patterns)',
}


class NamesRules:
    @checks(ast.Name)
    def check_name(self, node, scope):
        name = node.id
        if name[0] == '_' and is_dunder(name):
            if name in MODULE_METADATA and (isinstance(node.ctx, ast.Load) or scope is self.module_scope):
                return  # `__version__ = "1.0"`: a plain module variable
            if name not in DUNDER_NAMES or not isinstance(node.ctx, ast.Load):
                self.report('dunder-access', "Dunder name '%s' is outside the plugin profile (only %s may be read): "
                            'use a name of your own' % (name, ' and '.join(sorted(DUNDER_NAMES))), node)
            return
        if not isinstance(node.ctx, ast.Load):
            self.check_binding(name, node, scope)
            return
        meanings = self.meanings(name, scope)
        if name in FORBIDDEN_BUILTINS and any(m.kind == 'builtin' for m in meanings):
            self.report('forbidden-name', "Builtin '%s' is outside the plugin profile: %s"
                        % (name, FORBIDDEN_INSTEAD.get(name, 'use the builtins the profile lists')), node)
        elif (not meanings or meanings[0].kind == 'undefined') and all(m.kind == 'undefined' for m in meanings):
            if name in sys.stdlib_module_names or is_private(name):
                self.report('forbidden-import', "'%s' is never bound in the plugin and names a module or a private "
                            'global: only globals injected at run time could supply it; import what the profile '
                            'allows' % name, node)
                return
            self.findings.warn('unbound-name', "'%s' is never bound in the plugin: CPython raises NameError here "
                               '(import it or assign it first)' % name, node)

    def check_binding(self, name, node, scope):
        if name in UNBINDABLE_BUILTINS:
            self.check_unbindable(name, node)
        self.check_rebinds_import(name, node, scope)

    def check_unbindable(self, name, node):
        # A name such as `id` may be the plugin's own; `eval`, `exec` and the like read as the builtin.
        if name in UNBINDABLE_BUILTINS:
            self.report('forbidden-name', "Binding the builtin name '%s' is not allowed: a reader takes it for the "
                        'builtin; choose another name' % name, node)

    @checks(ast.FunctionDef, ast.ClassDef)
    def check_definition_name(self, node, scope):
        if is_dunder(node.name):
            if not (isinstance(node, ast.FunctionDef) and scope.kind == 'class'):
                self.report('dunder-access', "Dunder name '%s' is outside the plugin profile: use a name of your "
                            'own' % node.name, node)
            return
        self.check_unbindable(node.name, node)
        self.check_rebinds_import(node.name, node, scope)

    @checks(ast.arg)
    def check_parameter_name(self, node, scope):
        if is_dunder(node.arg):
            self.report('dunder-access', "Parameter name '%s' is a dunder name: choose another name" % node.arg, node)
        self.check_unbindable(node.arg, node)

    def check_rebinds_import(self, name, node, scope):
        """Binding a name the module imports, in any scope, hides the module there (`json = data`)."""
        if name in self.imported_names(self.module_scope) or scope is not self.module_scope and name in (
                self.imported_names(scope)):
            self.report('module-tampering', "'%s' names an import: binding it again hides the module; choose "
                        'another name' % name, node)

    def imported_names(self, scope):
        return scope.imported

    @checks(ast.Global, ast.Nonlocal)
    def check_declaration(self, node, scope):
        for name in node.names:
            self.check_unbindable(name, node)

    @checks(ast.MatchAs, ast.MatchStar)
    def check_capture(self, node, scope):
        if node.name:
            self.check_unbindable(node.name, node)

    @checks(ast.ExceptHandler)
    def check_except_name(self, node, scope):
        if node.name:
            self.check_unbindable(node.name, node)
            self.check_rebinds_import(node.name, node, scope)

    @checks(ast.Constant)
    def check_dunder_string(self, node, scope):
        value = node.value
        if isinstance(value, str) and value[:2] == '__' and is_dunder(value) and value not in DUNDER_STRINGS:
            self.report('dunder-access', "The string %r is a dunder name: libraries turn such keys into attributes; "
                        'use a key of your own' % node.value, node)

    @checks(ast.keyword)
    def check_keyword_name(self, node, scope):
        if node.arg is not None and is_dunder(node.arg):
            self.report('dunder-access', "Keyword '%s' is a dunder name: use a name of your own" % node.arg,
                        node.value)
