"""CPython's view: the tree from its own parser, symtable where only it can refuse, and the first
pass that records each node's parent and scope and each scope's bindings and symtable flags."""

import ast
import symtable

from .common import DepthError
from .table import MAX_NESTING_DEPTH, MODULE_METADATA


def parse(raw, findings):
    """CPython's own tree from the bytes (its tokenizer decodes them itself), or None."""
    return compiled(lambda: compile(raw, '<plugin>', 'exec', ast.PyCF_ONLY_AST, dont_inherit=True), findings)


def symtable_accepts(text, findings):
    """CPython's symtable on the program: the errors it raises and the parser does not."""
    return compiled(lambda: symtable.symtable(text, '<plugin>', 'exec'), findings) is not None


def compiled(step, findings):
    try:
        return step()
    except SyntaxError as error:
        message = 'Syntax error: %s' % (error.msg or 'invalid Python')
        if 'too many nested' in (error.msg or '') or 'too many statically nested' in (error.msg or ''):
            findings.add('too-deep', 'Plugin is nested too deeply', line=error.lineno or 1, column=0)
        else:
            findings.add('syntax-error', message, line=error.lineno or 1, column=max((error.offset or 1) - 1, 0))
    except (RecursionError, MemoryError):
        findings.add('too-deep', 'Plugin is nested too deeply')
    except ValueError:
        findings.add('encoding', 'Source cannot be decoded')
    return None



# --- scopes -----------------------------------------------------------------------------------

SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp,
               ast.SetComp, ast.DictComp, ast.GeneratorExp)
SCOPE_TYPES = frozenset(SCOPE_NODES)
BINDING_TYPES = frozenset([ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                           ast.ClassDef, ast.Name, ast.ExceptHandler, ast.MatchAs, ast.MatchStar, ast.MatchMapping,
                           ast.Global, ast.Nonlocal])
COMPREHENSION_TYPES = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


COMPREHENSION_NAMES = {ast.ListComp: 'listcomp', ast.SetComp: 'setcomp', ast.DictComp: 'dictcomp',
                       ast.GeneratorExp: 'genexpr'}


# How CPython's symtable flags a name in one scope (Python/symtable.c), and what it concludes.
DEF_GLOBAL, DEF_LOCAL, DEF_PARAM, DEF_NONLOCAL, DEF_IMPORT = 1, 2, 4, 8, 64
DEF_BOUND = DEF_LOCAL | DEF_PARAM | DEF_IMPORT
LOCAL, GLOBAL_EXPLICIT, GLOBAL_IMPLICIT, FREE = 'local', 'global-explicit', 'global-implicit', 'free'
# The constructs behind every error CPython's symtable raises and its parser does not (global or
# nonlocal misuse, walrus in comprehensions, yield or await in comprehensions and annotations,
# import * in a function): a tree with one of them is also given to symtable itself.
SYMTABLE_ERROR_TYPES = frozenset([ast.Global, ast.Nonlocal, ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await])


