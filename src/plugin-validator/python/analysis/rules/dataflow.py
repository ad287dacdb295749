"""Door 3: attribute stores, traced through every binding form to an object of the plugin's own."""

import ast

from ..common import ABSENT, UNKNOWN, call_argument, is_str_constant, parameter_default, parameter_keyword
from ..tables import ITERATING_BUILTINS


class DataflowRules:
    def plugin_object(self, value, scope, depth):
        """Door 3: `value` is an object of the plugin's own for certain, whatever binds its name: self
        or cls in a method, a plugin class or def, or a local bound only to `C(...)` of a plugin class
        with plugin bases and no `__new__`, or to `types.SimpleNamespace(...)`, or a parameter of a
        helper every call of which passes one. A for or with target, another parameter, a match capture, an except name, a comprehension's value, a name also bound by
        unpacking or `+=`, or any attribute or item of an object may hold a library object."""
        if not isinstance(value, ast.Name) or depth > 4:
            return False
        if self.own_class(value, scope) is not None:
            return True
        meanings = self.meanings_when_bound(value.id, scope)
        if not meanings:
            return False
        for meaning in meanings:
            if meaning.kind in ('class', 'def'):
                continue
            if meaning.kind == 'param' and self.param_plugin_object(meaning.binding, value.id, depth):
                continue  # `def fill(report): report.title = ...`, every call passing a plugin object
            made = meaning.binding.value if meaning.kind == 'value' and meaning.binding is not None else None
            if isinstance(made, ast.Name) and self.plugin_object(made, self.node_scope[id(made)], depth + 1):
                continue
            loop = self.parent(meaning.binding.node) if meaning.kind == 'value' and meaning.binding else None
            if (isinstance(loop, (ast.For, ast.AsyncFor, ast.comprehension)) and loop.target is meaning.binding.node
                    and self.plugin_objects(loop.iter, self.node_scope[id(loop.iter)], depth + 1)):
                continue  # `for finding in findings`, each element a plugin object
            if not (isinstance(made, ast.Call) and self.makes_plugin_object(made, self.node_scope[id(made)])):
                return False
        return True

    def param_plugin_object(self, binding, name, depth):
        """A parameter of a plain function (not a method, not decorated, not run(), only ever
        called directly, never with *args or **kwargs) that every call passes a plugin object, or
        leaves at a default of None. Kept per parameter: stores in a helper called from many
        places would otherwise scan every call again."""
        function = binding.node
        if (not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or binding.index is None
                or binding.index < 0 or function.decorator_list or function is self.run_function()):
            return False
        outer = self.node_scope.get(id(function))
        if outer is None or outer.kind == 'class':
            return False
        cache = self.__dict__.setdefault('param_plugin_object_cache', {})
        key = (id(function), binding.index)
        if key not in cache:
            cache[key] = False  # a helper passing its parameter on to itself proves nothing
            cache[key] = self.find_param_plugin_object(function, binding.index, name, depth)
        return cache[key]

    def find_param_plugin_object(self, function, index, name, depth):
        default = parameter_default(function, index)
        if default is not None and not (isinstance(default, ast.Constant) and default.value is None):
            return False
        keyword = parameter_keyword(function, index, name)
        for call, read_scope in self.uses_of(function):
            if call is None:
                return False
            argument = call_argument(call, index, keyword)
            if argument is UNKNOWN:
                return False
            if argument is not ABSENT and not self.plugin_element(argument, read_scope, depth + 1):
                return False
        return True

    def plugin_objects(self, sequence, scope, depth):
        """Every element of `sequence` is a plugin object: a literal list or tuple of them, a
        comprehension that makes them, or a name bound only to such, that is only iterated,
        sorted or counted (no append() or store can have added a library object)."""
        if depth > 4:
            return False
        if isinstance(sequence, (ast.List, ast.Tuple, ast.Set)):
            return all(self.plugin_element(e, scope, depth) for e in sequence.elts)
        if isinstance(sequence, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            inner = self.scope_of[id(sequence)]
            return self.plugin_element(sequence.elt, inner, depth)
        if not isinstance(sequence, ast.Name):
            return False
        # Once per name and scope: each store in a loop over it would scan its every read again.
        cache = self.__dict__.setdefault('plugin_objects_cache', {})
        key = (sequence.id, id(scope))
        if key not in cache:
            cache[key] = False  # a name bound to itself, through a cycle, proves nothing
            cache[key] = self.find_plugin_objects(sequence, scope, depth)
        return cache[key]

    def find_plugin_objects(self, sequence, scope, depth):
        meanings = self.meanings_when_bound(sequence.id, scope)
        bindings = set()
        for meaning in meanings:
            made = meaning.binding.value if meaning.kind == 'value' and meaning.binding is not None else None
            if made is None or not self.plugin_objects(made, self.node_scope[id(made)], depth + 1):
                return False
            bindings.add(id(meaning.binding))
        if not meanings:
            return False
        for read in self.name_reads().get(sequence.id, ()):
            read_scope = self.node_scope[id(read)]
            if not any(id(m.binding) in bindings for m in self.meanings(read.id, read_scope)):
                continue
            parent = self.parent(read)
            if isinstance(parent, (ast.For, ast.AsyncFor, ast.comprehension)) and parent.iter is read:
                continue
            if isinstance(parent, ast.Call) and read in parent.args and all(
                    q in ITERATING_BUILTINS for q in self.resolved_qualnames(parent.func, read_scope) or ['?']):
                continue
            return False
        return True

    def plugin_element(self, element, scope, depth):
        if isinstance(element, ast.Call):
            return self.makes_plugin_object(element, scope)
        return self.plugin_object(element, scope, depth + 1)

    def makes_plugin_object(self, call, scope):
        quals = self.resolved_qualnames(call.func, scope)
        if quals == ['types.SimpleNamespace']:
            return True
        if quals in (['copy.copy'], ['copy.deepcopy']) and len(call.args) == 1 and not call.keywords:
            # A copy of a plugin object is one, its class rebuilt by copy's reconstruction (a plugin
            # defines no __reduce_ex__, __getstate__ or __setstate__: dunder-access), unless some
            # plugin class has a __copy__ or __deepcopy__, which may return anything.
            return not any({'__copy__', '__deepcopy__'} & self.class_names[id(c)]
                           for c in self.plugin_classes.values()) and self.plugin_element(call.args[0], scope, 0)
        if not isinstance(call.func, ast.Name):
            return False
        meanings = self.meanings_when_bound(call.func.id, scope)
        return bool(meanings) and all(
            m.kind == 'class' and self.is_closed_class(m.binding.node, 0)
            and not any('__new__' in self.class_names[id(c)] for c in self.plugin_ancestry(m.binding.node))
            for m in meanings)

    def attributes_set_anywhere(self):
        """Attribute names stored or deleted anywhere, or named by setattr/delattr with a literal."""
        if self.stored_attributes is None:
            stored = set()
            for other in self.order:
                if type(other) is ast.Attribute and type(other.ctx) is not ast.Load:
                    stored.add(other.attr)
                elif (type(other) is ast.Call and isinstance(other.func, ast.Name)
                      and other.func.id in ('setattr', 'delattr') and len(other.args) >= 2
                      and is_str_constant(other.args[1])):
                    stored.add(other.args[1].value)
            self.stored_attributes = stored
        return self.stored_attributes
