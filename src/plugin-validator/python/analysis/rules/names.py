"""Name rules: forbidden builtins, dunder names, names bound nowhere, and what a binding may rebind."""

import ast

from ..common import all_args, is_dunder, is_forbidden_module, is_private
from ..registry import checks
from ..tables import (
    ALLOWED_DUNDER_METHODS, ALLOWED_PLAIN_DUNDERS, BUILTIN_NAMES_OK_AS_ATTRIBUTES, CLASS_MACHINERY_DUNDERS,
    FORBIDDEN_BUILTINS, MODULES_VALUE_RULE, MODULE_REACHING_ATTRIBUTES, MODULE_TABLES, R, READ_ONLY_PLAIN_DUNDERS)


class NamesRules:
    # --- names

    @checks(ast.Name)
    def check_Name(self, node, scope):
        name = node.id
        parent = self.parent(node)
        if not isinstance(node.ctx, ast.Load):
            self.check_name_binding(node, scope)
            return
        if name in FORBIDDEN_BUILTINS and name not in BUILTIN_NAMES_OK_AS_ATTRIBUTES:
            if not (isinstance(parent, ast.Call) and parent.func is node and self.literal_attribute_call(parent)):
                self.report('forbidden-name', "Use of forbidden name '%s'" % name, node)
            return
        if is_dunder(name):
            if name not in ALLOWED_PLAIN_DUNDERS:
                self.report('dunder-access', "Access to dunder name '%s' is not allowed" % name, node)
            return
        meanings, builtin, undefined, imports, module_values = self.name_facts(name, scope)
        if scope.kind == 'class':
            self.check_method_in_class_body(node, scope)
        if undefined and is_forbidden_module(name):
            self.report('forbidden-import', "Use of forbidden module '%s', which the plugin does not import" % name,
                        node)
        elif undefined and (is_private(name) or name in MODULE_REACHING_ATTRIBUTES):
            # Door 3: a library module's private name or module, supplied only by globals copied in
            # at run time (owtf's own plugins read public names they never bind: those stay).
            self.report('forbidden-name', "Name '%s' is bound nowhere in the plugin and is not a builtin: its value "
                        'would come from outside the plugin' % name, node)
        is_callee = isinstance(parent, ast.Call) and parent.func is node
        if builtin and name in FORBIDDEN_BUILTINS:
            self.report('forbidden-name', "Use of forbidden name '%s'" % name, node)
            return
        if builtin and name == 'open' and not is_callee:
            self.report('open-write', 'open may only be called directly, with a literal read mode', node)
        for qualname in imports:
            self.check_callable_used_directly(qualname, node, is_callee)
        self.check_resolved_name(node, scope, parent, is_callee, builtin)
        if not is_callee and any(m.kind == 'class' and self.derives_from_formatter(m.binding.node)
                                 for m in meanings) and not self.names_a_type(node):
            self.report('dynamic-name', '%s, a logging.Formatter, may only be called directly (its style '
                        'decides how fields are read)' % name, node)
        if builtin and name == 'super' and not is_callee:
            self.report('private-access', 'super may only be called, as super() in a method', node)
        if module_values and not (isinstance(parent, ast.Attribute) and parent.value is node):
            for qual in module_values:
                rule = MODULES_VALUE_RULE.get(qual, 'module-attribute')
                self.report(rule, "Module '%s' may only be used as %s.<name>" % (qual, qual), node)
        # A call of a name bound nowhere: something outside the plugin would have to supply it.
        if is_callee and undefined:
            for argument in list(parent.args) + [k.value for k in parent.keywords]:
                value = argument.value if isinstance(argument, ast.Starred) else argument
                if self.is_decoder_call(value, scope):
                    self.report('decoded-call', "A decoded value is passed to '%s', which the plugin "
                                "does not define" % name, value)

    def check_resolved_name(self, node, scope, parent, is_callee, builtin):
        """Door 2: rules on what a name means, however it is spelled (`from operator import
        attrgetter`, `kind = type`)."""
        quals = self.qualnames(node, scope)
        if 'operator.attrgetter' in quals and not self.is_key_attrgetter(node, parent):
            self.report('dangerous-attribute', 'attrgetter only as key=attrgetter("name", ...) with literal names '
                        'that pass the attribute rules', node)
        if (builtin and node.id == 'type' or 'builtins.type' in quals) and not is_callee and not (
                isinstance(parent, ast.Compare) or self.names_a_type(node)):
            # Called elsewhere (an alias, map, a list), type(x) hands out the class of x unchecked.
            self.report('class-machinery', 'type may only be called directly (type(x) compared or named) or '
                        'named as a type', node)

    def name_facts(self, name, scope):
        """What check_Name needs of a name read in a scope, once per name and scope: its meanings;
        whether one is the builtin; whether all are undefined; the imports among them; and the
        allowed modules it may stand for."""
        key = (name, id(scope))
        facts = self.name_facts_cache.get(key)
        if facts is None:
            meanings = self.meanings(name, scope)
            imports = [m.qualname for m in meanings if m.kind == 'import']
            module_values = []
            for meaning in meanings:
                quals = [meaning.qualname] if meaning.kind == 'import' else (
                    meaning.qualname if meaning.kind == 'alias' else [])
                module_values += [qual for qual in quals if qual in MODULE_TABLES]
            facts = self.name_facts_cache[key] = (
                meanings, any(m.kind == 'builtin' for m in meanings),
                bool(meanings) and all(m.kind == 'undefined' for m in meanings), imports, module_values)
        return facts

    def check_name_binding(self, node, scope):
        name = node.id
        self.check_bound_name(name, node)
        if is_dunder(name):
            in_class = isinstance(scope.node, ast.ClassDef) and self.parent(self.parent(node)) is scope.node
            if name in CLASS_MACHINERY_DUNDERS and in_class:
                self.report('class-machinery', "Defining '%s' is not allowed" % name, node)
            elif name in READ_ONLY_PLAIN_DUNDERS or not (
                    name in ALLOWED_PLAIN_DUNDERS or (in_class and name in ALLOWED_DUNDER_METHODS)):
                self.report('dunder-access', "Assigning to dunder name '%s' is not allowed" % name, node)
            return
        self.check_not_rebinding_import(name, scope, node)

    def check_bound_name(self, name, node):
        """A forbidden builtin's name is never rebound (`del exec`, `except E as eval`, `global eval`)."""
        if name in FORBIDDEN_BUILTINS and name not in BUILTIN_NAMES_OK_AS_ATTRIBUTES:
            self.report('forbidden-name', "Binding the forbidden name '%s' is not allowed" % name, node)

    @checks(ast.Global, ast.Nonlocal)
    def check_Global(self, node, scope):
        for name in node.names:
            self.check_bound_name(name, node)
            if is_dunder(name):
                self.report('dunder-access', "Access to dunder name '%s' is not allowed" % name, node)

    @checks(ast.FunctionDef, ast.AsyncFunctionDef)
    def check_FunctionDef(self, node, scope):
        name = node.name
        if is_dunder(name):
            in_class = isinstance(scope.node, ast.ClassDef) and node in scope.node.body
            if name in CLASS_MACHINERY_DUNDERS and in_class:
                self.report('class-machinery', "Defining '%s' is not allowed" % name, node)
            elif not (in_class and name in ALLOWED_DUNDER_METHODS):
                self.report('dunder-access', "Defining '%s' is not allowed" % name, node)
        else:
            self.check_not_rebinding_import(name, scope, node)
        for arg in all_args(node.args):
            if is_dunder(arg.arg):
                self.report('dunder-access', "Parameter name '%s' is not allowed" % arg.arg, arg)
            if arg.arg in FORBIDDEN_BUILTINS and arg.arg not in BUILTIN_NAMES_OK_AS_ATTRIBUTES:
                self.report('forbidden-name', "Parameter name '%s' is not allowed" % arg.arg, arg)
            if arg.annotation is not None:
                self.check_annotation(arg.annotation)
        if node.returns is not None:
            self.check_annotation(node.returns)

    @checks(ast.Lambda)
    def check_Lambda(self, node, scope):
        for arg in all_args(node.args):
            if is_dunder(arg.arg):
                self.report('dunder-access', "Parameter name '%s' is not allowed" % arg.arg, arg)

    @checks(ast.AnnAssign)
    def check_AnnAssign(self, node, scope):
        self.check_annotation(node.annotation)

    @checks(ast.keyword)
    def check_keyword(self, node, scope):
        if node.arg is not None and is_dunder(node.arg):
            self.report('dunder-access', "Keyword name '%s' is not allowed" % node.arg, node.value)

    @checks(ast.MatchAs, ast.MatchStar)
    def check_MatchAs(self, node, scope):
        if node.name:
            self.check_bound_name(node.name, node)
            self.check_not_rebinding_import(node.name, scope, node)

    @checks(ast.ExceptHandler)
    def check_ExceptHandler(self, node, scope):
        if node.name:
            self.check_bound_name(node.name, node)
            if is_dunder(node.name):
                self.report('dunder-access', "Assigning to dunder name '%s' is not allowed" % node.name, node)
            else:
                self.check_not_rebinding_import(node.name, scope, node)

    @checks(ast.ClassDef)
    def check_ClassDef(self, node, scope):
        if is_dunder(node.name):
            self.report('dunder-access', "Class name '%s' is not allowed" % node.name, node)
        else:
            self.check_not_rebinding_import(node.name, scope, node)
        for keyword in node.keywords:
            what = 'metaclass=' if keyword.arg == 'metaclass' else 'class keyword %s=' % keyword.arg
            self.report('class-machinery', '%s is not allowed: it changes how the class is built' % what, keyword)
        for base in node.bases:
            quals = self.qualnames(base, scope)
            if 'builtins.type' in quals or any(q in R['metaclasses'] for q in quals):
                self.report('class-machinery', 'A metaclass (a subclass of type) is not allowed', base)
            if isinstance(base, ast.Starred):
                self.report('class-machinery', 'Bases must be listed, not unpacked', base)
