"""What a value may be: each expression's type against the profile's table, computed once per node.

A type is a frozenset of atoms (a union):

  'T:<type>'   an instance of a type of the table (`T:str`, `T:re.Match`, `T:logging.Logger`)
  'M:<module>' an allowed module           'F:<qual>'  a library callable or constant of the table
  'B:<type>|<name>' a method of a table type, bound or unbound
  'OC:<n>' / 'OI:<n>' the plugin's own class n / an instance of it   'OF' a function of the plugin
  'S' super()   '?' a value the checker cannot type   'N' a name never bound (NameError when read)
  'X' a value the checker could not follow (a name whose bindings did not settle): treated as
      anything, including the values whose use is restricted.

Name types are the union over the name's bindings (CPython's scopes, see scopes.py). A name whose
binding depends on itself (`url = url.url`) is typed by iterating to the fixpoint from the empty
type (a few rounds, else 'X'); a type computed from such a partial answer is not kept."""

import ast
import functools

from .table import BUILTINS, MODULES, TYPES

UNKNOWN = frozenset(['?'])
NEVER = frozenset(['N'])
TOP = frozenset(['X'])
OWN_FUNCTION = frozenset(['OF'])
SUPER = frozenset(['S'])
MAX_ROUNDS = 4  # rounds of a self-dependent name's fixpoint before it is 'X'

CONSTANT_TYPES = {str: 'T:str', bytes: 'T:bytes', int: 'T:int', float: 'T:float', bool: 'T:bool', complex: 'T:complex',
                  type(None): 'T:None'}
DISPLAY_TYPES = {ast.List: 'T:list', ast.ListComp: 'T:list', ast.Tuple: 'T:tuple', ast.Dict: 'T:dict',
                 ast.DictComp: 'T:dict', ast.Set: 'T:set', ast.SetComp: 'T:set', ast.JoinedStr: 'T:str',
                 ast.Compare: 'T:bool', ast.Lambda: 'OF'}
CONSTANT_ATOMS = {kind: frozenset([atom]) for kind, atom in CONSTANT_TYPES.items()}
DISPLAY_ATOMS = {kind: frozenset([atom]) for kind, atom in DISPLAY_TYPES.items()}


@functools.lru_cache(maxsize=None)  # the specs are the table's: a bounded set
def atoms_of(spec):
    """'re.Match|None' -> {'T:re.Match', 'T:None'}; '?' -> unknown."""
    if spec == '?':
        return UNKNOWN
    return frozenset('T:' + part for part in spec.split('|'))


def entry_atoms(qual, entry):
    """What reading a table member gives: a module, a callable, or a constant's type."""
    if 'module' in entry:
        return frozenset(['M:' + entry['module']])
    if 'constant' in entry:
        return atoms_of(entry['constant'])
    if 'attr' in entry:
        return atoms_of(entry['attr'])
    return frozenset(['F:' + qual])


def library_entry(atom):
    """The table entry of a 'F:' or 'B:' atom, or None."""
    if atom[:2] not in ('F:', 'B:'):
        return None  # the plugin's own classes and the rest: not cached (their ids are per plugin)
    return table_entry(atom)


@functools.lru_cache(maxsize=4096)  # bounded: attribute names in the atoms are the uploader's
def table_entry(atom):
    if atom.startswith('F:'):
        module, _, name = atom[2:].rpartition('.')
        if module == 'builtins':
            return BUILTINS.get(name)
        if module.endswith(':static'):
            return TYPES.get(module[:-7], {}).get('$static', {}).get(name)
        return MODULES.get(module, {}).get(name)
    if atom.startswith('B:'):
        type_name, _, name = atom[2:].partition('|')
        return TYPES.get(type_name, {}).get(name)
    return None


