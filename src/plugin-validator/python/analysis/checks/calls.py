"""Calls of library callables: the keywords the table allows, `super()` without arguments, and the
framework's CommandDump only with a resource list from get_resources(...) that nothing else reads."""

import ast

from ..registry import checks
from ..table import DECODERS
from ..types import library_entry

RESOURCES = frozenset(['T:owtf.Resources'])


def callee_name(atom):
    return atom[2:].replace(':static', '').replace('|', '.').replace('builtins.', '')


class CallsRules:
    @checks(ast.Call)
    def check_call(self, node, scope):
        callee = self.type_of(node.func)
        if 'N' in callee and any(isinstance(a, ast.Call) and self.type_of(a.func) & DECODERS for a in (
                [a.value if isinstance(a, ast.Starred) else a for a in node.args] + [k.value for k in node.keywords])):
            self.report('decoded-call', 'A decoded value is handed to a name the plugin never binds (only globals '
                        'injected at run time could supply it): call a function of the plugin', node)
        for atom in (callee if len(callee) == 1 else sorted(callee)):
            if atom == 'F:builtins.super':
                self.check_super(node, scope)
                continue
            entry = library_entry(atom)
            if entry is None or entry.get('exception'):
                continue
            if entry.get('decorator'):
                if not self.is_decorator(node):
                    self.report('library-call', '%s is used only as a decorator: write @%s above the def or class'
                                % (callee_name(atom), callee_name(atom)), node)
                continue
            if node.keywords:
                self.check_keywords(node, atom, entry)
            resources = entry.get('resources')
            for position, need in (resources.items() if resources else ()):
                if need == 'requires':
                    self.check_required_resources(node, atom, int(position))

    def check_keywords(self, node, atom, entry):
        allowed = entry.get('kw', [])
        if allowed == '*':
            return
        for keyword in node.keywords:
            if keyword.arg is None:
                self.report('library-call', '**arguments are outside the profile for %s: pass each keyword by name'
                            % callee_name(atom), keyword.value)
            elif keyword.arg not in allowed:
                choices = ('it allows %s' % ', '.join(allowed)) if allowed else 'pass its arguments by position'
                self.report('library-call', "Keyword '%s' is outside the profile for %s: %s"
                            % (keyword.arg, callee_name(atom), choices), keyword.value)

    def check_super(self, node, scope):
        if node.args or node.keywords:
            self.report('super-call', 'super() takes no arguments in the profile: write super().method(...)', node)
        elif scope.kind != 'function' or scope.method_of is None:
            self.report('super-call', 'super() is allowed only directly in a method of a class', node)

    def check_required_resources(self, node, atom, position):
        arguments = node.args
        starred = any(isinstance(a, ast.Starred) for a in arguments[:position + 1])
        argument = arguments[position] if len(arguments) > position and not starred else None
        if argument is None or self.type_of(argument) != RESOURCES or not (
                isinstance(argument, ast.Call) or isinstance(argument, ast.Name) and self.bound_to_calls(argument)):
            self.report('library-call', '%s runs the commands of its resource list: pass it the list '
                        'get_resources("...") returns, by position, or a name bound only to such a call'
                        % callee_name(atom), argument or node)
        elif isinstance(argument, ast.Name):
            self.required_resources.append(argument)

    def bound_to_calls(self, name):
        for meaning in self.meanings(name.id, self.node_scope[id(name)]):
            if meaning.kind != 'value':
                return False
            bindings = [meaning.binding] if meaning.binding else meaning.scope.bindings.get(name.id, [])
            if not all(b.kind == 'del' or isinstance(b.value, ast.Call) for b in bindings):
                return False
        return True

    def check_resources_unchanged(self):
        """After the walk: a resource list handed to CommandDump is read nowhere else (a read can change it)."""
        for argument in self.required_resources:
            scope = self.node_scope[id(argument)]
            if any((argument.id, id(m.scope)) in self.resources_read for m in self.meanings(argument.id, scope)):
                self.report('library-call', "The resource list '%s' is handed to CommandDump, which runs its commands: "
                            'use it for nothing else (get a second list for other uses)' % argument.id, argument)

    def is_decorator(self, node):
        parent = self.parent(node)
        return isinstance(parent, (ast.FunctionDef, ast.ClassDef)) and id(node) in self.positions(parent.decorator_list)