class Scope:
    """One block of CPython's symbol table: module, class, or function (def, lambda, comprehension).

    The scope of a name is decided as symtable.c's analyze_name decides it, from the flags the
    block's own code gives the name and the names its enclosing functions bind; the differential
    test checks every decision against CPython's symtable."""

    def __init__(self, node, parent, kind, name):
        self.node = node
        self.parent = parent
        self.kind = kind  # 'module', 'class', 'function'
        self.name = name
        self.lineno = getattr(node, 'lineno', 0)
        self.bindings = {}  # name -> [Binding]
        self.flags = {}  # name -> DEF_* bits
        self.method_of = None  # the ClassDef when this function is defined directly in a class body
        self.enclosing_bound = None  # the names enclosing functions bind for this block (lazy)
        self.imported = set()  # the names an import binds here (names.py: no rebinding of them)

    def bind(self, name, binding):
        self.bindings.setdefault(name, []).append(binding)
        if binding.kind == 'import':
            self.imported.add(name)

    def flag(self, name, bit):
        self.flags[name] = self.flags.get(name, 0) | bit

    def scope_of_name(self, name):
        """LOCAL, FREE, GLOBAL_EXPLICIT or GLOBAL_IMPLICIT: what the name is when read here."""
        flags = self.flags.get(name, 0)
        if flags & DEF_GLOBAL:
            return GLOBAL_EXPLICIT
        if flags & DEF_NONLOCAL:
            return FREE
        if flags & DEF_BOUND:
            return LOCAL
        if self.parent is not None and name in self.bound_by_enclosing():
            return FREE
        return GLOBAL_IMPLICIT

    def bound_by_enclosing(self):
        """The `bound` set symtable.c passes into this block: the locals of enclosing functions
        (not of classes, whose names nested code cannot see), less those a function declares
        global on the way; a class adds the implicit __class__ cell."""
        if self.enclosing_bound is None:
            parent = self.parent
            if parent.kind == 'module':
                self.enclosing_bound = frozenset()
            elif parent.kind == 'class':
                self.enclosing_bound = parent.bound_by_enclosing() | {'__class__'}
            else:
                passed = set(parent.bound_by_enclosing())
                for name, flags in parent.flags.items():
                    if flags & DEF_GLOBAL:
                        passed.discard(name)
                    elif flags & DEF_BOUND and not flags & DEF_NONLOCAL:
                        passed.add(name)
                self.enclosing_bound = frozenset(passed)
        return self.enclosing_bound


class Binding:
    """What one statement binds a name to: an import, a def, a class, a parameter, or a value."""

    def __init__(self, kind, node=None, qualname=None, index=None, leading=False, value=None):
        self.kind = kind
        self.node = node
        self.qualname = qualname
        self.index = index
        self.leading = leading
        self.value = value


class Meaning:
    """One thing a name may refer to when it is read."""

    def __init__(self, kind, qualname=None, binding=None, scope=None):
        self.kind = kind  # 'builtin', 'import', 'param', 'def', 'class', 'value', 'undefined'
        self.qualname = qualname
        self.binding = binding
        self.scope = scope


# The children of each node type, without the shared Load/Store/Del context objects, and only
# the fields that can hold a node: each class's ASDL signature (its __doc__, as
# `Name(identifier id, expr_context ctx)`) says which are identifiers, strings, ints or constants.
# (Operators are shared singletons like the contexts, and no rule reads them.) Last field first.
AST_TYPES = [cls for cls in vars(ast).values() if isinstance(cls, type) and issubclass(cls, ast.AST)]
SCALAR_FIELD_TYPES = frozenset(['identifier', 'string', 'int', 'constant'])
SKIPPED_FIELD_TYPES = frozenset(['expr_context', 'boolop', 'operator', 'unaryop', 'cmpop'])


def declared_field_types(cls):
    """field -> its ASDL type (without `?`/`*`), from the class's signature, or {} when it has none."""
    doc = cls.__doc__ or ''
    if not doc.startswith(cls.__name__ + '(') or not doc.endswith(')'):
        return {}
    declared = {}
    for part in doc[len(cls.__name__) + 1:-1].split(','):
        words = part.split()
        if len(words) == 2:
            declared[words[1]] = words[0].rstrip('?*')
    return declared


def node_fields(cls):
    declared = declared_field_types(cls)
    fields = []
    for field in cls._fields:
        kind = declared.get(field)
        if field in ('ctx', 'op', 'ops') or kind in SKIPPED_FIELD_TYPES or kind in SCALAR_FIELD_TYPES:
            continue  # never a node: nothing to walk
        fields.append(field)  # a node, a list of nodes, or (undeclared) checked at the walk
    return tuple(reversed(fields))


CHILD_FIELDS = {cls: node_fields(cls) for cls in AST_TYPES}
# The node types the first pass does more for than record and descend (Name's stores, scopes,
# bindings, the constructs symtable judges, a comprehension's split scopes).
SPECIAL_TYPES = SCOPE_TYPES | BINDING_TYPES | SYMTABLE_ERROR_TYPES | frozenset([ast.comprehension])


