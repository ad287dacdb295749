"""Call rules: openers and their modes, yaml loaders, CommandDump's resources, callables that must
be called directly, and the calls that turn literal strings into attribute names."""

import ast

from ..common import ABSENT, UNKNOWN, attribute_problem, call_argument, is_false, is_str_constant, literal_names
from ..registry import checks
from ..tables import (
    FILE_WRITING_METHODS, IDENTIFIER, NAME_TAKING_CALLS, OPEN_LIKE, OPEN_MODE_SHAPE, PATH_READ_MEMBERS,
    PLUGIN_HELPER, R, READABLE_DUNDER_ATTRIBUTES, READ_MODES, YAML_SAFE_LOADERS)


class CallsRules:
    def is_key_attrgetter(self, node, call):
        if not (isinstance(call, ast.Call) and call.func is node and call.args and not call.keywords):
            return False
        keyword = self.parent(call)
        if not (isinstance(keyword, ast.keyword) and keyword.arg == 'key'):
            return False
        for argument in call.args:
            if not is_str_constant(argument):
                return False
            for part in argument.value.split('.'):
                if not IDENTIFIER.match(part) or attribute_problem(part) or part in FILE_WRITING_METHODS:
                    return False
        return True

    def check_callable_used_directly(self, qual, node, called):
        """Openers (open, gzip.open, ...), logging.basicConfig, logging.Formatter and the calls that
        take names as data are judged at their call: as values (stored, returned, passed to partial
        or map) their mode, style or names would go unchecked."""
        if called:
            return
        if qual in OPEN_LIKE or qual == 'logging.basicConfig':
            self.report('open-write', '%s may only be called directly' % qual.replace('builtins.', ''), node)
        elif qual == 'logging.Formatter':
            if not self.names_a_type(node):
                self.report('dynamic-name', 'logging.Formatter may only be called directly (its style decides '
                            'how fields are read)', node)
        elif isinstance(node, ast.Name) and qual.rsplit('.', 1)[-1] in NAME_TAKING_CALLS:
            if not self.names_a_type(node):
                self.report('dynamic-name', '%s may only be called directly, with literal names' % node.id, node)

    def names_a_type(self, node):
        """A class named, not used: a base, isinstance/issubclass's class, an annotation."""
        parent = self.parent(node)
        while isinstance(parent, (ast.Tuple, ast.Subscript, ast.BinOp)):
            node, parent = parent, self.parent(parent)
        if isinstance(parent, ast.ClassDef):
            return node in parent.bases
        if isinstance(parent, ast.Call):
            return (isinstance(parent.func, ast.Name) and parent.func.id in ('isinstance', 'issubclass')
                    and len(parent.args) == 2 and parent.args[1] is node)
        # A class body's annotations are handed back at run time (dataclasses.fields()[0].type,
        # a NamedTuple's): there the class is a value, not only a name.
        return (isinstance(parent, ast.arg) or (isinstance(parent, ast.AnnAssign) and parent.annotation is node
                                                and not isinstance(self.parent(parent), ast.ClassDef))
                or (isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and parent.returns is node))

    # --- calls

    # --- calls: each rule judges every ast.Call, in this order (see registry.py).

    @checks(ast.Call)
    def check_opener_call(self, node, scope):
        """Openers and their modes, yaml's loaders, logging to a file, pathlib.Path used to write."""
        for qual in self.node_qualnames(node.func, scope):
            spec = OPEN_LIKE.get(qual)
            if spec is not None:
                self.check_open_mode(node, qual, spec)
                if call_argument(node, 99, 'opener') is not ABSENT:
                    # The opener's return value is used as a file descriptor: any of the framework's.
                    self.report('open-write', '%s() with opener= is not allowed: an opener can hand it any of '
                                "the framework's file descriptors" % qual.replace('builtins.', ''), node)
            if qual in ('yaml.load', 'yaml.load_all'):
                self.check_yaml_loader(node, scope, qual)
            if qual == 'logging.basicConfig' and call_argument(node, 99, 'filename') is not ABSENT:
                self.report('open-write', 'logging.basicConfig may not log to a file', node)
            if qual in ('pathlib.Path', 'pathlib.PosixPath'):
                parent = self.parent(node)
                if not (isinstance(parent, ast.Attribute) and parent.value is node and parent.attr in PATH_READ_MEMBERS):
                    self.report('open-write', 'Path(...) may only be used directly to read: Path(p).read_text(), '
                                'Path(p).open()', node)

    @checks(ast.Call)
    def check_type_call(self, node, scope):
        if self.is_builtin_call(node, 'type', scope):
            parent = self.parent(node)
            if len(node.args) != 1 or node.keywords:
                self.report('class-machinery', 'type() with three arguments builds a class from a namespace', node)
            elif not (isinstance(parent, ast.Compare) or (
                    isinstance(parent, ast.Attribute) and parent.attr in READABLE_DUNDER_ATTRIBUTES)):
                # The class of an object is a constructor: of a file object, a file writer.
                self.report('class-machinery', 'type(x) may only be compared or named (type(x).__name__)', node)
                self.report('open-write', 'type(x) hands out the class of x; of a file object, a file writer', node)

    @checks(ast.Call)
    def check_wrapper_call(self, node, scope):
        quals = self.node_qualnames(node.func, scope)
        if 'functools.wraps' in quals or 'functools.update_wrapper' in quals:
            self.check_wrapper(node, quals, scope)

    @checks(ast.Call)
    def check_command_call(self, node, scope):
        if PLUGIN_HELPER + '.CommandDump' in self.node_qualnames(node.func, scope):
            self.check_command_resources(node, scope)

    @checks(ast.Call)
    def check_name_taking(self, node, scope):
        # Keyed on what the callee resolves to (`from functools import wraps as keep`), and on
        # its spelling when it cannot be resolved.
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        quals = self.node_qualnames(func, scope)
        taking = {q.rsplit('.', 1)[-1] for q in quals if q.rsplit('.', 1)[-1] in NAME_TAKING_CALLS}
        if name in NAME_TAKING_CALLS:
            taking.add(name)
        for each in sorted(taking):
            self.check_name_taking_call(node, each, NAME_TAKING_CALLS[each])

    @checks(ast.Call)
    def check_call_keywords(self, node, scope):
        for keyword in node.keywords:
            if keyword.arg == 'style' and not is_str_constant(keyword.value, ('%', '$')):
                self.report('dynamic-name', "style= other than '%' or '$' formats log records with "
                            "str.format fields read from the record", keyword.value)
            if keyword.arg == 'capture_locals' and not is_false(keyword.value):
                self.report('dynamic-name', 'capture_locals hands out the frames\' local variables', keyword.value)

    @checks(ast.Call)
    def check_formatter_call(self, node, scope):
        if self.makes_formatter(node, self.node_qualnames(node.func, scope), scope):
            self.check_formatter_arguments(node)

    @checks(ast.Call)
    def check_decoded_call(self, node, scope):
        if isinstance(node.func, ast.Call) and self.is_decoder_call(node.func, scope):
            self.report('decoded-call', 'The result of a decoder must not be called', node.func)

    def check_command_resources(self, node, scope):
        """CommandDump runs the commands of its resource list in a shell: only a list the framework's
        resources give (get_resources(...)), never one the plugin writes."""
        resources = call_argument(node, 2, 'ResourceList')
        if not self.is_framework_resources(resources, scope, 0):
            self.report('dangerous-attribute', 'CommandDump runs its resource list as shell commands: pass '
                        'get_resources(...), not a list of your own', node)

    def is_framework_resources(self, node, scope, depth):
        if node in (ABSENT, UNKNOWN) or depth > 3:
            return False
        if isinstance(node, ast.Call):
            quals = self.qualnames(node.func, scope)
            return bool(quals) and all(q in R['resource_getters'] for q in quals)
        if isinstance(node, ast.Name):
            meanings = self.meanings(node.id, scope)
            if not (meanings and all(
                    m.kind == 'value' and m.binding is not None and m.binding.value is not None
                    and self.is_framework_resources(m.binding.value, m.scope, depth + 1) for m in meanings)):
                return False
            return self.only_handed_to_framework(node.id, {id(m.binding) for m in meanings})
        return False

    def only_handed_to_framework(self, name, bindings):
        """Every read of these bindings, in any scope, is written out as an argument of a call to
        plugin_helper: an alias, a method call, a `with`, a loop or a function of the plugin could
        change the list, through any name and from any scope."""
        for read in self.name_reads().get(name, ()):
            scope = self.node_scope[id(read)]
            if not any(id(m.binding) in bindings for m in self.meanings(name, scope)):
                continue
            call = self.parent(read)
            if isinstance(call, ast.keyword):
                call = self.parent(call)
            elif not (isinstance(call, ast.Call) and read in call.args):
                return False
            quals = self.qualnames(call.func, scope) if isinstance(call, ast.Call) else []
            if not quals or not all(q.startswith(PLUGIN_HELPER + '.') for q in quals):
                return False
        return True

    def check_open_mode(self, node, qual, position):
        mode = call_argument(node, position, 'mode')
        if mode is ABSENT:
            return
        if mode is UNKNOWN or not is_str_constant(mode, READ_MODES):
            self.report('open-write', "%s() must use a literal read mode ('r', 'rb' or 'rt')"
                        % qual.replace('builtins.', ''), node)

    def check_method_open(self, node, parent):
        """`.open()` of an object of unknown type: any mode-shaped argument must be a read mode."""
        if not (isinstance(parent, ast.Call) and parent.func is node):
            self.report('open-write', '.open() must be called directly, with a literal read mode', node)
            return
        mode = call_argument(parent, 99, 'mode')
        candidates = [mode, call_argument(parent, 0, ''), call_argument(parent, 1, '')]
        if mode is UNKNOWN:
            self.report('open-write', '.open() must be called with a literal read mode', node)
            return
        for index, candidate in enumerate(candidates):
            if candidate in (ABSENT, UNKNOWN):
                continue
            literal = candidate.value if is_str_constant(candidate) else None
            if (literal is None and index == 0) or (
                    literal is not None and OPEN_MODE_SHAPE.match(literal) and literal not in READ_MODES):
                self.report('open-write', ".open() must use a literal read mode ('r', 'rb' or 'rt')", node)
                return

    def check_yaml_loader(self, node, scope, qual):
        loader = call_argument(node, 1, 'Loader')
        quals = self.qualnames(loader, scope) if loader not in (ABSENT, UNKNOWN) else []
        if not quals or not all(q in YAML_SAFE_LOADERS for q in quals):
            self.report('unsafe-yaml-load', '%s without Loader=yaml.SafeLoader is not allowed; use '
                        'yaml.safe_load' % qual, node)

    def check_name_taking_call(self, node, name, spec):
        """namedtuple('P', 'x y'), Enum('E', 'A B'), make_dataclass(...): names must be literal identifiers."""
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            self.report('dynamic-name', '%s() arguments must be written out' % name, node)
            return
        if spec.get('functional_from') is not None and len(node.args) < spec['functional_from'] and not any(
                k.arg in spec.get('name_keywords', ()) for k in node.keywords):
            return  # Enum(value): a lookup, not the functional API
        if spec.get('refuse'):
            self.report('dynamic-name', '%s: %s' % (name, spec['refuse']), node)
            return
        if 'max_positional' in spec and len(node.args) > spec['max_positional']:
            self.report('dynamic-name', '%s() takes names as data here; not allowed' % name,
                        node.args[spec['max_positional']])
        for keyword in node.keywords:
            if keyword.arg in spec.get('refused_keywords', ()):
                self.report('dynamic-name', '%s(%s=...) takes names or code as data; not allowed'
                            % (name, keyword.arg), keyword.value)
        targets = [a for i, a in enumerate(node.args) if i in spec.get('name_positions', ())]
        targets += [k.value for k in node.keywords if k.arg in spec.get('name_keywords', ())]
        for target in targets:
            if not literal_names(target):
                self.report('dynamic-name', '%s() needs literal identifiers as names' % name, target)
