"""Meaning resolution: what a name read in a scope may stand for (Python's rules; symtable decides
the scope), the qualified names of an expression, and the decorators and super() the rules trust.
Each answer is cached per name and scope, so resolution stays linear in the file."""

import ast

from .scopes import DEF_GLOBAL, FREE, GLOBAL_EXPLICIT, LOCAL, Meaning
from .tables import BUILTIN_NAMES, DECODERS, R


def unique_meanings(meanings):
    """Several plain values bound in one scope mean the same to the rules: one meaning (with no
    single binding) stands for all, so a name assigned 10,000 times does not cost 10,000 per read."""
    result = []
    value_at = {}
    for meaning in meanings:
        if meaning.kind == 'value':
            index = value_at.get(id(meaning.scope))
            if index is not None:
                result[index] = Meaning('value', None, None, meaning.scope)
                continue
            value_at[id(meaning.scope)] = len(result)
        result.append(meaning)
    return result


class Resolution:
    # Resolution of a name read in a scope, by Python's rules (symtable decides the scope).
    def meanings(self, name, scope, depth=0):
        key = (name, id(scope))
        cached = self.meanings_cache.get(key)
        if cached is None:
            cached = self.meanings_cache[key] = self.resolve(name, scope, depth)
        return cached

    def resolve(self, name, scope, depth):
        if scope.kind == 'function':
            where = scope.scope_of_name(name)
            if where is LOCAL:
                return self.bound_meanings(name, scope, depth)
            if where is FREE:
                return self.enclosing_meanings(name, scope, depth)
            return self.global_meanings(name, depth)
        if scope.kind == 'class':
            # A class body reads its own binding if made yet, else (LOAD_NAME) the module's, or
            # (LOAD_CLASSDEREF) an enclosing function's.
            where = scope.scope_of_name(name)
            if where is GLOBAL_EXPLICIT:
                return self.global_meanings(name, depth)
            result = []
            if where is LOCAL and name in scope.bindings:
                result += self.bound_meanings(name, scope, depth)
            if where is FREE:
                return result + self.enclosing_meanings(name, scope, depth)
            return result + self.global_meanings(name, depth)
        return self.global_meanings(name, depth)

    def meanings_when_bound(self, name, scope):
        """The meanings a name has when its read succeeds: unbound, it raises NameError instead."""
        return [m for m in self.meanings(name, scope) if m.kind != 'undefined']

    def enclosing_meanings(self, name, scope, depth):
        outer = scope.parent
        while outer is not None:
            if outer.kind == 'function' and outer.scope_of_name(name) is LOCAL:
                    return self.bound_meanings(name, outer, depth)
            outer = outer.parent
        return self.global_meanings(name, depth)

    def global_meanings(self, name, depth):
        cached = self.global_cache.get(name)
        if cached is None:
            cached = self.global_cache[name] = self.resolve_global(name, depth)
        return cached

    def resolve_global(self, name, depth):
        bindings = self.global_bindings(name)
        result = unique_meanings(self.meaning_of(b, s, depth) for s, b in bindings if b.kind != 'del')
        only_leading_import = (len(bindings) == 1 and bindings[0][1].kind == 'import'
                               and bindings[0][1].leading)
        if not only_leading_import:
            # A module-level name may be unbound (not yet, deleted, conditional): builtins answer then.
            result.append(Meaning('builtin', name) if name in BUILTIN_NAMES else Meaning('undefined', name))
        return result

    def global_bindings(self, name):
        """Module-level bindings, and those made through `global name` in any function or class."""
        if self.globals_index is None:
            index = {}
            for scope in self.all_scopes:
                for bound, bindings in scope.bindings.items():
                    if scope is self.module_scope or scope.flags.get(bound, 0) & DEF_GLOBAL:
                        index.setdefault(bound, []).extend((scope, b) for b in bindings)
            self.globals_index = index
        return self.globals_index.get(name, [])

    def bound_meanings(self, name, scope, depth):
        return unique_meanings(self.meaning_of(b, scope, depth) for b in scope.bindings.get(name, [])
                               if b.kind != 'del') or [Meaning('value', scope=scope)]

    def meaning_of(self, binding, scope, depth):
        if binding.kind == 'import':
            return Meaning('import', binding.qualname, binding, scope)
        if binding.kind in ('param', 'def', 'class'):
            return Meaning(binding.kind, None, binding, scope)
        if binding.value is not None and depth < 8 and isinstance(binding.value, (ast.Name, ast.Attribute)):
            quals = self.qualnames(binding.value, scope, depth + 1)
            if quals:
                return Meaning('alias', quals, binding, scope)
        return Meaning('value', None, binding, scope)

    def node_qualnames(self, node, scope):
        """qualnames(node), computed once for the rules of one node that all ask for it (a call's
        callee, an attribute's object): one slot, holding the node itself, since the walker runs
        a node's rules one after another."""
        memo = self.qualnames_memo
        if memo[0] is not node:
            memo = self.qualnames_memo = (node, self.qualnames(node, scope))
        return memo[1]

    def qualnames(self, node, scope, depth=0):
        """The qualified names an expression may stand for (`yaml.SafeLoader`), or [] when unknown."""
        if isinstance(node, ast.Name):
            result = []
            for meaning in self.meanings(node.id, scope, depth):
                if meaning.kind == 'import':
                    result.append(meaning.qualname)
                elif meaning.kind == 'builtin':
                    result.append('builtins.' + meaning.qualname)
                elif meaning.kind == 'alias':
                    result += meaning.qualname
            return result
        if isinstance(node, ast.Attribute):
            return ['%s.%s' % (q, node.attr) for q in self.qualnames(node.value, scope, depth)]
        return []

    def parent(self, node):
        return self.parents.get(id(node))

    def own_class(self, value, scope):
        """The plugin class C when `value` is the first parameter of a method of C, or super()
        in its zero-argument form directly in such a method; None otherwise."""
        if isinstance(value, ast.Name):
            meanings = self.meanings(value.id, scope)
            owners = set()
            for meaning in meanings:
                binding = meaning.binding
                if meaning.kind != 'param' or binding.index != 0:
                    return None
                method_scope = self.scope_of.get(id(binding.node))
                if method_scope is None or method_scope.method_of is None or self.is_static(binding.node):
                    return None
                owners.add(id(method_scope.method_of))
            if len(owners) == 1:
                return self.plugin_classes[owners.pop()]
            return None
        if self.is_zero_arg_super(value, scope):
            return scope.method_of
        return None

    def is_zero_arg_super(self, value, scope):
        return (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == 'super'
                and not value.args and not value.keywords and scope.method_of is not None
                and not self.is_static(scope.node) and (scope.node.args.posonlyargs + scope.node.args.args)
                and all(m.kind == 'builtin' for m in self.meanings('super', scope)))

    def is_static(self, function):
        for decorator in function.decorator_list:
            if self.builtin_named(decorator, 'staticmethod', self.node_scope[id(function)]):
                return True
            # An unknown decorator may call the function with anything as its first argument.
            if not self.is_known_decorator(decorator, function):
                return True
        return False

    def is_known_decorator(self, decorator, function):
        scope = self.node_scope[id(function)]
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        quals = self.resolved_qualnames(target, scope)
        if quals and all(q in R['method_decorators'] for q in quals):
            return True
        # `@name.setter` / `@name.getter` of a property defined in the same class.
        return (isinstance(target, ast.Attribute) and target.attr in ('setter', 'getter', 'deleter')
                and self.is_property_of_class(target.value, scope, frozenset()))

    def builtin_named(self, node, name, scope):
        """`node` is the builtin `name` for certain (not a binding of the plugin's of that name)."""
        return self.resolved_qualnames(node, scope) == ['builtins.' + name]

    def is_property_of_class(self, node, scope, seen):
        """`name` in `@name.setter` is a property defined in the same class body: every binding of
        the name there is a def under the builtin @property or under `@other.setter` (getter,
        deleter) of such a property, and one is under @property."""
        if not isinstance(node, ast.Name) or scope.kind != 'class' or node.id in seen or len(seen) > 10:
            return node.id in seen if isinstance(node, ast.Name) else False
        seen = seen | {node.id}
        meanings = self.meanings_when_bound(node.id, scope)
        found = False
        for meaning in meanings:
            function = meaning.binding.node if meaning.kind == 'def' and meaning.scope is scope else None
            if function is None or not function.decorator_list:
                return False
            for decorator in function.decorator_list:
                if self.builtin_named(decorator, 'property', scope):
                    found = True
                elif not (isinstance(decorator, ast.Attribute) and decorator.attr in ('setter', 'getter', 'deleter')
                          and self.is_property_of_class(decorator.value, scope, seen)):
                    return False
        return found

    def chain_root(self, expression, scope, depth=0):
        """The import an object comes from, through calls, attributes and subscripts
        (`logging.getLogger().manager`, or a local bound once to such a value), or None."""
        while isinstance(expression, (ast.Attribute, ast.Call, ast.Subscript)):
            if isinstance(expression, ast.Call) and self.is_builtin_call(expression, 'type', scope) and expression.args:
                expression = expression.args[0]  # type(x) is x's class: patching it patches x's kind
                continue
            expression = expression.func if isinstance(expression, ast.Call) else expression.value
        if not isinstance(expression, ast.Name) or depth > 4:
            return None
        quals = self.qualnames(expression, scope)
        if quals and not all(q.startswith('builtins.') for q in quals):
            return quals[0]
        for meaning in self.meanings(expression.id, scope):
            binding = meaning.binding
            if meaning.kind == 'value' and binding is not None and binding.value is not None:
                root = self.chain_root(binding.value, meaning.scope, depth + 1)
                if root:
                    return root
        return None

    def resolved_qualnames(self, node, scope):
        """qualnames() when every meaning of the expression's name is an import, an alias or a
        builtin (qualnames() leaves the others out); else None."""
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name):
            return None
        meanings = self.meanings_when_bound(root.id, scope)
        if not meanings or not all(m.kind in ('import', 'alias', 'builtin') for m in meanings):
            return None
        return self.qualnames(node, scope) or None

    def statement_of(self, node):
        while node is not None and not isinstance(node, ast.stmt):
            node = self.parent(node)
        return node

    def name_reads(self):
        """Every Name read, by identifier, once (a scan per call would be quadratic)."""
        if self.reads_by_name is None:
            self.reads_by_name = {}
            for other in self.order:
                if type(other) is ast.Name and type(other.ctx) is ast.Load:
                    self.reads_by_name.setdefault(other.id, []).append(other)
        return self.reads_by_name

    def uses_of(self, function):
        """Each read of a name that means the def `function`, with its scope: the ast.Call it is
        the callee of, or None when the read hands the function on (not only calls it)."""
        for read in self.name_reads().get(function.name, []):
            read_scope = self.node_scope[id(read)]
            if not any(m.kind == 'def' and m.binding.node is function for m in self.meanings(read.id, read_scope)):
                continue
            call = self.parent(read)
            yield (call if isinstance(call, ast.Call) and call.func is read else None), read_scope

    def is_builtin_call(self, node, name, scope):
        return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name
                and any(m.kind == 'builtin' for m in self.meanings(name, scope)))

    def is_decoder_call(self, node, scope):
        return isinstance(node, ast.Call) and any(q in DECODERS for q in self.qualnames(node.func, scope))
