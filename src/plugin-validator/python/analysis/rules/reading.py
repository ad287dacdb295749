"""Door 5: what a plugin may read.

A file or URL is read by name through the callables of tables.json's `reading` table. Each name
must be proven harmless on the tree: a constant (or constants joined by `+` or an f-string) that
is an http(s) URL, a relative path inside the working directory, or an absolute path under
/usr/share/; a value the framework hands the plugin (`PluginInfo["key"]`), when nothing in the
plugin can change what PluginInfo holds; a local bound only to such values; or a parameter of a
plugin function whose every call passes one. Anything else (a value the analyser cannot follow)
is refused: `file-read`."""

import ast

from ..common import ABSENT, UNKNOWN, call_argument, is_str_constant, parameter_default, parameter_keyword
from ..registry import checks
from ..tables import (
    ABSOLUTE_READ_ROOTS, FILE_OBJECT_MAKERS, MAX_READ_DEPTH, READ_CALLABLES, READ_METHODS,
    REFUSED_FIRST_COMPONENTS, URL_PREFIXES, WHAT_MAY_BE_READ)


def read_argument(call, position, keyword):
    """The argument a call passes at `position` or as `keyword`: ABSENT, UNKNOWN (it may come
    from *args or **kwargs), or the node. A positional argument before any *args is certain."""
    for index, argument in enumerate(call.args):
        if isinstance(argument, ast.Starred):
            return UNKNOWN
        if index == position:
            return argument
    for kw in call.keywords:
        if kw.arg == keyword:
            return kw.value
    if any(kw.arg is None for kw in call.keywords):
        return UNKNOWN
    return ABSENT


def path_text_problem(text):
    """Why a constant file name or URL is not harmless, or None."""
    if '\x00' in text:
        return 'it contains a NUL character'
    parts = text.split('/')
    if '..' in parts:
        return "it climbs out of its directory with '..'"
    if text.lower().startswith(URL_PREFIXES):
        return None
    if ':' in text:
        # urllib strips spaces and control characters before the scheme, and `file:`, `FILE:`,
        # `local_file:`... all read files: no colon at all outside an http(s) URL.
        return 'it has a colon: a URL scheme other than http(s) (file: reads local files)'
    if text.startswith('~'):
        return "it starts with '~'"
    if text.startswith('/'):
        normal = '/' + '/'.join(part for part in parts if part not in ('', '.')) + '/'
        if not normal.startswith(ABSOLUTE_READ_ROOTS):
            return 'it is an absolute path outside %s' % ', '.join(ABSOLUTE_READ_ROOTS)
        return None
    first = next((part for part in parts if part not in ('', '.')), '')
    if first in REFUSED_FIRST_COMPONENTS:
        return "it starts with '%s', a system directory when the working directory is /" % first
    return None


def string_parts(node):
    """A str constant, `+` of strings or an f-string as its parts: (text, None) for a constant
    part, (None, node) for any other; None when `node` is not built that way."""
    if isinstance(node, ast.Constant):
        return [(node.value, None)] if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                parts.append((value.value, None))
            elif (isinstance(value, ast.FormattedValue) and value.conversion == -1 and value.format_spec is None
                  and isinstance(value.value, ast.Constant) and isinstance(value.value.value, str)):
                parts.append((value.value.value, None))
            elif isinstance(value, ast.FormattedValue) and value.conversion == -1 and value.format_spec is None:
                parts.append((None, value.value))
            else:
                parts.append((None, value))
        return parts
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = string_parts(node.left), string_parts(node.right)
        if left is None and right is None:
            return None
        return (left or [(None, node.left)]) + (right or [(None, node.right)])
    return None