class Typing:
    # The types of expressions and bindings, memoized per node and per binding.

    def type_of(self, node):
        key = id(node)
        known = self.types_cache.get(key)
        if known is None:
            hits = self.cycle_hits
            known = self.compute_type(node)
            if hits == self.cycle_hits:  # not computed from a name still being typed
                self.types_cache[key] = known
            elif self.round_types is not None:
                self.round_types[key] = known  # kept if this round turns out to be the fixpoint's last
        return known

    def compute_type(self, node):
        kind = type(node)
        if kind is ast.Name:
            return self.name_type(node.id, self.node_scope[id(node)])
        if kind is ast.Attribute:
            value = node.value
            atoms = self.types_cache.get(id(value)) or self.type_of(value)
            if len(atoms) == 1:
                for atom in atoms:
                    return member(atom, node.attr)[0] or UNKNOWN
            result = set()
            for atom in atoms:
                result |= member(atom, node.attr)[0]
            return frozenset(result) or UNKNOWN
        if kind is ast.Call:
            func = node.func
            atoms = self.types_cache.get(id(func)) or self.type_of(func)
            if len(atoms) == 1:
                for atom in atoms:
                    return self.call_result(atom) or UNKNOWN
            result = set()
            for atom in atoms:
                result |= self.call_result(atom)
            return frozenset(result) or UNKNOWN
        if kind is ast.Constant:
            return CONSTANT_ATOMS.get(type(node.value), UNKNOWN)
        if kind in DISPLAY_TYPES:
            return DISPLAY_ATOMS[kind]
        if kind is ast.BinOp:
            # A str template on the left gives a str (`+`, `%`); other operands may give anything.
            left = node.left
            if isinstance(left, ast.JoinedStr) or isinstance(left, ast.Constant) and isinstance(left.value, str):
                return frozenset(['T:str'])
            return UNKNOWN
        if kind is ast.BoolOp:
            return frozenset().union(*(self.type_of(value) for value in node.values))
        if kind is ast.IfExp:
            return self.type_of(node.body) | self.type_of(node.orelse)
        if kind is ast.NamedExpr:
            return self.type_of(node.value)
        if kind is ast.Subscript:
            return frozenset(['T:str']) if self.type_of(node.value) == {'T:str'} else UNKNOWN
        if kind is ast.UnaryOp and isinstance(node.op, ast.Not):
            return frozenset(['T:bool'])
        return UNKNOWN

    def member(self, atom, attr):
        return member(atom, attr)

    def call_result(self, atom):
        if atom.startswith('OC:'):
            return frozenset(['OI:' + atom[3:]])
        return library_call_result(atom)

    # --- names --------------------------------------------------------------------------------

    def name_type(self, name, scope):
        key = (name, id(scope))
        known = self.name_types.get(key)
        if known is not None:
            return known
        partial = self.partial_types
        if key in partial:
            self.cycle_hits += 1
            self.hit_names.add(key)
            return partial[key]
        partial[key] = frozenset()
        hits = self.cycle_hits
        enclosing = self.round_types
        for _ in range(MAX_ROUNDS):
            self.hit_names.discard(key)
            self.round_types = {}
            result = set()
            meanings = self.meanings(name, scope)
            bound = [m for m in meanings if m.kind != 'undefined']
            # Read where it is unbound, the name raises NameError: that adds nothing to what it may be.
            for meaning in bound or meanings:
                result |= self.meaning_type(name, meaning)
            result = frozenset(result)
            if key not in self.hit_names:
                last = self.round_types  # the name did not depend on itself in this round
                break
            if result == partial[key]:
                # The fixpoint: this round read the name as what it is; unless the empty type
                # becomes NEVER below, what this round computed is what it would compute again.
                last = self.round_types if result else None
                break
            partial[key] = result
        else:
            result = TOP
            last = None
        self.round_types = enclosing
        del partial[key]
        self.hit_names.discard(key)
        result = result or NEVER
        if not any(hit in partial for hit in self.hit_names):
            self.name_types[key] = result
            self.cycle_hits = hits  # settled: what is computed from it may be kept
            if last:
                self.types_cache.update(last)
        elif last and enclosing is not None:
            enclosing.update(last)  # still computed from an outer name being typed: kept with its round
        return result

    def meaning_type(self, name, meaning):
        kind = meaning.kind
        if kind == 'undefined':
            return NEVER
        if kind == 'builtin':
            entry = BUILTINS.get(name)
            return frozenset(['F:builtins.' + name]) if entry is not None and 'constant' not in entry else UNKNOWN
        if kind == 'import':
            return self.import_type(meaning.binding)
        if kind == 'def':
            return OWN_FUNCTION
        if kind == 'class':
            return frozenset(['OC:%d' % id(meaning.binding.node)])
        if kind == 'param':
            return self.parameter_type(meaning)
        bindings = [meaning.binding] if meaning.binding is not None else [
            b for b in meaning.scope.bindings.get(name, []) if b.kind == 'value']
        result = set()
        for binding in bindings:
            result |= self.binding_type(binding)
        return frozenset(result)

    def import_type(self, binding):
        """`import a.b` binds `a`; `import a.b as c` and `from a import b` bind what they name."""
        qual = binding.qualname
        if isinstance(binding.node, ast.Import) or qual in MODULES:
            return frozenset(['M:' + qual]) if qual in MODULES else NEVER
        module, _, member = qual.rpartition('.')
        entry = MODULES.get(module, {}).get(member)
        # An import outside the profile is refused where it is written: its uses add nothing.
        return entry_atoms(qual, entry) if entry is not None else NEVER

    def parameter_type(self, meaning):
        """The first parameter of a method is the instance (the class for a classmethod); the
        others, and every parameter of a plain function or lambda, may be anything."""
        function = meaning.binding.node
        scope = self.scope_of.get(id(function))
        if meaning.binding.index != 0 or scope is None or scope.method_of is None:
            return UNKNOWN
        decorators = [self.decorator_kind(d) for d in function.decorator_list]
        own = '%d' % id(scope.method_of)
        if 'staticmethod' in decorators:
            return UNKNOWN
        return frozenset(['OC:' + own if 'classmethod' in decorators else 'OI:' + own])

    def decorator_kind(self, decorator):
        """'property', 'staticmethod', 'classmethod' when the decorator is that builtin for certain."""
        atoms = self.type_of(decorator)
        if len(atoms) == 1:
            (atom,) = atoms
            if atom in ('F:builtins.property', 'F:builtins.staticmethod', 'F:builtins.classmethod'):
                return atom[11:]
        return None

    def binding_type(self, binding):
        key = id(binding)
        known = self.binding_types.get(key)
        if known is None:
            hits = self.cycle_hits
            known = self.compute_binding_type(binding)
            if hits == self.cycle_hits:
                self.binding_types[key] = known
        return known

    def compute_binding_type(self, binding):
        node = binding.node
        if binding.value is not None:
            return self.type_of(binding.value)
        parent = self.parents.get(id(node))
        if isinstance(parent, ast.Assign) and node in parent.targets:
            return self.type_of(parent.value)
        if isinstance(parent, (ast.AnnAssign, ast.NamedExpr)) and parent.target is node:
            return self.type_of(parent.value) if parent.value is not None else NEVER
        if isinstance(parent, ast.withitem) and parent.optional_vars is node:
            result = set()
            for atom in self.type_of(parent.context_expr):
                enter = TYPES.get(atom[2:], {}).get('$enter') if atom.startswith('T:') else None
                result |= atoms_of(enter) if enter else UNKNOWN
            return frozenset(result)
        # A loop, comprehension or unpacking target, `+=`, an except or match capture.
        return UNKNOWN


