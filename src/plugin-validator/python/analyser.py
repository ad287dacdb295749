"""The plugin analyser: judges an uploaded plugin against the plugin profile, on the program
CPython 3.11 builds from its bytes.

It never runs the plugin: it reads the bytes with CPython's own tokenizer and parser (ast), gives
each name the scope CPython's symtable gives it (by symtable.c's rules, checked against symtable by
the differential test), and accepts the file only when every construct, name and call is inside
the profile: the capability table profile.json beside this file (docs/plugin-profile.md). The code
is the package `analysis/` beside this file, one module per concern.

As a worker (`python3 -I -S -B analyser.py`) it answers one JSON line per request line:
  {"id": n, "source": "<base64>"}            -> {"id": n, "violations": [...], "warnings": [...]?}
  {"id": n, "view": ["<base64>", ...]}       -> {"id": n, "views": [...]}   (differential test)
"""

import base64
import json
import sys

# -I keeps the script's directory off sys.path: the package beside this file is put there by hand.
HERE = __file__.rsplit('/', 1)[0] if '/' in __file__ else '.'
if HERE not in sys.path:
    sys.path.insert(0, HERE)

# What view.py (the differential test's view) reads of `analyser`, and the worker's entry points.
from analysis.budget import analyse  # noqa: E402
from analysis.common import DepthError, Findings  # noqa: E402,F401
from analysis.core import Analyser  # noqa: E402,F401
from analysis.encoding import check_bytes  # noqa: E402,F401
from analysis.scopes import COMPREHENSION_TYPES, DEF_PARAM, FREE, LOCAL, parse, symtable_accepts  # noqa: E402,F401
from analysis.table import DEFAULT_BUDGET_S, RULES_VERSION  # noqa: E402


def load_view():
    """view.py, from beside this file (-I keeps the script's directory off sys.path)."""
    import importlib.util
    sys.modules.setdefault('analyser', sys.modules[__name__])
    spec = importlib.util.spec_from_file_location('view', HERE + '/view.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def serve():
    import gc
    sys.setrecursionlimit(10_000)
    # A parse makes tens of thousands of short-lived nodes and no cycles worth a full collection.
    gc.freeze()
    gc.set_threshold(200_000, 20, 20)
    out = sys.stdout
    out.write(json.dumps({'ready': True, 'python': '%d.%d' % sys.version_info[:2],
                          'rules_version': RULES_VERSION}) + '\n')
    out.flush()
    for line in sys.stdin:
        request = json.loads(line)
        if 'view' in request:
            program_view = load_view().program_view
            answer = {'id': request['id'], 'views': [program_view(base64.b64decode(s)) for s in request['view']]}
        else:
            budget_ms = request.get('budget_ms')
            budget_s = budget_ms / 1000 if isinstance(budget_ms, (int, float)) and budget_ms > 0 else DEFAULT_BUDGET_S
            garbage = []
            violations, warnings = analyse(base64.b64decode(request['source']), budget_s, garbage)
            answer = {'id': request['id'], 'violations': violations}
            if warnings:
                answer['warnings'] = warnings
        out.write(json.dumps(answer) + '\n')
        out.flush()
        garbage = answer = None  # the plugin's tree and facts are freed once it is answered


if __name__ == '__main__':
    serve()
