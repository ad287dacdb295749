"""The plugin profile's capability table (profile.json, beside analyser.py) and the limits, loaded once per worker.

The table is the one place that says what a plugin may use: the builtins, each allowed module's
members, each type's methods and attributes, and the lists the rules use. `untyped` (the names
allowed on a value the checker cannot type) is generated from CPython by
scripts/validator/profile-table.py, which also checks every other entry (docs/plugin-profile.md)."""

import json
import os
import re

# profile.json stays beside analyser.py, one directory above this package.
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(HERE, 'profile.json'), 'rb') as _profile_file:
    PROFILE = json.load(_profile_file)

RULES_VERSION = PROFILE['rules_version']
MAX_SOURCE_BYTES = 1024 * 1024
MAX_SOURCE_LINES = 20_000
MAX_NESTING_DEPTH = 100
MAX_REPORTED_VIOLATIONS = 1_000
# The analyser's own CPU budget for one plugin when the request names none (the pool sends
# ANALYSIS_BUDGET_MS): past it the plugin is refused with `analysis-too-slow`, and the worker
# answers and takes the next plugin instead of being killed by the pool's timeout.
DEFAULT_BUDGET_S = 2.0

BUILTINS = PROFILE['builtins']
MODULES = PROFILE['modules']
TYPES = PROFILE['types']
UNTYPED = PROFILE.get('untyped', {})  # name -> the keywords a call of it may pass
RESERVED_ATTRIBUTES = frozenset(PROFILE['reserved_attributes'])
RESERVED_PREFIXES = tuple(PROFILE['reserved_prefixes'])
DUNDER_METHODS = frozenset(PROFILE['dunder_methods'])
DUNDER_NAMES = frozenset(PROFILE['dunder_names'])
DUNDER_STRINGS = frozenset(PROFILE['dunder_strings'])
MODULE_METADATA = frozenset(PROFILE['module_metadata'])
UNBINDABLE_BUILTINS = frozenset(PROFILE['unbindable_builtins'])
DECODERS = frozenset(PROFILE['decoders'])
FORBIDDEN_BUILTINS = frozenset(PROFILE['forbidden_builtins'])
# Every name CPython's builtins module may hold (with `site`'s additions): a plugin name that is
# none of the profile's builtins and is never bound is one of these or a NameError.
BUILTIN_NAMES = frozenset(BUILTINS) | FORBIDDEN_BUILTINS
TEMPLATE_METHODS = frozenset(['format', 'format_map'])
PLAIN_FIELD = re.compile(r'^([0-9]+|[A-Za-z][A-Za-z0-9_]*)?$')
PROPERTY_PARTS = frozenset(['setter', 'getter', 'deleter'])