@functools.lru_cache(maxsize=4096)  # bounded: the atoms other than the plugin's own classes are the table's
def library_call_result(atom):
    """What calling a value of type `atom` gives, for every atom but a class of the plugin ('OC:')."""
    if atom in ('N', 'X'):
        return frozenset([atom])
    entry = library_entry(atom)
    if entry is None:
        return UNKNOWN
    if 'class' in entry:
        return atoms_of(entry['class'])
    if 'returns' in entry:
        return SUPER if entry['returns'] == 'super' else atoms_of(entry['returns'])
    return UNKNOWN


@functools.lru_cache(maxsize=4096)  # bounded: the worker lives on, and attribute names are the uploader's
def member(atom, attr):
    """(what `value.attr` gives when the value is `atom`, or the empty set when the profile has
    no such member, and what the profile allows instead: a short list for the message)."""
    if atom.startswith('T:'):
        entry = TYPES.get(atom[2:], {}).get(attr)
        if entry is None or attr.startswith('$'):
            return frozenset(), public_names(TYPES.get(atom[2:], {}))
        if 'attr' in entry:
            return atoms_of(entry['attr']), None
        return frozenset(['B:%s|%s' % (atom[2:], attr)]), None
    if atom.startswith('M:'):
        module = atom[2:]
        entry = MODULES.get(module, {}).get(attr)
        if entry is None:
            return frozenset(), public_names(MODULES.get(module, {}))
        return entry_atoms('%s.%s' % (module, attr), entry), None
    if atom.startswith('F:'):
        entry = library_entry(atom) or {}
        class_type = entry.get('class')
        if class_type and class_type != '?':
            statics = TYPES.get(class_type, {}).get('$static', {})
            if attr in statics:
                return entry_atoms('%s:static.%s' % (class_type, attr), statics[attr]), None
            if atom.startswith('F:builtins.') and attr in TYPES.get(class_type, {}):
                # `str.lower` and the like: the type's method, taken unbound.
                return member('T:' + class_type, attr)
            return frozenset(), sorted(statics)
        return frozenset(), []
    if atom.startswith('B:') or atom == 'OF':
        return frozenset(), []
    if atom in ('N', 'X'):
        return frozenset([atom]), None
    # The plugin's own classes and instances, super() and untyped values: the checks decide.
    return UNKNOWN, None


def public_names(entries):
    return sorted(name for name in entries if not name.startswith('$'))
