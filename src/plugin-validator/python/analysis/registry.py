"""The rules' registry: the rule functions that judge each node type, as bandit's `@checks('Call')`
and pyflakes' handlers are. A rule is registered with `@checks(ast.Call)` on a method of a rule
family's mixin; the walker (core.Analyser.check) calls it as rule(analyser, node, scope) for every
node of that type, in the tree's pre-order. The analyser is the rule's context: the tree, the
resolver (meanings, qualnames) and the facts each family computes once and caches.

Rules of one node type run in the order they are registered (module import order in core.py,
then definition order): the order of two reports of one rule at one place decides which message
is kept, so a family's rules for a node type are registered in one module."""

RULES = {}  # ast node type -> [rule function]


def checks(*node_types):
    def register(rule):
        for node_type in node_types:
            RULES.setdefault(node_type, []).append(rule)
        return rule
    return register


def bound_rules(analyser):
    """The rules of each node type, bound to one analyser (looked up once per plugin, not per node)."""
    return {node_type: tuple(rule.__get__(analyser) for rule in rules) for node_type, rules in RULES.items()}
