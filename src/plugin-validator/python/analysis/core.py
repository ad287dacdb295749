"""The Analyser: the context every rule receives, composed of the concerns' mixins.

It holds the facts of one plugin (the tree, its parents and scopes, the types of its expressions
and bindings) and walks the tree once, in pre-order, calling the rules registered for each node
type (registry.py). Every fact is computed once per node or binding, so the pass is linear."""

import ast

from .checks.attributes import AttributesRules
from .checks.calls import CallsRules
from .checks.classes import ClassesRules
from .checks.contract import ContractRules
from .checks.flows import FlowsRules
from .checks.names import NamesRules
from .checks.narrowing import NarrowingRules
from .checks.syntax import SyntaxRules
from .registry import bound_rules
from .resolution import Resolution
from .scopes import Scope, ScopeBuilder
from .types import Typing


class Analyser(ScopeBuilder, Resolution, Typing, SyntaxRules, NamesRules, AttributesRules, CallsRules, FlowsRules,
               ClassesRules, NarrowingRules, ContractRules):
    def __init__(self, tree, findings):
        self.tree = tree
        self.findings = findings
        self.module_scope = Scope(tree, None, 'module', 'top')
        self.needs_symtable = False  # a construct only symtable can refuse (SYMTABLE_ERROR_TYPES)
        self.scope_of = {}  # id(scope node) -> Scope
        self.parents = {}
        self.all_scopes = [self.module_scope]
        self.scope_of[id(tree)] = self.module_scope
        self.plugin_classes = {}  # id(ClassDef) -> ClassDef
        self.node_scope = {}
        self.order = []
        self.globals_index = None
        self.leading = None
        self.global_cache = {}
        self.meanings_cache = {}
        self.types_cache = {}  # id(node) -> its type (types.py)
        self.name_types = {}  # (name, id(scope)) -> its type
        self.binding_types = {}  # id(binding) -> the type it binds
        self.partial_types = {}  # names being typed -> their type so far (types.py, name_type)
        self.round_types = None  # the types computed in the current round of a name's fixpoint (types.py)
        self.hit_names = set()
        self.cycle_hits = 0
        self.guard_cache = {}  # the isinstance guards of a def or an `and` chain (narrowing.py)
        self.positions_cache = {}
        self.restricted_types = {}  # type -> whether flows.py restricts its use
        self.required_resources = []  # names handed to CommandDump (calls.py)
        self.resources_read = set()  # (name, id(scope)) of resource lists read otherwise (flows.py)

    def check(self):
        node_scope = self.node_scope
        rules = bound_rules(self)
        for node in self.order:
            node_rules = rules.get(type(node))
            if node_rules is not None:
                scope = node_scope[id(node)]
                for rule in node_rules:
                    rule(node, scope)
        self.check_resources_unchanged()
        self.check_contract()

    def positions(self, items):
        """id(item) -> its index in a node's list (a body, a call's arguments, the decorators), once
        per list: `x in list` per node would make a long list quadratic."""
        known = self.positions_cache.get(id(items))
        if known is None:
            known = self.positions_cache[id(items)] = {id(item): index for index, item in enumerate(items)}
        return known

    def report(self, rule, message, node):
        if isinstance(node, ast.Attribute) and getattr(node, 'end_lineno', None):
            # At the attribute's name (always the node's end), not at the start of its object.
            column = max(node.end_col_offset - len(node.attr.encode('utf-8')), 0)
            self.findings.add(rule, message, line=node.end_lineno, column=column)
            return
        self.findings.add(rule, message, node)
