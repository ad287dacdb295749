"""Door 5's facts: PluginInfo left unchanged, fresh containers, Request attributes, and the
reading callables used only by a direct call."""

import ast

from ..registry import checks
from ..tables import (
    BARE_PLUGIN_INFO_CALLS, CONTAINER_MUTATORS, FRESH_CONTAINER_CALLS, FRESH_CONTAINER_TYPES, NOT_SUBCLASSED,
    OPEN_LIKE, PLUGIN_HELPER, READ_CALLABLES, REDIRECTING_ATTRIBUTES, WHAT_MAY_BE_READ)


class ReadingFactsRules:
    def plugin_info_unchanged(self):
        """Nothing in the plugin can change what PluginInfo holds: the plugin never calls run()
        itself; each read of it is a chain of reads, or handed to the framework's helper, len() or
        str(); and no store into a container,
        no `|=` and no update()/setdefault()/operator.setitem() may reach any object but a fresh
        container of the plugin's own (`d = {}`)."""
        if getattr(self, 'plugin_info_verdict', None) is None:
            self.plugin_info_verdict = self.find_plugin_info_unchanged()
        return self.plugin_info_verdict

    def find_plugin_info_unchanged(self):
        run = self.run_function()
        if run is None:
            return False
        for read in self.name_reads().get(run.name, []):
            # run() called by the plugin itself: its PluginInfo is then whatever the plugin passes.
            if any(m.kind == 'def' and m.binding.node is run for m in self.meanings(read.id, self.node_scope[id(read)])):
                return False
        name = (run.args.posonlyargs + run.args.args)[0].arg
        for read in self.name_reads().get(name, []):
            scope = self.node_scope[id(read)]
            if not self.is_plugin_info(read, scope):
                continue
            current = read
            while True:
                parent = self.parent(current)
                if isinstance(parent, ast.Subscript) and parent.value is current:
                    if not isinstance(parent.ctx, ast.Load):
                        return False
                    current = parent
                elif (isinstance(parent, ast.Attribute) and parent.value is current and parent.attr == 'get'
                      and isinstance(self.parent(parent), ast.Call) and self.parent(parent).func is parent):
                    current = self.parent(parent)
                else:
                    break
            parent = self.parent(current)
            if current is read:
                if isinstance(parent, ast.Compare):
                    continue
                if not (isinstance(parent, ast.Call) and read in parent.args and all(
                        q.startswith(PLUGIN_HELPER + '.') or q in BARE_PLUGIN_INFO_CALLS
                        for q in self.qualnames(parent.func, scope) or ['?'])):
                    return False
            elif isinstance(parent, ast.Attribute) and parent.value is current and parent.attr in CONTAINER_MUTATORS:
                return False
        for node in self.order:
            kind = type(node)
            if kind is ast.Subscript and not isinstance(node.ctx, ast.Load):
                if not self.fresh_container(node.value):
                    return False
            elif kind is ast.AugAssign and isinstance(node.op, ast.BitOr) and not self.fresh_container(node.target):
                return False  # `d |= {...}` updates a dict in place
            elif kind is ast.Attribute and node.attr in CONTAINER_MUTATORS and isinstance(node.ctx, ast.Load):
                if not self.fresh_container(node.value):
                    return False
            elif kind is ast.Name and isinstance(node.ctx, ast.Load) and any(
                    q.startswith('operator.') and q.split('.')[-1] in CONTAINER_MUTATORS
                    for q in self.qualnames(node, self.node_scope[id(node)])):
                return False
        return True

    def fresh_container(self, node):
        """A local bound only to a container the plugin builds (`{}`, `[...]`, `dict(...)`)."""
        if not isinstance(node, ast.Name):
            return False
        scope = self.node_scope.get(id(node))
        meanings = self.meanings(node.id, scope) if scope is not None else []
        if not meanings:
            return False
        for meaning in meanings:
            value = meaning.binding.value if meaning.binding is not None else None
            if meaning.kind not in ('value', 'alias') or value is None:
                return False
            if isinstance(value, FRESH_CONTAINER_TYPES):
                continue
            if isinstance(value, ast.Call) and all(
                    q in FRESH_CONTAINER_CALLS for q in self.qualnames(value.func, self.node_scope[id(value)]) or ['?']):
                continue
            return False
        return True

    @checks(ast.Name)
    def check_reading_name(self, node, scope):
        if isinstance(node.ctx, ast.Load):
            self.check_reading_reference(node, self.qualnames(node, scope))

    @checks(ast.Attribute)
    def check_request_attribute(self, node, scope):
        """Stores into a Request's `full_url`, `type`, `selector` or `host`, and set_proxy(), change
        what urlopen() opens after its URL was checked."""
        load = isinstance(node.ctx, ast.Load)
        attr = node.attr
        if attr not in REDIRECTING_ATTRIBUTES:
            return
        if attr != 'set_proxy' and load:
            return
        owner = self.own_class(node.value, scope)
        if owner is not None and self.only_plugin_bases(owner):
            return
        what = 'set_proxy()' if attr == 'set_proxy' else "Setting '%s'" % attr
        self.report('file-read', '%s of an object that may be a urllib Request or a shlex lexer changes what it '
                    'opens after its name was checked (file: reads local files, `source` includes files); %s'
                    % (what, WHAT_MAY_BE_READ), node)

    @checks(ast.Attribute)
    def check_reading_attribute(self, node, scope):
        quals = self.node_qualnames(node.value, scope)
        if quals and isinstance(node.ctx, ast.Load):
            self.check_reading_reference(node, ['%s.%s' % (q, node.attr) for q in quals])

    def check_reading_reference(self, node, quals):
        """A callable that opens a file or URL by name is only called (or aliased by a plain
        assignment, which calls through the alias resolve): handed to map() or partial(), or
        subclassed, its name argument would never be checked."""
        named = [q for q in quals if (q in READ_CALLABLES or q in NOT_SUBCLASSED) and q not in OPEN_LIKE]
        if not named:
            return
        parent = self.parent(node)
        if isinstance(parent, ast.Call) and parent.func is node:
            return
        if (isinstance(parent, ast.Assign) and parent.value is node and len(parent.targets) == 1
                and isinstance(parent.targets[0], ast.Name)):
            return
        if isinstance(parent, (ast.Attribute, ast.Compare)):
            return  # a member (the tables decide) or a comparison
        name = named[0].replace('builtins.', '')
        if isinstance(parent, ast.ClassDef) and node in parent.bases:
            self.report('file-read', 'A subclass of %s opens files or URLs by names its calls do not show; call '
                        '%s directly' % (name, name), node)
        elif not self.names_a_type(node):
            self.report('file-read', '%s opens a file or URL by name: it may only be called directly, so that '
                        'the name is checked' % name, node)
