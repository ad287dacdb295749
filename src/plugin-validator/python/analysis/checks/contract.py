"""The framework's contract: a top-level DESCRIPTION string and run(PluginInfo)."""

import ast

from ..common import is_str_constant


class ContractRules:
    # The framework's contract: the framework reads DESCRIPTION and calls run(PluginInfo).

    def check_contract(self):
        has_description = any(
            isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
            and s.targets[0].id == 'DESCRIPTION' and is_str_constant(s.value)
            or isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.target.id == 'DESCRIPTION'
            and s.value is not None and is_str_constant(s.value)
            for s in self.tree.body)
        has_run = any(
            isinstance(s, ast.FunctionDef) and s.name == 'run' and len(s.args.posonlyargs + s.args.args) == 1
            and not (s.args.vararg or s.args.kwarg or s.args.kwonlyargs or s.args.defaults) for s in self.tree.body)
        if not has_description:
            self.findings.add('missing-description', 'Plugin must define a top-level DESCRIPTION string')
        if not has_run:
            self.findings.add('missing-run',
                              'Plugin must define a top-level function run(PluginInfo) with one positional parameter')
