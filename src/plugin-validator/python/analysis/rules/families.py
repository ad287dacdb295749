"""Door 1: the class families whose class objects the tree proves, in which the exemptions apply."""

import ast

from ..common import assigned_names
from ..tables import MAX_TRUSTED_ANCESTRY, R


class FamiliesRules:
    # Classes the plugin defines: the names each binds (what self/cls/super() may use privately).
    def prepare_classes(self):
        self.class_names = {}
        self.private_methods = {}
        for class_id, node in self.plugin_classes.items():
            names = set()
            for statement in node.body:
                if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    names.add(statement.name)
                for target in assigned_names(statement):
                    names.add(target)
            self.class_names[class_id] = names
        for node in self.order:
            if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
                owner = self.own_class(node.value, self.node_scope[id(node)])
                if owner is not None:
                    self.class_names[id(owner)].add(node.attr)

    def binds_in_plugin_ancestry(self, cls, name):
        """The class or one of its plugin bases binds the name (a private name it owns)."""
        return any(name in self.class_names[id(c)] for c in self.plugin_ancestry(cls))

    def plugin_ancestry(self, cls):
        """The class and every plugin class among its bases, however deep (each once)."""
        found = self.ancestry_cache.get(id(cls))
        if found is None:
            found, seen, pending = [], set(), [cls]
            while pending:
                current = pending.pop()
                if id(current) in seen:
                    continue  # a set: a scan of `found` made a chain of classes cubic
                seen.add(id(current))
                found.append(current)
                outer = self.node_scope[id(current)]
                for base in current.bases:
                    if isinstance(base, ast.Name):
                        pending += [m.binding.node for m in self.meanings_when_bound(base.id, outer) if m.kind == 'class']
            self.ancestry_cache[id(cls)] = found
        return found

    def only_plugin_bases(self, cls):
        """No base from outside the plugin: an ABC's register() or a runtime Protocol would make
        isinstance true of any object."""
        for current in self.plugin_ancestry(cls):
            if current.keywords:
                return False
            outer = self.node_scope[id(current)]
            for base in current.bases:
                meanings = self.meanings_when_bound(base.id, outer) if isinstance(base, ast.Name) else []
                if not meanings or not all(m.kind == 'class' for m in meanings):
                    return False
        return True

    # --- door 1: the exemptions trust the class object, which the class statement only describes.
    # self/cls/super(), `C(...)`, isinstance, a value only compared and a class constant are
    # trusted only in a family of classes whose every possible class object the tree proves: the
    # classes of the plugin that one another derive from, each made by its statement alone, with
    # no base but such classes and the library classes of `known_bases` (whose names the tables
    # list), and no class object handed to code that could derive from it.

    def class_families(self):
        """Once per plugin: (ended, library_names, has_library). `ended` holds the ids of the classes
        whose trust ends: one not plain (a class keyword, a decorator that may return another
        class, a base that is not a plugin class or a known library class, handed out as a value),
        every class deriving from one, and every class one derives from (its methods' self may be
        an instance of it). library_names maps a class id to the names the known library bases of
        its family hold; has_library to whether the family has one."""
        if self.families is not None:
            return self.families
        known = R['known_bases']
        classes = self.plugin_classes
        parent_of = {}  # union-find over "derives from": one family per connected set
        bases_of, children, library, not_plain = {}, {}, {}, set(self.escaped_classes())

        def root(class_id):
            while parent_of.setdefault(class_id, class_id) != class_id:
                parent_of[class_id] = parent_of[parent_of[class_id]]
                class_id = parent_of[class_id]
            return class_id

        for class_id, cls in classes.items():
            scope = self.node_scope[class_id]
            names = library[class_id] = set()
            bases_of[class_id] = []
            if cls.keywords or not all(self.is_identity_decorator(d, scope) for d in cls.decorator_list):
                not_plain.add(class_id)
            for base in cls.bases:
                plugin_bases = self.plugin_base_classes(base, scope)
                quals = None if plugin_bases is not None else self.known_library_base(base, scope)
                if plugin_bases is not None:
                    for parent in plugin_bases:
                        bases_of[class_id].append(id(parent))
                        children.setdefault(id(parent), []).append(class_id)
                        parent_of[root(class_id)] = root(id(parent))
                elif quals is not None:
                    for qual in quals:
                        names.update(known[qual])
                else:
                    not_plain.add(class_id)
        ended, pending = set(), list(not_plain)
        while pending:  # down: a class deriving from one not plain is not either
            class_id = pending.pop()
            if class_id not in ended:
                ended.add(class_id)
                pending += children.get(class_id, [])
        up = set()
        pending = list(ended)
        while pending:  # up: the classes they derive from
            class_id = pending.pop()
            if class_id not in up:
                up.add(class_id)
                pending += bases_of.get(class_id, [])
        family_names, family_library = {}, {}
        for class_id, names in library.items():
            family = root(class_id)
            family_names.setdefault(family, set()).update(names)
            family_library[family] = family_library.get(family, False) or bool(
                [b for b in classes[class_id].bases if self.plugin_base_classes(b, self.node_scope[class_id]) is None])
        library_names = {class_id: family_names[root(class_id)] for class_id in classes}
        has_library = {class_id: family_library[root(class_id)] for class_id in classes}
        self.families = (up, library_names, has_library, bases_of)
        return self.families

    def plugin_base_classes(self, base, scope):
        """The plugin ClassDefs a base names, when it can only be one of them; else None."""
        if not isinstance(base, ast.Name):
            return None
        meanings = self.meanings_when_bound(base.id, scope)
        if meanings and all(m.kind == 'class' for m in meanings):
            return [m.binding.node for m in meanings]
        return None

    def known_library_base(self, base, scope):
        quals = self.resolved_qualnames(base, scope)
        return quals if quals and all(q in R['known_bases'] for q in quals) else None

    def is_identity_decorator(self, decorator, scope):
        """A class decorator that returns the class it is given (`@dataclass`, `@total_ordering`)."""
        quals = self.resolved_qualnames(decorator.func if isinstance(decorator, ast.Call) else decorator, scope)
        return bool(quals) and all(q in R['identity_class_decorators'] for q in quals)

    def escaped_classes(self):
        """The ids of plugin classes handed out as values (stored, passed, returned, `C.mro()`):
        the code that receives one may derive a class from it (`typing.ABCMeta("X",
        (OpenerDirector, C), {})`). A class object is reached by its name, by a classmethod's
        `cls`, or as an attribute when it is defined in a class body (`Outer.Inner`)."""
        escaped = set()
        reads = self.name_reads()
        for name in {cls.name for cls in self.plugin_classes.values()}:
            for read in reads.get(name, []):
                if self.names_class_in_place(read):
                    continue
                for meaning in self.meanings_when_bound(name, self.node_scope[id(read)]):
                    if meaning.kind == 'class':
                        escaped.add(id(meaning.binding.node))
        nested, first_params = {}, set()
        for cls in self.plugin_classes.values():
            if isinstance(self.parent(cls), ast.ClassDef):
                nested.setdefault(cls.name, []).append(id(cls))
            for statement in cls.body:
                if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and self.is_classmethod(statement):
                    first_params.update(a.arg for a in (statement.args.posonlyargs + statement.args.args)[:1])
        for name in first_params:
            for read in reads.get(name, []):
                if not self.names_class_in_place(read):
                    owner = self.own_class(read, self.node_scope[id(read)])
                    if owner is not None:
                        escaped.add(id(owner))  # `return cls` (a subclass's too: its family ends)
        if nested:
            for node in self.order:
                if (type(node) is ast.Attribute and node.attr in nested and type(node.ctx) is ast.Load
                        and not self.names_class_in_place(node)):
                    escaped.update(nested[node.attr])
        return escaped

    def names_class_in_place(self, node):
        """A class object read where it stays what it is: called, a base, an attribute's object,
        checked (the builtin isinstance/issubclass, super(C, self)), caught, raised, a class pattern,
        a decorator, an annotation of a function, or compared by `is` (by `==` or `in` when no
        comparison method of the plugin keeps what it is handed)."""
        parent = self.parent(node)
        if isinstance(parent, ast.Call) and parent.func is node:
            return True
        if isinstance(parent, ast.Attribute):
            return parent.value is node and parent.attr != 'mro'  # C.mro() lists C itself
        if isinstance(parent, ast.ClassDef):
            return node in parent.bases or node in parent.decorator_list
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and node in parent.decorator_list:
            return True
        annotation = False
        while isinstance(parent, (ast.Tuple, ast.BinOp, ast.Subscript)):
            # `A | B` and `list[C]` of types only: a plugin object's `__ror__` or `__getitem__`
            # would be handed the class. A subscript only as a type hint.
            if isinstance(parent, ast.BinOp) and not (isinstance(parent.op, ast.BitOr) and all(
                    self.is_type_expression(side, self.node_scope[id(parent)]) for side in (parent.left, parent.right))):
                return False
            if isinstance(parent, ast.Subscript):
                if parent.value is node or not self.is_type_expression(parent.value, self.node_scope[id(parent)]):
                    return False
                annotation = True
            node, parent = parent, self.parent(parent)
        if isinstance(parent, (ast.arg, ast.FunctionDef, ast.AsyncFunctionDef)):
            return parent.annotation is node if isinstance(parent, ast.arg) else parent.returns is node
        if isinstance(parent, ast.AnnAssign):
            # A class body's annotation is handed back at run time (dataclasses.fields(C)[0].type).
            return parent.annotation is node and not isinstance(self.parent(parent), ast.ClassDef)
        if annotation:
            return False
        if isinstance(parent, ast.Call):
            func = parent.func
            return (isinstance(func, ast.Name) and func.id in ('isinstance', 'issubclass', 'super')
                    and len(parent.args) == 2 and not parent.keywords
                    and parent.args[0 if func.id == 'super' else 1] is node
                    and all(m.kind == 'builtin' for m in self.meanings(func.id, self.node_scope[id(parent)])))
        if isinstance(parent, ast.Compare):
            return all(isinstance(op, (ast.Is, ast.IsNot)) for op in parent.ops) or self.comparisons_are_pure()
        if isinstance(parent, ast.ExceptHandler):
            return parent.type is node
        return isinstance(parent, (ast.Raise, ast.MatchClass))

    def is_type_expression(self, node, scope):
        """None, a class, a builtin or an import (`typing.Optional`), a subscript or `|` of them:
        no plugin object whose methods an operator would call."""
        if isinstance(node, ast.Constant):
            return node.value is None
        if isinstance(node, ast.BinOp):
            return (isinstance(node.op, ast.BitOr) and self.is_type_expression(node.left, scope)
                    and self.is_type_expression(node.right, scope))
        if isinstance(node, ast.Subscript):
            return self.is_type_expression(node.value, scope)
        while isinstance(node, ast.Attribute):
            node = node.value
        if not isinstance(node, ast.Name):
            return False
        meanings = self.meanings_when_bound(node.id, scope)
        return bool(meanings) and all(m.kind in ('class', 'builtin', 'import', 'alias') for m in meanings)

    def trust_ended(self, cls):
        return id(cls) in self.class_families()[0] or not self.small_ancestry(cls)

    def small_ancestry(self, cls):
        """At most MAX_TRUSTED_ANCESTRY plugin classes in C's ancestry, counted with a bounded walk
        once per class (a base already too deep answers at once): no ordinary plugin has more,
        and the whole ancestry of each class of a chain of thousands was quadratic."""
        small, bases_of = self.ancestry_small, self.class_families()[3]
        key = id(cls)
        if key not in small:
            seen, pending, within = set(), [key], True
            while pending:
                current = pending.pop()
                if current in seen:
                    continue
                if small.get(current) is False or len(seen) == MAX_TRUSTED_ANCESTRY:
                    within = False
                    break
                seen.add(current)
                pending += bases_of.get(current, ())
            small[key] = within
        return small[key]

    def owns_name(self, cls, name):
        """Whether `name` read on an instance (or the class) of C's family is the plugin's own:
        the family's trust has not ended, no known library base of it holds the name, and either
        the family has no library base or a plugin class C derives from binds it by a statement
        certain to have run."""
        if self.trust_ended(cls) or name in self.class_families()[1][id(cls)]:
            return False
        if not self.class_families()[2][id(cls)]:
            # No library class in the family: every class object it has is one of the plugin's
            # statements over `object`, which holds no private name, so the name can only be
            # the plugin's own, wherever it is bound (`self._start` set in `__enter__`).
            return True
        certain = self.certainly_bound()
        return any(name in certain.get(id(c), ()) for c in self.plugin_ancestry(cls))
