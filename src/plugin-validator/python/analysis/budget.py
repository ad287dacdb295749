"""One plugin's analysis under its CPU budget: the passes in order, and the findings as violations."""

import signal

from .common import DepthError, Findings
from .core import Analyser
from .encoding import check_bytes, check_identifiers, source_lines
from .scopes import parse, symtable_accepts
from .table import DEFAULT_BUDGET_S, MAX_NESTING_DEPTH, MAX_REPORTED_VIOLATIONS


# --- entry points -----------------------------------------------------------------------------

class AnalysisTooSlow(BaseException):
    """Raised by the CPU-time alarm; a BaseException so that no `except Exception` of a rule hides it."""


def out_of_time(signum, frame):
    raise AnalysisTooSlow()


def analyse(raw, budget_s=DEFAULT_BUDGET_S, keep=None):
    """The violations and warnings for one plugin's bytes, each sorted; never raises.

    The budget is CPU time (ITIMER_PROF: user and system time of this process), so a niced worker
    on a busy machine is not refused for the time it waited for the CPU. With `keep` (a list), the
    tree and the analyser are put there instead of freed: the worker frees them after it has
    answered, so the uploader does not wait for the freeing of a large plugin's objects."""
    findings = Findings()
    signal.signal(signal.SIGPROF, out_of_time)
    signal.setitimer(signal.ITIMER_PROF, budget_s)
    try:
        try:
            analyse_into(raw, findings, keep)
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
            # An alarm that fired just before it was disarmed must not raise after this point.
            signal.signal(signal.SIGPROF, signal.SIG_IGN)
    except AnalysisTooSlow:
        findings.items = [(1, 0, 'analysis-too-slow', 'The analysis took more than its budget of %g s of CPU '
                           'time; plugin rejected (split it into smaller files or simplify the repeated '
                           'pattern)' % budget_s)]
    if findings.items:
        findings.warnings = []  # a refused plugin is answered with its refusals only
    return to_violations(findings.items, raw), to_violations(findings.warnings, raw)


def analyse_into(raw, findings, keep=None):
    try:
        text = check_bytes(raw, findings)
        if text is not None:
            tree = parse(raw, findings)
            if tree is not None:
                check_identifiers(tree, raw, findings)
                analyser = Analyser(tree, findings)
                if keep is not None:
                    keep.append(analyser)
                analyser.collect()
                if not analyser.needs_symtable or symtable_accepts(text, findings):
                    analyser.check()
    except DepthError as error:
        node = error.args[0]
        findings.warnings = []
        findings.items = [(getattr(node, 'lineno', 1), getattr(node, 'col_offset', 0), 'too-deep',
                           'Nesting deeper than %d levels is not allowed' % MAX_NESTING_DEPTH)]
    except RecursionError:
        findings.items = [(1, 0, 'too-deep', 'Nesting deeper than %d levels is not allowed' % MAX_NESTING_DEPTH)]
    except Exception:  # fail closed: no detail for the uploader
        findings.items = [(1, 0, 'internal-error', 'Validator failed internally; plugin rejected')]


def to_violations(items, raw):
    seen = set()
    violations = []
    lines = None
    for line, column, rule, message in sorted(items, key=lambda f: (f[0], f[1], f[2])):
        if (line, column, rule) in seen:
            continue
        seen.add((line, column, rule))
        if len(violations) == MAX_REPORTED_VIOLATIONS:
            violations.append({'rule': 'too-large', 'message': 'More than %d violations; the rest are not listed'
                               % MAX_REPORTED_VIOLATIONS, 'line': line, 'column': 1})
            break
        # ast columns are UTF-8 byte offsets; a finding reports code points, as editors do.
        if lines is None:
            lines = source_lines(raw)
        violations.append({'rule': rule, 'message': message, 'line': line,
                           'column': code_point_column(lines, line, column) + 1})
    return violations


def code_point_column(lines, line, byte_column):
    if 1 <= line <= len(lines):
        return len(lines[line - 1][:byte_column].decode('utf-8', 'replace'))
    return byte_column
