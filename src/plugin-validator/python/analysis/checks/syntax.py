"""Syntax: the constructs of the profile, imports at the top from the allowed modules only."""

import ast

from ..registry import checks
from ..table import MODULES

ALLOWED_NODES = frozenset([
    ast.Module, ast.FunctionDef, ast.ClassDef, ast.Return, ast.Delete, ast.Assign, ast.AugAssign, ast.AnnAssign,
    ast.For, ast.While, ast.If, ast.With, ast.Match, ast.Raise, ast.Try, ast.Assert, ast.Import, ast.ImportFrom,
    ast.Global, ast.Nonlocal, ast.Expr, ast.Pass, ast.Break, ast.Continue,
    ast.BoolOp, ast.NamedExpr, ast.BinOp, ast.UnaryOp, ast.Lambda, ast.IfExp, ast.Dict, ast.Set, ast.ListComp,
    ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Yield, ast.YieldFrom, ast.Compare, ast.Call,
    ast.FormattedValue, ast.JoinedStr, ast.Constant, ast.Attribute, ast.Subscript, ast.Starred, ast.Name, ast.List,
    ast.Tuple, ast.Slice, ast.comprehension, ast.ExceptHandler, ast.arguments, ast.arg, ast.keyword, ast.alias,
    ast.withitem, ast.match_case, ast.MatchValue, ast.MatchSingleton, ast.MatchSequence, ast.MatchMapping,
    ast.MatchClass, ast.MatchStar, ast.MatchAs, ast.MatchOr, ast.TypeIgnore])

# Every concrete node type the parser can make that the profile does not list (operators and
# contexts are not nodes of their own here: the walk never visits them).
OUTSIDE_NODES = tuple(node_type for node_type in vars(ast).values()
                      if isinstance(node_type, type) and issubclass(node_type, ast.AST)
                      and node_type not in ALLOWED_NODES
                      and not issubclass(node_type, (ast.expr_context, ast.boolop, ast.operator, ast.unaryop,
                                                     ast.cmpop)))

INSTEAD = {
    ast.AsyncFunctionDef: 'write a plain def: plugins run synchronously (the requester makes the requests)',
    ast.AsyncFor: 'write a plain for loop', ast.AsyncWith: 'write a plain with statement',
    ast.Await: 'call the function directly: plugins run synchronously',
    ast.TryStar: 'write try/except with the exception classes you catch',
}


class SyntaxRules:
    @checks(*OUTSIDE_NODES)
    def check_outside_syntax(self, node, scope):
        instead = INSTEAD.get(type(node), 'use the constructs listed in the plugin profile')
        self.report('profile-syntax', '%s is outside the plugin profile: %s' % (construct_name(node), instead), node)

    @checks(ast.Import, ast.ImportFrom)
    def check_import(self, node, scope):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                self.report('relative-import', 'Relative imports are not allowed: a plugin is one file; import '
                            'from the allowed modules by their full name', node)
                return
            if any(alias.name == '*' for alias in node.names):
                self.report('star-import', "'from %s import *' is not allowed: import each name you use"
                            % node.module, node)
                return
        if scope is not self.module_scope or not self.is_leading(node):
            self.report('import-position', 'Imports belong at the top of the module, before any other statement: '
                        'move this import there', node)
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name not in MODULES:
                    self.refuse_module(alias.name, alias)
            return
        module = node.module or ''
        if module not in MODULES:
            self.refuse_module(module, node)
            return
        for alias in node.names:
            if alias.name not in MODULES[module]:
                self.report('module-attribute', "'%s' is not in the plugin profile's table of %s: %s"
                            % (alias.name, module, allowed_members(module)), node)

    def refuse_module(self, name, node):
        root = name.split('.')[0]
        if root in ('requests', 'urllib', 'http', 'socket', 'ssl', 'asyncio'):
            instead = "make requests with the framework's requester (from owtf.requester.base import requester)"
        elif root in ('subprocess', 'os', 'shlex', 'pty', 'multiprocessing', 'threading', 'shutil', 'pathlib'):
            instead = ("a plugin neither touches files nor runs commands itself: use the framework's helpers "
                       '(plugin_helper.CommandDump with a resource list)')
        else:
            instead = 'use the modules of the plugin profile (docs/plugin-profile.md)'
        self.report('forbidden-import', "Module '%s' is not in the plugin profile: %s" % (name, instead), node)


def allowed_members(module):
    names = sorted(MODULES.get(module, {}))
    shown = ', '.join(names[:12]) + (', ...' if len(names) > 12 else '')
    return 'it allows %s' % shown if names else 'it has no members a plugin may use'


def construct_name(node):
    names = {ast.AsyncFunctionDef: "'async def'", ast.AsyncFor: "'async for'", ast.AsyncWith: "'async with'",
             ast.Await: "'await'", ast.TryStar: "'except*'"}
    return names.get(type(node), type(node).__name__)
