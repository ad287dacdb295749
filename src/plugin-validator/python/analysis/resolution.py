"""Meaning resolution: what a name read in a scope may stand for (Python's rules; symtable decides
the scope). Each answer is cached per name and scope, so resolution stays linear in the file."""

from .scopes import DEF_GLOBAL, FREE, GLOBAL_EXPLICIT, LOCAL, Meaning
from .table import BUILTIN_NAMES


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
        if binding.kind in ('import', 'param', 'def', 'class'):
            return Meaning(binding.kind, binding.qualname, binding, scope)
        return Meaning('value', None, binding, scope)

    def parent(self, node):
        return self.parents.get(id(node))
