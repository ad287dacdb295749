"""The Analyser: the context every rule receives, composed of the concerns' mixins.

It holds the facts of one plugin (the tree, its parents and scopes, the caches that keep each
fact computed once), and walks the tree once calling the rules registered for each node type."""

import ast

from .registry import bound_rules
from .resolution import Resolution
from .rules.attributes import AttributesRules
from .rules.calls import CallsRules
from .rules.contract import ContractRules
from .rules.dataflow import DataflowRules
from .rules.evaluators import EvaluatorsRules
from .rules.families import FamiliesRules
from .rules.imports import ImportsRules
from .rules.machinery import MachineryRules
from .rules.names import NamesRules
from .rules.reading import ReadingRules
from .rules.reading_facts import ReadingFactsRules
from .rules.trust import TrustRules
from .scopes import Scope, ScopeBuilder


class Analyser(ScopeBuilder, Resolution, ImportsRules, NamesRules, AttributesRules, FamiliesRules, TrustRules,
               DataflowRules, CallsRules, MachineryRules, EvaluatorsRules, ContractRules, ReadingRules,
               ReadingFactsRules):
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
        self.import_cache = {}
        self.meanings_cache = {}
        self.name_facts_cache = {}
        self.reads_by_name = None
        self.stored_attributes = None
        self.formatter_classes = {}
        self.ancestry_cache = {}
        self.trusting_cache = {}
        self.private_use_cache = {}
        self.families = None  # door 1: see class_families
        self.ancestry_small = {}
        self.certain_names = None
        self.pure_comparisons = None
        self.block_index = {}
        self.guard_cache = {}
        self.constant_texts_cache = {}
        self.template_problems_cache = {}
        self.param_read_cache = {}
        self.read_cuts = 0
        self.qualnames_memo = (None, None)  # see node_qualnames

    # --- the second pass: the rules ------------------------------------------------------------

    def check(self):
        self.prepare_classes()
        node_scope = self.node_scope
        rules = bound_rules(self)
        for node in self.order:
            node_rules = rules.get(type(node))
            if node_rules is not None:
                scope = node_scope[id(node)]
                for rule in node_rules:
                    rule(node, scope)
        self.check_contract()

    def report(self, rule, message, node):
        if isinstance(node, ast.Attribute) and getattr(node, 'end_lineno', None):
            # At the attribute's name (always the node's end), not at the start of its object.
            column = max(node.end_col_offset - len(node.attr.encode('utf-8')), 0)
            self.findings.add(rule, message, line=node.end_lineno, column=column)
            return
        self.findings.add(rule, message, node)