class ScopeBuilder:
    # The first pass: parents, scopes and binding sites.
    def collect(self):
        tree = self.tree
        stack = [(tree, None, self.module_scope, 0)]
        parents, node_scope, order = self.parents, self.node_scope, self.order
        fields_of, node_type, push, pop = CHILD_FIELDS, ast.AST, stack.append, stack.pop
        special, name_type, load, limit = SPECIAL_TYPES, ast.Name, ast.Load, MAX_NESTING_DEPTH + 1
        while stack:
            node, parent, scope, depth = pop()
            if depth > limit:
                # The module and the first statement are not nesting: a body's first list is level 1.
                raise DepthError(node)
            key = id(node)
            parents[key] = parent
            node_scope[key] = scope
            order.append(node)
            kind = type(node)
            if kind is name_type:
                if type(node.ctx) is not load:
                    self.collect_bindings(node, scope, scope)
                continue  # a Name has no children
            fields = fields_of[kind]
            inner = scope
            if kind in special:
                if kind in SCOPE_TYPES and node is not tree:
                    inner = self.enter(node, scope)
                if kind in BINDING_TYPES:
                    self.collect_bindings(node, scope, inner)
                if kind in SYMTABLE_ERROR_TYPES:
                    self.needs_symtable = True
                if inner is not scope or kind is ast.comprehension:
                    depth += 1
                    for field in fields:
                        value = getattr(node, field)
                        for item in (reversed(value) if type(value) is list else (value,)):
                            if isinstance(item, node_type):
                                push((item, node, self.child_scope(node, item, scope, inner), depth))
                    continue
            depth += 1
            # Pushed last field first, so that `order` is the tree in pre-order.
            for field in fields:
                value = getattr(node, field)
                if type(value) is list:
                    for item in reversed(value):
                        if isinstance(item, node_type):
                            push((item, node, scope, depth))
                elif isinstance(value, node_type):
                    push((value, node, scope, depth))

    def child_scope(self, node, child, outer, inner):
        """Decorators, defaults, annotations, bases and a comprehension's first iterable are
        evaluated in the enclosing scope; the rest of a scope node in its own scope."""
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if child in node.decorator_list or child is node.returns or isinstance(child, ast.arguments):
                return outer
            return inner
        if isinstance(node, ast.Lambda):
            return outer if isinstance(child, ast.arguments) else inner
        if isinstance(node, ast.ClassDef):
            if child in node.decorator_list or child in node.bases or child in node.keywords:
                return outer
            return inner
        if isinstance(node, ast.comprehension) and child is node.iter:
            comp = self.parents.get(id(node))
            if comp is not None and comp.generators[0] is node:
                return outer.parent
        return inner

    def enter(self, node, scope):
        if isinstance(node, ast.Lambda):
            name = 'lambda'
        elif type(node) in COMPREHENSION_NAMES:
            name = COMPREHENSION_NAMES[type(node)]
        else:
            name = node.name
        inner = Scope(node, scope, 'class' if isinstance(node, ast.ClassDef) else 'function', name)
        if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and isinstance(scope.node, ast.ClassDef)
                and node in scope.node.body):
            inner.method_of = scope.node
        if isinstance(node, ast.ClassDef):
            self.plugin_classes[id(node)] = node
        self.scope_of[id(node)] = inner
        self.all_scopes.append(inner)
        return inner

    def collect_bindings(self, node, scope, inner):
        """The bindings the rules follow, and the flags symtable.c would give each name."""
        kind = type(node)
        if kind is ast.Name:
            if isinstance(node.ctx, ast.Load):
                return
            value = None
            parent = self.parents.get(id(node))
            if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and parent.targets[0] is node:
                value = parent.value
            target_scope = scope
            scope.flag(node.id, DEF_LOCAL)
            if isinstance(parent, ast.NamedExpr) and isinstance(scope.node, COMPREHENSION_TYPES):
                # A walrus in a comprehension binds in the enclosing function or module.
                while isinstance(target_scope.node, COMPREHENSION_TYPES):
                    target_scope = target_scope.parent
                if target_scope.kind == 'function' and not target_scope.flags.get(node.id, 0) & DEF_GLOBAL:
                    scope.flag(node.id, DEF_NONLOCAL)
                    target_scope.flag(node.id, DEF_LOCAL)
                else:
                    # At module level, in a function that declares it global, or (a SyntaxError
                    # symtable raises) in a class body.
                    scope.flag(node.id, DEF_GLOBAL)
                    target_scope.flag(node.id, DEF_GLOBAL if target_scope.kind == 'module' else DEF_LOCAL)
            target_scope.bind(node.id, Binding('del' if isinstance(node.ctx, ast.Del) else 'value', node,
                                               value=value))
        elif kind is ast.Import or kind is ast.ImportFrom:
            leading = scope is self.module_scope and self.is_leading(node)
            for alias in node.names:
                if kind is ast.Import:
                    bound = alias.asname or alias.name.split('.')[0]
                    scope.bind(bound, Binding('import', node, alias.name if alias.asname else bound, leading=leading))
                elif alias.name != '*':
                    bound = alias.asname or alias.name
                    qual = '%s.%s' % (node.module or '', alias.name)
                    scope.bind(bound, Binding('import', node, qual, leading=leading))
                else:
                    continue
                scope.flag(bound, DEF_IMPORT)
        elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.Lambda:
            if kind is not ast.Lambda:
                scope.bind(node.name, Binding('def', node))
                scope.flag(node.name, DEF_LOCAL)
            args = node.args
            positional = args.posonlyargs + args.args
            for index, arg in enumerate(positional):
                inner.bind(arg.arg, Binding('param', node, index=index if kind is not ast.Lambda else -1))
            others = args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]
            for arg in others:
                inner.bind(arg.arg, Binding('param', node, index=-1))
            for arg in positional + others:
                if inner.flags.get(arg.arg, 0) & DEF_PARAM:
                    self.needs_symtable = True  # duplicate argument: symtable's SyntaxError
                inner.flag(arg.arg, DEF_PARAM)
        elif kind is ast.ClassDef:
            scope.bind(node.name, Binding('class', node))
            scope.flag(node.name, DEF_LOCAL)
        elif kind is ast.ExceptHandler:
            if node.name:
                scope.bind(node.name, Binding('value', node))
                scope.bind(node.name, Binding('del', node))
                scope.flag(node.name, DEF_LOCAL)
        elif kind is ast.MatchAs or kind is ast.MatchStar:
            if node.name:
                scope.bind(node.name, Binding('value', node))
                scope.flag(node.name, DEF_LOCAL)
        elif kind is ast.MatchMapping:
            if node.rest:
                scope.bind(node.rest, Binding('value', node))
                scope.flag(node.rest, DEF_LOCAL)
        elif kind is ast.Global:
            for name in node.names:
                scope.flag(name, DEF_GLOBAL)
        elif kind is ast.Nonlocal:
            for name in node.names:
                scope.flag(name, DEF_NONLOCAL)

    def is_leading(self, node):
        """An import in the file's first block of imports, before any other code runs."""
        if self.leading is None:
            self.leading = set()
            for statement in self.tree.body:
                if isinstance(statement, (ast.Import, ast.ImportFrom)):
                    self.leading.add(id(statement))
                elif not (isinstance(statement, (ast.Expr, ast.Assign)) and isinstance(statement.value, ast.Constant)
                          and (isinstance(statement, ast.Expr) or all(
                              isinstance(t, ast.Name) and t.id in MODULE_METADATA for t in statement.targets))):
                    break  # a docstring or `__version__ = "1.0"` runs no code
        return id(node) in self.leading
