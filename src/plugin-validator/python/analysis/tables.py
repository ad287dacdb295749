"""The reviewed tables (tables.json, beside analyser.py) and the limits, loaded once per worker."""

import ast
import json
import os
import re

# tables.json stays beside analyser.py, one directory above this package.
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(HERE, 'tables.json'), 'rb') as _tables_file:
    TABLES = json.load(_tables_file)

RULES_VERSION = TABLES['rules_version']
MAX_SOURCE_BYTES = 1024 * 1024
MAX_SOURCE_LINES = 20_000
MAX_NESTING_DEPTH = 100
MAX_REPORTED_VIOLATIONS = 1_000
# The analyser's own CPU budget for one plugin when the request names none (the pool sends
# ANALYSIS_BUDGET_MS): past it the plugin is refused with `analysis-too-slow`, and the worker
# answers and takes the next plugin instead of being killed by the pool's timeout.
DEFAULT_BUDGET_S = 2.0

FORBIDDEN_MODULES = TABLES['forbidden_modules']
MODULE_TABLES = TABLES['modules']
OBJECT_TABLES = TABLES['objects']
R = TABLES['rules']  # attribute and name lists of the rules, reviewed with the tables

FORBIDDEN_BUILTINS = set(R['forbidden_builtins'])
BUILTIN_NAMES_OK_AS_ATTRIBUTES = set(R['builtin_names_ok_as_attributes'])
ALLOWED_PLAIN_DUNDERS = set(R['allowed_plain_dunders'])
READ_ONLY_PLAIN_DUNDERS = set(R['read_only_plain_dunders'])
READABLE_DUNDER_ATTRIBUTES = set(R['readable_dunder_attributes'])
ALLOWED_DUNDER_METHODS = set(R['allowed_dunder_methods'])
CLASS_MACHINERY_DUNDERS = set(R['class_machinery_dunders'])
DANGEROUS_ATTRIBUTES = set(R['dangerous_attributes'])
DANGEROUS_ATTRIBUTE_PREFIXES = tuple(R['dangerous_attribute_prefixes'])
MODULE_REACHING_ATTRIBUTES = set(R['module_reaching_attributes'])
FILE_WRITING_METHODS = set(R['file_writing_methods'])
PUBLIC_UNDERSCORE_ATTRIBUTES = set(R['public_underscore_attributes'])
NAME_TAKING_CALLS = R['name_taking_calls']
OPEN_LIKE = R['open_like']
READ_MODES = set(R['read_modes'])
DECODERS = set(R['decoders'])
SELF_MATCHING_BUILTINS = set(R['self_matching_builtins'])
MODULES_VALUE_RULE = R['module_value_rules']
YAML_SAFE_LOADERS = set(R['yaml_safe_loaders'])
FUTURE_FEATURES = set(R['future_features'])
OPEN_MODE_SHAPE = re.compile(r'^[rwxabtU+]{1,4}$')
IDENTIFIER = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')
BUILTIN_NAMES = set(R['builtin_names'])
PATH_READ_MEMBERS = set(R['path_read_members'])
PLUGIN_HELPER = 'owtf.plugin.helper.plugin_helper'
FORBIDDEN_MODULE_SET = frozenset(FORBIDDEN_MODULES)


MAX_TRUSTED_ANCESTRY = 64  # plugin classes a class may derive from and keep its exemptions (door 1)
# The methods `==`, `<`, `in` and the like hand their other operand to (door 1: comparisons_are_pure).
COMPARISON_METHODS = frozenset(('__eq__', '__ne__', '__lt__', '__le__', '__gt__', '__ge__', '__contains__'))

# Door 5's tables (rules/reading.py: what a plugin may read).
READING = R['reading']
READ_CALLABLES = READING['callables']
READ_METHODS = READING['methods']
FILE_OBJECT_MAKERS = frozenset(READING['file_objects'])
REDIRECTING_ATTRIBUTES = frozenset(READING['redirecting_attributes'])
NOT_SUBCLASSED = frozenset(READING['not_subclassed']) | frozenset(READ_CALLABLES)
CONTAINER_MUTATORS = frozenset(READING['mutators'])
REFUSED_FIRST_COMPONENTS = frozenset(READING['refused_first_components'])
ABSOLUTE_READ_ROOTS = tuple(READING['absolute_roots'])
URL_PREFIXES = ('http://', 'https://')
FRESH_CONTAINER_TYPES = (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)
FRESH_CONTAINER_CALLS = frozenset(['builtins.dict', 'builtins.list', 'builtins.set', 'collections.OrderedDict',
                                   'collections.defaultdict', 'collections.Counter', 'collections.deque'])
BARE_PLUGIN_INFO_CALLS = frozenset(['builtins.len', 'builtins.str', 'builtins.repr', 'builtins.print'])
MAX_READ_DEPTH = 8
# Builtins that only read the sequence they are given (door 3: its elements stay what they were).
ITERATING_BUILTINS = frozenset(['builtins.sorted', 'builtins.len', 'builtins.list', 'builtins.tuple',
                                'builtins.enumerate', 'builtins.reversed', 'builtins.any', 'builtins.all',
                                'builtins.min', 'builtins.max', 'builtins.print', 'builtins.str', 'builtins.repr'])
WHAT_MAY_BE_READ = ('a plugin may read http(s) URLs, files in its working directory and files under '
                    '/usr/share/, named by constants or by the values the framework passes in PluginInfo')