class ReadingRules:
    @checks(ast.Call)
    def check_reading_call(self, node, scope):
        quals = self.node_qualnames(node.func, scope)
        for qual in quals:
            spec = READ_CALLABLES.get(qual)
            if spec is not None:
                self.check_read_arguments(node, spec, qual.replace('builtins.', ''))
                return
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in READ_METHODS and not quals:
            receiver = func.value
            if isinstance(receiver, ast.Call) and any(
                    q in ('pathlib.Path', 'pathlib.PosixPath') for q in self.qualnames(receiver.func, scope)):
                return  # Path(p).open(mode): p is checked at Path(p)
            self.check_read_arguments(node, READ_METHODS[func.attr], '.' + func.attr)

    def check_read_arguments(self, call, spec, what):
        position, keywords = spec[0], spec[1:]
        arguments = []
        if position == -1:
            for argument in call.args:
                arguments.append(UNKNOWN if isinstance(argument, ast.Starred) else argument)
            arguments += [UNKNOWN for keyword in call.keywords if keyword.arg is None]
        else:
            arguments.append(read_argument(call, position, keywords[0] if keywords else ''))
            arguments += [read_argument(call, None, keyword) for keyword in keywords[1:]]
        for argument in arguments:
            if argument is ABSENT:
                continue
            if argument is UNKNOWN:
                self.report('file-read', '%s() with *args or **kwargs: the file or URL it reads cannot be known; %s'
                            % (what, WHAT_MAY_BE_READ), call)
                continue
            problem = self.read_problem(argument, self.node_scope.get(id(argument)), 0, set())
            if problem:
                self.report('file-read', '%s() may read a file or URL the analyser cannot prove harmless: %s; %s'
                            % (what, problem, WHAT_MAY_BE_READ), argument)

    def read_problem(self, node, scope, depth, seen):
        """Why the file name or URL `node` may be harmful, or None when it is proven harmless."""
        if depth > MAX_READ_DEPTH or scope is None:
            self.read_cuts += 1
            return 'it is built too indirectly to follow'
        text = self.folded_text(node, scope, depth)
        if text is not None:
            return path_text_problem(text)
        parts = string_parts(node)
        if parts is not None:
            return self.parts_problem(parts, scope, depth, seen)
        if isinstance(node, ast.Name):
            return self.name_read_problem(node, scope, depth, seen)
        if self.framework_value(node, scope, depth, seen):
            return None
        if isinstance(node, ast.Call):
            if any(q in FILE_OBJECT_MAKERS for q in self.qualnames(node.func, scope)):
                return None  # a file object or a Request: its own name is checked where it is made
            if isinstance(node.func, ast.Attribute) and node.func.attr == 'open':
                return None  # a file object; `.open(name)` is checked itself
        if (isinstance(node, ast.Attribute) and node.attr == 'name' and isinstance(node.value, ast.Call)
                and self.read_problem(node.value, scope, depth + 1, seen) is None):
            return None  # open(p).name is p, checked at open(p)
        if 'plugin-info-changed' in seen:
            return ('PluginInfo may be changed or made by the plugin (run() called by the plugin, a store into a '
                    "container, |=, update(), setdefault(), PluginInfo handed to a function), so its values are not "
                    "the framework's")
        return 'it is a value whose text the analyser cannot know'

    def folded_text(self, node, scope, depth):
        """The one text a str constant, `+` or f-string of them, or a name bound only to such
        values stands for; None when it may be anything else."""
        if depth > MAX_READ_DEPTH or scope is None:
            self.read_cuts += 1
            return None
        if isinstance(node, ast.Name):
            texts = set()
            for meaning in self.meanings_when_bound(node.id, scope):
                value = meaning.binding.value if meaning.binding is not None else None
                if meaning.kind not in ('value', 'alias') or value is None:
                    return None
                text = self.folded_text(value, self.node_scope.get(id(value)), depth + 1)
                if text is None:
                    return None
                texts.add(text)
            return texts.pop() if len(texts) == 1 else None
        parts = string_parts(node)
        if parts is None:
            return None
        folded = []
        for text, part in parts:
            if text is None:
                text = self.folded_text(part, scope, depth + 1)
                if text is None:
                    return None
            folded.append(text)
        return ''.join(folded)

    def parts_problem(self, parts, scope, depth, seen):
        if all(text is not None for text, _ in parts):
            return path_text_problem(''.join(text for text, _ in parts))
        head = ''
        for text, _ in parts:
            if text is None:
                break
            head += text
        if head.lower().startswith(URL_PREFIXES) and '\x00' not in head:
            return None  # the scheme is fixed: http(s), whatever follows
        first_text, first_node = parts[0]
        if first_node is None:
            return "it starts with the constant %r, neither an http(s) URL nor followed only by constants" % head
        if any(text is None for text, _ in parts[1:]):
            return 'it joins several values the analyser cannot know'
        tail = ''.join(text for text, _ in parts[1:])
        if '/' in tail or ':' in tail or '\x00' in tail:
            return "it appends %r to a value: only a suffix without '/' or ':' (like '.gz') may follow one" % tail
        return self.read_problem(first_node, scope, depth + 1, seen)

    def name_read_problem(self, node, scope, depth, seen):
        # Unbound, a name raises NameError instead of naming a file.
        meanings = self.meanings_when_bound(node.id, scope)
        if not meanings:
            return "'%s' may hold any value" % node.id
        for meaning in meanings:
            binding = meaning.binding
            if meaning.kind == 'param':
                problem = self.param_read_problem(binding, node.id, depth, seen)
            elif meaning.kind in ('value', 'alias') and binding is not None and binding.value is not None:
                value = binding.value
                problem = self.read_problem(value, self.node_scope.get(id(value)), depth + 1, seen)
            elif meaning.kind == 'value' and binding is not None and self.with_file_object(binding.node, depth, seen):
                problem = None
            elif meaning.kind == 'value' and binding is not None and self.literal_loop_target(binding.node):
                loop = self.parent(binding.node)
                elements = self.literal_elements(loop.iter, self.node_scope.get(id(loop.iter)), depth + 1)
                problem = next((found for found in (
                    self.read_problem(element, self.node_scope.get(id(element)), depth + 1, seen)
                    for element in elements) if found), None)
            else:
                problem = "'%s' may hold a value the analyser cannot follow" % node.id
            if problem:
                return problem
        return None

    def literal_loop_target(self, target):
        """`for name in ("a.txt", "b.txt")` (a statement or a comprehension) over a literal list,
        tuple or set, or over a name bound only to tuples: the name is one of their elements."""
        loop = self.parent(target)
        return (isinstance(loop, (ast.For, ast.AsyncFor, ast.comprehension)) and loop.target is target
                and self.literal_elements(loop.iter, self.node_scope.get(id(loop.iter)), 0) is not None)

    def literal_elements(self, node, scope, depth):
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return None if any(isinstance(e, ast.Starred) for e in node.elts) else node.elts
        if isinstance(node, ast.Name) and scope is not None and depth <= MAX_READ_DEPTH:
            # Only tuples through a name: a list or set it names may have been changed since.
            elements = []
            meanings = self.meanings_when_bound(node.id, scope)
            for meaning in meanings:
                value = meaning.binding.value if meaning.binding is not None else None
                found = None if not isinstance(value, ast.Tuple) or meaning.kind not in ('value', 'alias') else (
                    self.literal_elements(value, self.node_scope.get(id(value)), depth + 1))
                if found is None:
                    return None
                elements += found
            return elements if meanings else None
        return None

    def with_file_object(self, target, depth, seen):
        """`with open(p) as target`: the target is a file object, p checked at open(p)."""
        item = self.parent(target)
        if not (isinstance(item, ast.withitem) and item.optional_vars is target):
            return False
        made = item.context_expr
        return isinstance(made, ast.Call) and self.read_problem(
            made, self.node_scope.get(id(made)), depth + 1, seen) is None

    def param_read_problem(self, binding, name, depth, seen):
        """Why a parameter may name a harmful file, from every call of its function; kept per
        parameter when no cycle or depth limit cut the search short (a helper called from
        thousands of places, with hundreds of reads, was quadratic)."""
        key = (id(binding.node), name)
        if key in self.param_read_cache:
            return self.param_read_cache[key]
        if key in seen:
            self.read_cuts += 1
            return None  # a recursive call passes on what the outer calls passed
        seen.add(key)
        cuts = self.read_cuts
        problem = self.find_param_read_problem(binding, name, depth, seen)
        if self.read_cuts == cuts:
            self.param_read_cache[key] = problem
        return problem

    def find_param_read_problem(self, binding, name, depth, seen):
        function = binding.node
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or binding.index is None or binding.index < 0:
            return "'%s' is a parameter the analyser cannot follow" % name
        if function.decorator_list:
            return "'%s' is a parameter of a decorated function" % name
        if function is self.run_function():
            return "'%s' is the framework's PluginInfo itself, not one of its values" % name
        outer = self.node_scope.get(id(function))
        if outer is None or outer.kind == 'class':
            return "'%s' is a parameter of a method: its callers cannot be followed" % name
        default = parameter_default(function, binding.index)
        if default is not None:
            problem = self.read_problem(default, self.node_scope.get(id(default)), depth + 1, seen)
            if problem:
                return problem
        keyword = parameter_keyword(function, binding.index, name)
        for call, read_scope in self.uses_of(function):
            if call is None:
                return "'%s' is a parameter of %s(), which is passed around, not only called" % (name, function.name)
            argument = call_argument(call, binding.index, keyword)
            if argument is UNKNOWN:
                return "%s() is called with *args or **kwargs" % function.name
            if argument is ABSENT:
                continue
            problem = self.read_problem(argument, read_scope, depth + 1, seen)
            if problem:
                return problem
        return None

    def run_function(self):
        bindings = self.module_scope.bindings.get('run', [])
        if len(bindings) == 1 and bindings[0].kind == 'def' and isinstance(bindings[0].node, ast.FunctionDef):
            function = bindings[0].node
            if not function.decorator_list and (function.args.posonlyargs + function.args.args):
                return function
        return None

    def framework_value(self, node, scope, depth, seen):
        """`PluginInfo["key"]`, `PluginInfo.get("key", default)` and chains of them, read from run()'s
        parameter when nothing in the plugin can change what it holds."""
        current = node
        defaults = []
        while True:
            if (isinstance(current, ast.Subscript) and isinstance(current.ctx, ast.Load)
                    and is_str_constant(current.slice)):
                current = current.value
            elif (isinstance(current, ast.Call) and isinstance(current.func, ast.Attribute)
                  and current.func.attr == 'get' and not current.keywords and 1 <= len(current.args) <= 2
                  and is_str_constant(current.args[0])):
                defaults += current.args[1:]
                current = current.func.value
            else:
                break
        if current is node or not isinstance(current, ast.Name) or not self.is_plugin_info(current, scope):
            return False
        if not self.plugin_info_unchanged():
            seen.add('plugin-info-changed')
            return False
        return all(self.read_problem(d, self.node_scope.get(id(d)), depth + 1, seen) is None for d in defaults)

    def is_plugin_info(self, name, scope):
        run = self.run_function()
        meanings = self.meanings(name.id, scope) if run is not None else []
        return bool(meanings) and all(
            m.kind == 'param' and m.binding.node is run and m.binding.index == 0 for m in meanings)
