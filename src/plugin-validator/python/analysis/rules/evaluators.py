"""Door 4: the stdlib evaluators fed by strings (singledispatch's register, functools' wrappers,
str.format templates and string annotations that typing may evaluate)."""

import ast
import string

from ..common import Findings, attribute_problem, is_dunder, is_private, is_str_constant
from ..registry import RULES
from ..scopes import SCOPE_NODES

try:  # CPython's own field-name grammar for str.format templates.
    from _string import formatter_field_name_split
except ImportError:  # pragma: no cover - CPython always has it
    formatter_field_name_split = None


class EvaluatorsRules:
    def check_register(self, node, scope, parent):
        """Door 4: singledispatch's register(func), register(func, None) and register(cls=func) read
        the class from func's annotations with typing.get_type_hints, which evaluates strings as
        code (a '*x' string is compiled as `(*x,)[0]`). So `.register`, on any object, is only
        called directly with a class first: `f.register(C)` or `f.register(C, function)`."""
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.report('dynamic-name', '@register without a class reads the type from annotations, which '
                        'typing evaluates as code: write @f.register(cls)', node)
            return
        if not (isinstance(parent, ast.Call) and parent.func is node):
            self.report('dynamic-name', '.register may only be called directly, with a class first: as a value, '
                        'register(function) reads the type from annotations, which typing evaluates as code', node)
            return
        args = parent.args
        if (parent.keywords or not 1 <= len(args) <= 2 or any(isinstance(a, ast.Starred) for a in args)
                or not self.is_class_expression(args[0], scope)):
            self.report('dynamic-name', 'register() needs a class first, written out: register(function), '
                        'register(function, None) or register(cls=function) read the type from annotations, '
                        'which typing evaluates as code; write register(cls, function)', parent)

    def is_class_expression(self, node, scope):
        """A class name (or `A | B` of them), as register() takes it."""
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return self.is_class_expression(node.left, scope) and self.is_class_expression(node.right, scope)
        if isinstance(node, ast.Attribute):
            return bool(self.resolved_qualnames(node, scope))
        return self.is_class_name(node, scope)

    def is_class_name(self, node, scope):
        if not isinstance(node, ast.Name):
            return False
        meanings = self.meanings_when_bound(node.id, scope)
        return bool(meanings) and all(m.kind in ('class', 'builtin', 'import') for m in meanings)

    def check_wrapper(self, node, quals, scope):
        """update_wrapper copies the wrapped object's __dict__ into the wrapper: only onto a function
        the plugin defines (`@functools.wraps(f)` on a def), never onto an object of the framework."""
        parent = self.parent(node)
        if 'functools.wraps' in quals:
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and node in parent.decorator_list:
                return
            self.report('module-tampering', 'functools.wraps(f) only as a decorator of a def', node)
            return
        target = node.args[0] if node.args else None
        meanings = self.meanings(target.id, scope) if isinstance(target, ast.Name) else []
        if not meanings or not all(m.kind == 'def' for m in meanings):
            self.report('module-tampering', 'functools.update_wrapper only onto a function the plugin defines', node)

    # --- format templates

    def check_format(self, node, scope, parent):
        called = isinstance(parent, ast.Call) and parent.func is node
        receiver = node.value
        if isinstance(receiver, ast.Name) and receiver.id == 'str' and all(
                m.kind == 'builtin' for m in self.meanings('str', scope)):
            receiver = parent.args[0] if called and parent.args else None
        templates = self.template_texts(receiver, scope) if receiver is not None else None
        if templates is None:
            owner = self.own_class(node.value, scope)
            if owner is not None and self.owns_name(owner, node.attr):
                return  # the plugin's own method of that name (not str.format of a str subclass)
            self.report('format-string', '.%s() is only allowed on a string literal, whose fields are checked'
                        % node.attr, node)
            return
        for problem in self.problems_of_templates(templates):
            self.report(problem[0], 'Format field: %s' % problem[1], node)

    def problems_of_templates(self, templates):
        if isinstance(templates, tuple):
            # The cached texts of a class constant: the same problems at every read of it.
            found = self.template_problems_cache.get(id(templates))
            if found is None:
                found = self.template_problems_cache[id(templates)] = [
                    problem for template in templates for problem in self.template_problems(template, 0)]
            return found
        return [problem for template in templates for problem in self.template_problems(template, 0)]

    def template_texts(self, node, scope):
        """The literal templates `node` can be (a literal, a module constant, a class constant), or None."""
        if isinstance(node, ast.Attribute):
            return self.class_constant_texts(node, scope)
        template = self.template_text(node, scope)
        return None if template is None else [template]

    def class_constant_texts(self, node, scope):
        """`self.ROW` / `C.ROW` of a plugin class with no outside base, where every plugin class
        binding ROW binds it once, to a literal, with a plain assignment (an annotated one is a
        dataclass field, set per instance), and nothing anywhere stores or deletes an attribute
        of that name (`obj.ROW = ...`, setattr with that literal): each of those literals."""
        owner = self.own_class(node.value, scope)
        if owner is None and isinstance(node.value, ast.Name):
            meanings = self.meanings_when_bound(node.value.id, scope)
            if meanings and all(m.kind == 'class' and m.binding.node is meanings[0].binding.node for m in meanings):
                owner = meanings[0].binding.node
        name = node.attr
        if (owner is None or self.trust_ended(owner) or self.class_families()[2][id(owner)]
                or not self.only_plugin_bases(owner) or not self.binds_in_plugin_ancestry(owner, name)):
            return None  # a library class of its family (`logging.Formatter`'s datefmt) may set the name
        return self.constant_texts_named(name)

    def constant_texts_named(self, name):
        """The literals every plugin class binds `name` to (see class_constant_texts), or None;
        once per name, as a tuple the format check keys its findings on: a read per class of
        a thousand classes would loop over every class a thousand times."""
        if name in self.constant_texts_cache:
            return self.constant_texts_cache[name]
        texts = []
        for cls in self.plugin_classes.values():
            bindings = self.scope_of[id(cls)].bindings.get(name, [])
            if not bindings:
                continue
            binding = bindings[0]
            statement = self.parent(binding.node)
            if (len(bindings) != 1 or binding.kind != 'value' or not isinstance(statement, ast.Assign)
                    or self.parent(statement) is not cls or not is_str_constant(binding.value)):
                texts = None
                break
            texts.append(binding.value.value)
        if texts is not None and name in self.attributes_set_anywhere():
            texts = None
        result = self.constant_texts_cache[name] = None if texts is None else tuple(texts)
        return result

    def template_text(self, node, scope):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            # A module constant bound once, unconditionally, to a literal (unbound, it is a NameError).
            meanings = [m for m in self.meanings(node.id, scope) if m.kind != 'undefined']
            bindings = self.global_bindings(node.id)
            # ...and the name read here is that binding, not a local of the same name.
            if (len(meanings) == 1 and meanings[0].kind == 'value' and len(bindings) == 1
                    and meanings[0].binding is bindings[0][1]):
                binding = bindings[0][1]
                if (bindings[0][0] is self.module_scope and is_str_constant(binding.value)
                        and self.parent(self.parent(binding.node)) is self.tree):
                    return binding.value.value
        return None

    def template_problems(self, template, depth):
        """CPython's own reading of the fields (string.Formatter().parse, then the field-name split)."""
        problems = []
        try:
            parsed = list(string.Formatter().parse(template))
        except ValueError:
            return [('format-string', 'template is not valid')]
        for _literal, field, spec, _conversion in parsed:
            if field is None:
                continue
            try:
                _first, rest = formatter_field_name_split(field)
                rest = list(rest)
            except ValueError:
                return [('format-string', 'field %r is not valid' % field)]
            for is_attribute, key in rest:
                if is_attribute:
                    problem = attribute_problem(key)
                    if problem:
                        problems.append(problem)
                elif isinstance(key, str) and (is_dunder(key) or is_private(key)):
                    problems.append(('format-string', 'index %r is not allowed' % key))
            if spec and depth < 2:
                problems += self.template_problems(spec, depth + 1)
            elif spec and '{' in spec:
                problems.append(('format-string', 'fields nested too deeply'))
        return problems

    # --- annotations: a string annotation is code that typing may evaluate

    def check_annotation(self, annotation, depth=0):
        for child in ast.walk(annotation):
            if isinstance(child, ast.Constant) and isinstance(child.value, str):
                self.check_string_annotation(child, depth)

    def check_string_annotation(self, constant, depth):
        # typing.ForwardRef compiles '*x' as `(*x,)[0]` (an unpacked TypeVarTuple), which parses.
        text = constant.value
        text = '(%s,)[0]' % text if text.startswith('*') else text.strip()
        try:
            expression = ast.parse(text, mode='eval')
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return  # never evaluable, so never code
        if depth > 3 or any(isinstance(n, SCOPE_NODES + (ast.NamedExpr,)) for n in ast.walk(expression)):
            self.report('dynamic-name', 'String annotation is too complex to check', constant)
            return
        # typing evaluates it against the module's globals: checked there, reported at the string.
        sub = type(self).__new__(type(self))
        sub.__dict__.update(self.__dict__)
        sub.findings = Findings()
        sub.order = []
        for node in ast.walk(expression):
            self.parents.setdefault(id(node), None)
            for child in ast.iter_child_nodes(node):
                self.parents[id(child)] = node
            self.node_scope[id(node)] = self.module_scope
            sub.order.append(node)
        for node in sub.order:
            if not isinstance(node, ast.Constant):
                for rule in RULES.get(type(node), ()):
                    rule(sub, node, self.module_scope)
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                sub.check_string_annotation(node, depth + 1)
        for _line, _column, rule, message in sub.findings.items:
            self.report(rule, 'In a string annotation: ' + message, constant)
