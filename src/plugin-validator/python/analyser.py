"""The plugin analyser: judges an uploaded plugin on the program CPython 3.11 builds from its bytes.

It never runs the plugin: it reads the bytes with CPython's own tokenizer and parser (ast), gives
each name the scope CPython's symtable gives it (by symtable.c's rules, checked against symtable by
the differential test), and applies the rules to that tree. Every exemption is decided on the
binding a name has in its scope. The tables (allowed modules and the members a plugin may use of each) are
the reviewed data file tables.json beside this file.

As a worker (`python3 -I -S -B analyser.py`) it answers one JSON line per request line:
  {"id": n, "source": "<base64>"}            -> {"id": n, "violations": [...]}
  {"id": n, "view": ["<base64>", ...]}       -> {"id": n, "views": [...]}   (differential test)
"""

import ast
import base64
import json
import re
import signal
import string
import symtable
import sys
import unicodedata

try:  # CPython's own field-name grammar for str.format templates.
    from _string import formatter_field_name_split
except ImportError:  # pragma: no cover - CPython always has it
    formatter_field_name_split = None

HERE = __file__.rsplit('/', 1)[0] if '/' in __file__ else '.'
with open(HERE + '/tables.json', 'rb') as _tables_file:
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
# U+202A-U+202E and U+2066-U+2069 in UTF-8 ("Trojan Source": embeddings, overrides, isolates).
BIDI_CONTROLS = re.compile(rb'\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]')
CODING = re.compile(rb'^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)')
BUILTIN_NAMES = set(R['builtin_names'])
PATH_READ_MEMBERS = set(R['path_read_members'])
PLUGIN_HELPER = 'owtf.plugin.helper.plugin_helper'

FOREIGN_BOMS = [
    ('UTF-32LE', b'\xff\xfe\x00\x00'),
    ('UTF-32BE', b'\x00\x00\xfe\xff'),
    ('UTF-EBCDIC', b'\xdd\x73\x66\x73'),
    ('GB18030', b'\x84\x31\x95\x33'),
    ('UTF-1', b'\xf7\x64\x4c'),
    ('SCSU', b'\x0e\xfe\xff'),
    ('BOCU-1', b'\xfb\xee\x28'),
    ('UTF-16LE', b'\xff\xfe'),
    ('UTF-16BE', b'\xfe\xff'),
]


class Findings:
    def __init__(self):
        self.items = []

    def add(self, rule, message, node=None, line=1, column=0):
        if node is not None:
            line, column = getattr(node, 'lineno', line), getattr(node, 'col_offset', column)
        self.items.append((line, column, rule, message))

    def has(self, rule):
        return any(item[2] == rule for item in self.items)


def is_dunder(name):
    return len(name) >= 4 and name.startswith('__') and name.endswith('__')


def is_private(name):
    return len(name) > 1 and name.startswith('_') and not is_dunder(name)


FORBIDDEN_MODULE_SET = frozenset(FORBIDDEN_MODULES)


def is_forbidden_module(dotted):
    """`os` forbids `os` and `os.path`, not `osmosis`."""
    if dotted in FORBIDDEN_MODULE_SET:
        return True
    if '.' not in dotted:
        return False
    parts = dotted.split('.')
    return any('.'.join(parts[:end]) in FORBIDDEN_MODULE_SET for end in range(1, len(parts)))


# --- bytes ------------------------------------------------------------------------------------

def check_bytes(raw, findings):
    """The encoding refusals: what CPython would read must be the UTF-8 text an admin reads."""
    if len(raw) > MAX_SOURCE_BYTES:
        findings.add('too-large', 'Plugin is larger than %d bytes' % MAX_SOURCE_BYTES)
        return None
    for name, bom in FOREIGN_BOMS:
        if raw.startswith(bom):
            findings.add('encoding', '%s byte-order mark: plugins must be UTF-8' % name)
            return None
    body = raw[3:] if raw.startswith(b'\xef\xbb\xbf') else raw
    nul = body.find(b'\0')
    if nul >= 0:
        line, column = byte_position(body, nul)
        findings.add('encoding', 'NUL byte in source', line=line, column=column)
        return None
    try:
        text = body.decode('utf-8', 'strict')
    except UnicodeDecodeError as error:
        line, column = byte_position(body, error.start)
        findings.add('encoding', 'Source is not valid UTF-8', line=line, column=column)
        return None
    # PEP 263 looks at the first two lines: split as CPython's tokenizer splits them (any line
    # break), and as tokenize.detect_encoding does (\n only). Either reading must find UTF-8.
    for lines in (re.split(rb'\r\n|\r|\n', body, 2)[:2], body.split(b'\n', 2)[:2]):
        if check_coding_declaration(lines, findings):
            break
    for match in BIDI_CONTROLS.finditer(body):
        line, column = byte_position(body, match.start())
        findings.add('encoding', 'Bidirectional control character U+%04X: it reorders how the source is '
                     'shown, so a reviewer would read another program' % ord(match.group().decode('utf-8')),
                     line=line, column=column)
    breaks = len(re.findall(r'\r\n|\r|\n', text))
    lines = breaks + (0 if text == '' or text.endswith(('\n', '\r')) else 1)
    if lines > MAX_SOURCE_LINES:
        findings.add('too-large', 'Plugin has %d lines; the limit is %d' % (lines, MAX_SOURCE_LINES),
                     line=MAX_SOURCE_LINES + 1, column=0)
    if findings.items:
        return None
    return text


def check_coding_declaration(lines, findings):
    """True when the first two lines declare an encoding other than UTF-8 (a finding is added)."""
    for index, line_bytes in enumerate(lines):
        match = CODING.match(line_bytes)
        if not match:
            if index == 0 and not re.match(rb'^[ \t\f]*(#.*)?$', line_bytes):
                return False  # a declaration on line 2 counts only after a blank or comment line
            continue
        declared = match.group(1).decode('ascii', 'replace').lower().replace('_', '-')
        if declared in ('utf-8', 'utf8'):
            return False
        findings.add('encoding', "Coding declaration '%s' is not allowed: plugins must be UTF-8"
                     % match.group(1).decode('ascii', 'replace'), line=index + 1, column=0)
        return True
    return False


def byte_position(body, offset):
    """Line (any line break, as CPython counts them) and byte column of a byte offset; findings
    carry byte columns, as ast does, and to_violations turns them into code points."""
    before = body[:offset]
    breaks = list(re.finditer(rb'\r\n|\r|\n', before))
    start = breaks[-1].end() if breaks else 0
    return len(breaks) + 1, offset - start


# Letters of other scripts (and Latin's own) drawn like ASCII letters: a name made of them and
# ASCII reads as an ASCII name it is not. The Cyrillic and Greek look-alikes of Unicode's
# confusables list, and Latin's dotless i, script a and script g.
LOOKALIKES = str.maketrans({
    'а': 'a', 'в': 'b', 'с': 'c', 'ԁ': 'd', 'е': 'e', 'һ': 'h', 'і': 'i', 'ј': 'j', 'к': 'k', 'ӏ': 'l',
    'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p', 'ԛ': 'q', 'г': 'r', 'ѕ': 's', 'т': 't', 'ц': 'u', 'ѵ': 'v',
    'ԝ': 'w', 'х': 'x', 'у': 'y', 'А': 'A', 'В': 'B', 'С': 'C', 'Е': 'E', 'Н': 'H', 'І': 'I', 'Ј': 'J',
    'К': 'K', 'М': 'M', 'О': 'O', 'Р': 'P', 'Ѕ': 'S', 'Т': 'T', 'Х': 'X', 'У': 'Y', 'Ԝ': 'W',
    'α': 'a', 'β': 'b', 'ε': 'e', 'ι': 'i', 'κ': 'k', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'τ': 't', 'υ': 'u',
    'χ': 'x', 'γ': 'y', 'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M',
    'Ν': 'N', 'Ο': 'O', 'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X', 'ı': 'i', 'ɑ': 'a', 'ɡ': 'g',
})
# Characters CPython takes in identifiers that draw nothing: `data` and `data` + U+034F are two names.
INVISIBLE_IN_NAMES = re.compile('[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u3164\ufe00-\ufe0f\uffa0'
                                '\U000e0100-\U000e01ef]')
# Scripts that one language writes together (Japanese: kanji and kana; Korean: hanja and hangul).
SCRIPT_GROUPS = {'CJK': 'CJK', 'HIRAGANA': 'CJK', 'KATAKANA': 'CJK', 'HANGUL': 'CJK'}
# What the identifier scan stops at: a comment's start, and a non-ASCII character's lead byte.
CODE_MARK = re.compile(rb'#|[\xc0-\xff]')


def check_identifiers(tree, raw, findings):
    """A name a reviewer reads must be the name Python runs. CPython reads identifiers through
    NFKC (`ｅｖａｌ` is `eval`, `ﬁle` is `file`), and letters of other scripts look like Latin
    ones (a Cyrillic `а` makes `dаta` another name than `data`). Refused: a name NFKC changes, a
    name mixing scripts, a name that looks like an ASCII name or like another name of the
    program. Names in one script (`étiquette`, `λ`, `検出`) and any text in strings and comments
    are accepted. What is code is told from CPython's own tree (the spans of its string
    literals, and within f-strings those of the replacement fields' expressions), not by a
    second tokenizer."""
    if raw.isascii():
        return
    lines = source_lines(raw)
    spans = []  # (start, end, is_code), positions as (line, byte column), as ast gives them
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            spans.append(((node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset), False))
        elif isinstance(node, ast.FormattedValue):
            value = node.value
            spans.append(((value.lineno, value.col_offset), (value.end_lineno, value.end_col_offset), True))
    spans.sort(key=lambda span: span[0])
    stack, next_span, names = [], 0, []
    for number, line in enumerate(lines, 1):
        if line.isascii():
            continue
        match = CODE_MARK.search(line)
        while match:
            position = (number, match.start())
            while next_span < len(spans) and spans[next_span][0] <= position:
                stack.append(spans[next_span])
                next_span += 1
            while stack and stack[-1][1] <= position:
                stack.pop()
            if stack and not stack[-1][2]:
                # In a string: on to its end on this line, or to the next span (an f-string's field).
                end = stack[-1][1]
                skip = end[1] if end[0] == number else len(line)
                if next_span < len(spans) and spans[next_span][0][0] == number:
                    skip = min(skip, spans[next_span][0][1])
                match = CODE_MARK.search(line, max(skip, match.end()))
                continue
            if match.group() == b'#':
                break  # the rest of the line is a comment
            # The scan goes on after the name, so each name is met once.
            start, end = identifier_around(line, match.start())
            names.append((number, start, line[start:end].decode('utf-8', 'replace')))
            match = CODE_MARK.search(line, max(end, match.end()))
    distinct = {name for _, _, name in names}
    skeletons = {}
    for name in distinct:
        skeletons.setdefault(unicodedata.normalize('NFKC', name).translate(LOOKALIKES), set()).add(name)
    problems = {name: identifier_problem(name, skeletons) for name in distinct}
    for number, start, name in names:
        problem = problems[name]
        if problem:
            findings.add('encoding', "Identifier '%s' %s: a reviewer would read another name than the one "
                         'Python runs' % (name, problem), line=number, column=start)


def identifier_problem(name, skeletons):
    invisible = INVISIBLE_IN_NAMES.search(name)
    if invisible:
        return 'holds U+%04X, which draws nothing' % ord(invisible.group())
    read_as = unicodedata.normalize('NFKC', name)
    if read_as != name:
        return "is read by Python as '%s'" % read_as
    scripts = sorted({SCRIPT_GROUPS.get(script, script) for script in (
        unicodedata.name(ch, '?').split(' ')[0] for ch in name if ch.isalpha())})
    if len(scripts) > 1:
        return 'mixes %s letters' % ' and '.join(script.title() for script in scripts)
    skeleton = name.translate(LOOKALIKES)
    if skeleton != name and skeleton.isascii():
        return "looks like '%s'" % skeleton
    others = sorted(skeletons.get(skeleton, set()) - {name})
    if others:
        return "looks like '%s'" % others[0]
    return None


def identifier_around(line, offset):
    """The byte span of the run of identifier characters (ASCII word bytes, any non-ASCII) at offset."""
    start = offset
    while start > 0 and (line[start - 1] >= 0x80 or chr(line[start - 1]).isalnum() or line[start - 1] == 0x5f):
        start -= 1
    end = offset
    while end < len(line) and (line[end] >= 0x80 or chr(line[end]).isalnum() or line[end] == 0x5f):
        end += 1
    return start, end


def parse(raw, findings):
    """CPython's own tree from the bytes (its tokenizer decodes them itself), or None."""
    return compiled(lambda: compile(raw, '<plugin>', 'exec', ast.PyCF_ONLY_AST, dont_inherit=True), findings)


def symtable_accepts(text, findings):
    """CPython's symtable on the program: the errors it raises and the parser does not."""
    return compiled(lambda: symtable.symtable(text, '<plugin>', 'exec'), findings) is not None


def compiled(step, findings):
    try:
        return step()
    except SyntaxError as error:
        message = 'Syntax error: %s' % (error.msg or 'invalid Python')
        if 'too many nested' in (error.msg or '') or 'too many statically nested' in (error.msg or ''):
            findings.add('too-deep', 'Plugin is nested too deeply', line=error.lineno or 1, column=0)
        else:
            findings.add('syntax-error', message, line=error.lineno or 1, column=max((error.offset or 1) - 1, 0))
    except (RecursionError, MemoryError):
        findings.add('too-deep', 'Plugin is nested too deeply')
    except ValueError:
        findings.add('encoding', 'Source cannot be decoded')
    return None


# --- scopes -----------------------------------------------------------------------------------

SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp,
               ast.SetComp, ast.DictComp, ast.GeneratorExp)
SCOPE_TYPES = frozenset(SCOPE_NODES)
BINDING_TYPES = frozenset([ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                           ast.ClassDef, ast.Name, ast.ExceptHandler, ast.MatchAs, ast.MatchStar, ast.MatchMapping,
                           ast.Global, ast.Nonlocal])
COMPREHENSION_TYPES = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
# The methods `==`, `<`, `in` and the like hand their other operand to (door 1: comparisons_are_pure).
MAX_TRUSTED_ANCESTRY = 64  # plugin classes a class may derive from and keep its exemptions (door 1)
COMPARISON_METHODS = frozenset(('__eq__', '__ne__', '__lt__', '__le__', '__gt__', '__ge__', '__contains__'))
COMPREHENSION_NAMES = {ast.ListComp: 'listcomp', ast.SetComp: 'setcomp', ast.DictComp: 'dictcomp',
                       ast.GeneratorExp: 'genexpr'}


# How CPython's symtable flags a name in one scope (Python/symtable.c), and what it concludes.
DEF_GLOBAL, DEF_LOCAL, DEF_PARAM, DEF_NONLOCAL, DEF_IMPORT = 1, 2, 4, 8, 64
DEF_BOUND = DEF_LOCAL | DEF_PARAM | DEF_IMPORT
LOCAL, GLOBAL_EXPLICIT, GLOBAL_IMPLICIT, FREE = 'local', 'global-explicit', 'global-implicit', 'free'
# The constructs behind every error CPython's symtable raises and its parser does not (global or
# nonlocal misuse, walrus in comprehensions, yield or await in comprehensions and annotations,
# import * in a function): a tree with one of them is also given to symtable itself.
SYMTABLE_ERROR_TYPES = frozenset([ast.Global, ast.Nonlocal, ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await])


class Scope:
    """One block of CPython's symbol table: module, class, or function (def, lambda, comprehension).

    The scope of a name is decided as symtable.c's analyze_name decides it, from the flags the
    block's own code gives the name and the names its enclosing functions bind; the differential
    test checks every decision against CPython's symtable."""

    def __init__(self, node, parent, kind, name):
        self.node = node
        self.parent = parent
        self.kind = kind  # 'module', 'class', 'function'
        self.name = name
        self.lineno = getattr(node, 'lineno', 0)
        self.bindings = {}  # name -> [Binding]
        self.flags = {}  # name -> DEF_* bits
        self.method_of = None  # the ClassDef when this function is defined directly in a class body
        self.enclosing_bound = None  # the names enclosing functions bind for this block (lazy)

    def bind(self, name, binding):
        self.bindings.setdefault(name, []).append(binding)

    def flag(self, name, bit):
        self.flags[name] = self.flags.get(name, 0) | bit

    def scope_of_name(self, name):
        """LOCAL, FREE, GLOBAL_EXPLICIT or GLOBAL_IMPLICIT: what the name is when read here."""
        flags = self.flags.get(name, 0)
        if flags & DEF_GLOBAL:
            return GLOBAL_EXPLICIT
        if flags & DEF_NONLOCAL:
            return FREE
        if flags & DEF_BOUND:
            return LOCAL
        if self.parent is not None and name in self.bound_by_enclosing():
            return FREE
        return GLOBAL_IMPLICIT

    def bound_by_enclosing(self):
        """The `bound` set symtable.c passes into this block: the locals of enclosing functions
        (not of classes, whose names nested code cannot see), less those a function declares
        global on the way; a class adds the implicit __class__ cell."""
        if self.enclosing_bound is None:
            parent = self.parent
            if parent.kind == 'module':
                self.enclosing_bound = frozenset()
            elif parent.kind == 'class':
                self.enclosing_bound = parent.bound_by_enclosing() | {'__class__'}
            else:
                passed = set(parent.bound_by_enclosing())
                for name, flags in parent.flags.items():
                    if flags & DEF_GLOBAL:
                        passed.discard(name)
                    elif flags & DEF_BOUND and not flags & DEF_NONLOCAL:
                        passed.add(name)
                self.enclosing_bound = frozenset(passed)
        return self.enclosing_bound


class Binding:
    """What one statement binds a name to: an import, a def, a class, a parameter, or a value."""

    def __init__(self, kind, node=None, qualname=None, index=None, leading=False, value=None):
        self.kind = kind
        self.node = node
        self.qualname = qualname
        self.index = index
        self.leading = leading
        self.value = value


class Meaning:
    """One thing a name may refer to when it is read."""

    def __init__(self, kind, qualname=None, binding=None, scope=None):
        self.kind = kind  # 'builtin', 'import', 'param', 'def', 'class', 'value', 'undefined'
        self.qualname = qualname
        self.binding = binding
        self.scope = scope


# --- door 5: what a plugin may read ------------------------------------------------------------
#
# A file or URL is read by name through the callables of tables.json's `reading` table. Each name
# must be proven harmless on the tree: a constant (or constants joined by `+` or an f-string) that
# is an http(s) URL, a relative path inside the working directory, or an absolute path under
# /usr/share/; a value the framework hands the plugin (`PluginInfo["key"]`), when nothing in the
# plugin can change what PluginInfo holds; a local bound only to such values; or a parameter of a
# plugin function whose every call passes one. Anything else (a value the analyser cannot follow)
# is refused: `file-read`.

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


def read_argument(call, position, keyword):
    """The argument a call passes at `position` or as `keyword`: ABSENT, UNKNOWN (it may come
    from *args or **kwargs), or the node. A positional argument before any *args is certain."""
    for index, argument in enumerate(call.args):
        if isinstance(argument, ast.Starred):
            return UNKNOWN
        if index == position:
            return argument
    for kw in call.keywords:
        if kw.arg == keyword:
            return kw.value
    if any(kw.arg is None for kw in call.keywords):
        return UNKNOWN
    return ABSENT


def path_text_problem(text):
    """Why a constant file name or URL is not harmless, or None."""
    if '\x00' in text:
        return 'it contains a NUL character'
    parts = text.split('/')
    if '..' in parts:
        return "it climbs out of its directory with '..'"
    if text.lower().startswith(URL_PREFIXES):
        return None
    if ':' in text:
        # urllib strips spaces and control characters before the scheme, and `file:`, `FILE:`,
        # `local_file:`... all read files: no colon at all outside an http(s) URL.
        return 'it has a colon: a URL scheme other than http(s) (file: reads local files)'
    if text.startswith('~'):
        return "it starts with '~'"
    if text.startswith('/'):
        normal = '/' + '/'.join(part for part in parts if part not in ('', '.')) + '/'
        if not normal.startswith(ABSOLUTE_READ_ROOTS):
            return 'it is an absolute path outside %s' % ', '.join(ABSOLUTE_READ_ROOTS)
        return None
    first = next((part for part in parts if part not in ('', '.')), '')
    if first in REFUSED_FIRST_COMPONENTS:
        return "it starts with '%s', a system directory when the working directory is /" % first
    return None


def string_parts(node):
    """A str constant, `+` of strings or an f-string as its parts: (text, None) for a constant
    part, (None, node) for any other; None when `node` is not built that way."""
    if isinstance(node, ast.Constant):
        return [(node.value, None)] if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                parts.append((value.value, None))
            elif (isinstance(value, ast.FormattedValue) and value.conversion == -1 and value.format_spec is None
                  and isinstance(value.value, ast.Constant) and isinstance(value.value.value, str)):
                parts.append((value.value.value, None))
            elif isinstance(value, ast.FormattedValue) and value.conversion == -1 and value.format_spec is None:
                parts.append((None, value.value))
            else:
                parts.append((None, value))
        return parts
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = string_parts(node.left), string_parts(node.right)
        if left is None and right is None:
            return None
        return (left or [(None, node.left)]) + (right or [(None, node.right)])
    return None


class ReadingRules:
    """The `file-read` rule, mixed into the Analyser (it uses its meanings and parents)."""

    def check_reading_call(self, node, scope, quals):
        for qual in quals:
            spec = READ_CALLABLES.get(qual)
            if spec is not None:
                self.check_read_arguments(node, spec, qual.replace('builtins.', ''))
                return
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in READ_METHODS and not quals:
            receiver = func.value
            if isinstance(receiver, ast.Call) and any(
                    q in ('pathlib.Path', 'pathlib.PosixPath') for q in self.qualnames(receiver.func, scope)):
                return  # Path(p).open(mode): p is checked at Path(p)
            self.check_read_arguments(node, READ_METHODS[func.attr], '.' + func.attr)

    def check_read_arguments(self, call, spec, what):
        position, keywords = spec[0], spec[1:]
        arguments = []
        if position == -1:
            for argument in call.args:
                arguments.append(UNKNOWN if isinstance(argument, ast.Starred) else argument)
            arguments += [UNKNOWN for keyword in call.keywords if keyword.arg is None]
        else:
            arguments.append(read_argument(call, position, keywords[0] if keywords else ''))
            arguments += [read_argument(call, None, keyword) for keyword in keywords[1:]]
        for argument in arguments:
            if argument is ABSENT:
                continue
            if argument is UNKNOWN:
                self.report('file-read', '%s() with *args or **kwargs: the file or URL it reads cannot be known; %s'
                            % (what, WHAT_MAY_BE_READ), call)
                continue
            problem = self.read_problem(argument, self.node_scope.get(id(argument)), 0, set())
            if problem:
                self.report('file-read', '%s() may read a file or URL the analyser cannot prove harmless: %s; %s'
                            % (what, problem, WHAT_MAY_BE_READ), argument)

    def read_problem(self, node, scope, depth, seen):
        """Why the file name or URL `node` may be harmful, or None when it is proven harmless."""
        if depth > MAX_READ_DEPTH or scope is None:
            self.read_cuts += 1
            return 'it is built too indirectly to follow'
        text = self.folded_text(node, scope, depth)
        if text is not None:
            return path_text_problem(text)
        parts = string_parts(node)
        if parts is not None:
            return self.parts_problem(parts, scope, depth, seen)
        if isinstance(node, ast.Name):
            return self.name_read_problem(node, scope, depth, seen)
        if self.framework_value(node, scope, depth, seen):
            return None
        if isinstance(node, ast.Call):
            if any(q in FILE_OBJECT_MAKERS for q in self.qualnames(node.func, scope)):
                return None  # a file object or a Request: its own name is checked where it is made
            if isinstance(node.func, ast.Attribute) and node.func.attr == 'open':
                return None  # a file object; `.open(name)` is checked itself
        if (isinstance(node, ast.Attribute) and node.attr == 'name' and isinstance(node.value, ast.Call)
                and self.read_problem(node.value, scope, depth + 1, seen) is None):
            return None  # open(p).name is p, checked at open(p)
        if 'plugin-info-changed' in seen:
            return ('PluginInfo may be changed or made by the plugin (run() called by the plugin, a store into a '
                    "container, |=, update(), setdefault(), PluginInfo handed to a function), so its values are not "
                    "the framework's")
        return 'it is a value whose text the analyser cannot know'

    def folded_text(self, node, scope, depth):
        """The one text a str constant, `+` or f-string of them, or a name bound only to such
        values stands for; None when it may be anything else."""
        if depth > MAX_READ_DEPTH or scope is None:
            self.read_cuts += 1
            return None
        if isinstance(node, ast.Name):
            texts = set()
            for meaning in self.meanings_when_bound(node.id, scope):
                value = meaning.binding.value if meaning.binding is not None else None
                if meaning.kind not in ('value', 'alias') or value is None:
                    return None
                text = self.folded_text(value, self.node_scope.get(id(value)), depth + 1)
                if text is None:
                    return None
                texts.add(text)
            return texts.pop() if len(texts) == 1 else None
        parts = string_parts(node)
        if parts is None:
            return None
        folded = []
        for text, part in parts:
            if text is None:
                text = self.folded_text(part, scope, depth + 1)
                if text is None:
                    return None
            folded.append(text)
        return ''.join(folded)

    def parts_problem(self, parts, scope, depth, seen):
        if all(text is not None for text, _ in parts):
            return path_text_problem(''.join(text for text, _ in parts))
        head = ''
        for text, _ in parts:
            if text is None:
                break
            head += text
        if head.lower().startswith(URL_PREFIXES) and '\x00' not in head:
            return None  # the scheme is fixed: http(s), whatever follows
        first_text, first_node = parts[0]
        if first_node is None:
            return "it starts with the constant %r, neither an http(s) URL nor followed only by constants" % head
        if any(text is None for text, _ in parts[1:]):
            return 'it joins several values the analyser cannot know'
        tail = ''.join(text for text, _ in parts[1:])
        if '/' in tail or ':' in tail or '\x00' in tail:
            return "it appends %r to a value: only a suffix without '/' or ':' (like '.gz') may follow one" % tail
        return self.read_problem(first_node, scope, depth + 1, seen)

    def name_read_problem(self, node, scope, depth, seen):
        # Unbound, a name raises NameError instead of naming a file.
        meanings = self.meanings_when_bound(node.id, scope)
        if not meanings:
            return "'%s' may hold any value" % node.id
        for meaning in meanings:
            binding = meaning.binding
            if meaning.kind == 'param':
                problem = self.param_read_problem(binding, node.id, depth, seen)
            elif meaning.kind in ('value', 'alias') and binding is not None and binding.value is not None:
                value = binding.value
                problem = self.read_problem(value, self.node_scope.get(id(value)), depth + 1, seen)
            elif meaning.kind == 'value' and binding is not None and self.with_file_object(binding.node, depth, seen):
                problem = None
            elif meaning.kind == 'value' and binding is not None and self.literal_loop_target(binding.node):
                loop = self.parent(binding.node)
                elements = self.literal_elements(loop.iter, self.node_scope.get(id(loop.iter)), depth + 1)
                problem = next((found for found in (
                    self.read_problem(element, self.node_scope.get(id(element)), depth + 1, seen)
                    for element in elements) if found), None)
            else:
                problem = "'%s' may hold a value the analyser cannot follow" % node.id
            if problem:
                return problem
        return None

    def literal_loop_target(self, target):
        """`for name in ("a.txt", "b.txt")` (a statement or a comprehension) over a literal list,
        tuple or set, or over a name bound only to tuples: the name is one of their elements."""
        loop = self.parent(target)
        return (isinstance(loop, (ast.For, ast.AsyncFor, ast.comprehension)) and loop.target is target
                and self.literal_elements(loop.iter, self.node_scope.get(id(loop.iter)), 0) is not None)

    def literal_elements(self, node, scope, depth):
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return None if any(isinstance(e, ast.Starred) for e in node.elts) else node.elts
        if isinstance(node, ast.Name) and scope is not None and depth <= MAX_READ_DEPTH:
            # Only tuples through a name: a list or set it names may have been changed since.
            elements = []
            meanings = self.meanings_when_bound(node.id, scope)
            for meaning in meanings:
                value = meaning.binding.value if meaning.binding is not None else None
                found = None if not isinstance(value, ast.Tuple) or meaning.kind not in ('value', 'alias') else (
                    self.literal_elements(value, self.node_scope.get(id(value)), depth + 1))
                if found is None:
                    return None
                elements += found
            return elements if meanings else None
        return None

    def with_file_object(self, target, depth, seen):
        """`with open(p) as target`: the target is a file object, p checked at open(p)."""
        item = self.parent(target)
        if not (isinstance(item, ast.withitem) and item.optional_vars is target):
            return False
        made = item.context_expr
        return isinstance(made, ast.Call) and self.read_problem(
            made, self.node_scope.get(id(made)), depth + 1, seen) is None

    def param_read_problem(self, binding, name, depth, seen):
        """Why a parameter may name a harmful file, from every call of its function; kept per
        parameter when no cycle or depth limit cut the search short (a helper called from
        thousands of places, with hundreds of reads, was quadratic)."""
        key = (id(binding.node), name)
        if key in self.param_read_cache:
            return self.param_read_cache[key]
        if key in seen:
            self.read_cuts += 1
            return None  # a recursive call passes on what the outer calls passed
        seen.add(key)
        cuts = self.read_cuts
        problem = self.find_param_read_problem(binding, name, depth, seen)
        if self.read_cuts == cuts:
            self.param_read_cache[key] = problem
        return problem

    def find_param_read_problem(self, binding, name, depth, seen):
        function = binding.node
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or binding.index is None or binding.index < 0:
            return "'%s' is a parameter the analyser cannot follow" % name
        if function.decorator_list:
            return "'%s' is a parameter of a decorated function" % name
        if function is self.run_function():
            return "'%s' is the framework's PluginInfo itself, not one of its values" % name
        outer = self.node_scope.get(id(function))
        if outer is None or outer.kind == 'class':
            return "'%s' is a parameter of a method: its callers cannot be followed" % name
        positional = function.args.posonlyargs + function.args.args
        defaults = dict(zip(positional[len(positional) - len(function.args.defaults):], function.args.defaults))
        default = defaults.get(positional[binding.index])
        if default is not None:
            problem = self.read_problem(default, self.node_scope.get(id(default)), depth + 1, seen)
            if problem:
                return problem
        keyword = name if binding.index >= len(function.args.posonlyargs) else ''
        for read in self.name_reads().get(function.name, []):
            read_scope = self.node_scope[id(read)]
            if not any(m.kind == 'def' and m.binding.node is function for m in self.meanings(read.id, read_scope)):
                continue
            call = self.parent(read)
            if not (isinstance(call, ast.Call) and call.func is read):
                return "'%s' is a parameter of %s(), which is passed around, not only called" % (name, function.name)
            argument = call_argument(call, binding.index, keyword)
            if argument is UNKNOWN:
                return "%s() is called with *args or **kwargs" % function.name
            if argument is ABSENT:
                continue
            problem = self.read_problem(argument, read_scope, depth + 1, seen)
            if problem:
                return problem
        return None

    def run_function(self):
        bindings = self.module_scope.bindings.get('run', [])
        if len(bindings) == 1 and bindings[0].kind == 'def' and isinstance(bindings[0].node, ast.FunctionDef):
            function = bindings[0].node
            if not function.decorator_list and (function.args.posonlyargs + function.args.args):
                return function
        return None

    def framework_value(self, node, scope, depth, seen):
        """`PluginInfo["key"]`, `PluginInfo.get("key", default)` and chains of them, read from run()'s
        parameter when nothing in the plugin can change what it holds."""
        current = node
        defaults = []
        while True:
            if (isinstance(current, ast.Subscript) and isinstance(current.ctx, ast.Load)
                    and is_str_constant(current.slice)):
                current = current.value
            elif (isinstance(current, ast.Call) and isinstance(current.func, ast.Attribute)
                  and current.func.attr == 'get' and not current.keywords and 1 <= len(current.args) <= 2
                  and is_str_constant(current.args[0])):
                defaults += current.args[1:]
                current = current.func.value
            else:
                break
        if current is node or not isinstance(current, ast.Name) or not self.is_plugin_info(current, scope):
            return False
        if not self.plugin_info_unchanged():
            seen.add('plugin-info-changed')
            return False
        return all(self.read_problem(d, self.node_scope.get(id(d)), depth + 1, seen) is None for d in defaults)

    def is_plugin_info(self, name, scope):
        run = self.run_function()
        meanings = self.meanings(name.id, scope) if run is not None else []
        return bool(meanings) and all(
            m.kind == 'param' and m.binding.node is run and m.binding.index == 0 for m in meanings)

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

    def check_request_attribute(self, node, scope, load):
        """Stores into a Request's `full_url`, `type`, `selector` or `host`, and set_proxy(), change
        what urlopen() opens after its URL was checked."""
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


# --- the analysis -----------------------------------------------------------------------------

class Analyser(ReadingRules):
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

    # The first pass: parents, scopes and binding sites.
    def collect(self):
        tree = self.tree
        stack = [(tree, None, self.module_scope, 0)]
        parents, node_scope, order = self.parents, self.node_scope, self.order
        fields_of, node_type, push = CHILD_FIELDS, ast.AST, stack.append
        while stack:
            node, parent, scope, depth = stack.pop()
            if depth > MAX_NESTING_DEPTH + 1:
                # The module and the first statement are not nesting: a body's first list is level 1.
                raise DepthError(node)
            key = id(node)
            parents[key] = parent
            node_scope[key] = scope
            order.append(node)
            kind = type(node)
            inner = scope
            if kind in SCOPE_TYPES and node is not tree:
                inner = self.enter(node, scope)
            if kind in BINDING_TYPES:
                self.collect_bindings(node, scope, inner)
            if kind in SYMTABLE_ERROR_TYPES:
                self.needs_symtable = True
            depth += 1
            if inner is scope and kind is not ast.comprehension:
                # Pushed last field first, so that `order` is the tree in pre-order.
                for field in fields_of[kind]:
                    value = getattr(node, field)
                    if type(value) is list:
                        for item in reversed(value):
                            if isinstance(item, node_type):
                                push((item, node, scope, depth))
                    elif isinstance(value, node_type):
                        push((value, node, scope, depth))
            else:
                for field in fields_of[kind]:
                    value = getattr(node, field)
                    for item in (reversed(value) if type(value) is list else (value,)):
                        if isinstance(item, node_type):
                            push((item, node, self.child_scope(node, item, scope, inner), depth))

    def child_scope(self, node, child, outer, inner):
        """Decorators, defaults, annotations, bases and a comprehension's first iterable are
        evaluated in the enclosing scope; the rest of a scope node in its own scope."""
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if child in node.decorator_list or child is node.returns or isinstance(child, ast.arguments):
                return outer
            return inner
        if isinstance(node, ast.Lambda):
            return outer if isinstance(child, ast.arguments) else inner
        if isinstance(node, ast.ClassDef):
            if child in node.decorator_list or child in node.bases or child in node.keywords:
                return outer
            return inner
        if isinstance(node, ast.comprehension) and child is node.iter:
            comp = self.parents.get(id(node))
            if comp is not None and comp.generators[0] is node:
                return outer.parent
        return inner

    def enter(self, node, scope):
        if isinstance(node, ast.Lambda):
            name = 'lambda'
        elif type(node) in COMPREHENSION_NAMES:
            name = COMPREHENSION_NAMES[type(node)]
        else:
            name = node.name
        inner = Scope(node, scope, 'class' if isinstance(node, ast.ClassDef) else 'function', name)
        if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and isinstance(scope.node, ast.ClassDef)
                and node in scope.node.body):
            inner.method_of = scope.node
        if isinstance(node, ast.ClassDef):
            self.plugin_classes[id(node)] = node
        self.scope_of[id(node)] = inner
        self.all_scopes.append(inner)
        return inner

    def collect_bindings(self, node, scope, inner):
        """The bindings the rules follow, and the flags symtable.c would give each name."""
        kind = type(node)
        if kind is ast.Name:
            if isinstance(node.ctx, ast.Load):
                return
            value = None
            parent = self.parents.get(id(node))
            if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and parent.targets[0] is node:
                value = parent.value
            target_scope = scope
            scope.flag(node.id, DEF_LOCAL)
            if isinstance(parent, ast.NamedExpr) and isinstance(scope.node, COMPREHENSION_TYPES):
                # A walrus in a comprehension binds in the enclosing function or module.
                while isinstance(target_scope.node, COMPREHENSION_TYPES):
                    target_scope = target_scope.parent
                if target_scope.kind == 'function' and not target_scope.flags.get(node.id, 0) & DEF_GLOBAL:
                    scope.flag(node.id, DEF_NONLOCAL)
                    target_scope.flag(node.id, DEF_LOCAL)
                else:
                    # At module level, in a function that declares it global, or (a SyntaxError
                    # symtable raises) in a class body.
                    scope.flag(node.id, DEF_GLOBAL)
                    target_scope.flag(node.id, DEF_GLOBAL if target_scope.kind == 'module' else DEF_LOCAL)
            target_scope.bind(node.id, Binding('del' if isinstance(node.ctx, ast.Del) else 'value', node,
                                               value=value))
        elif kind is ast.Import or kind is ast.ImportFrom:
            leading = scope is self.module_scope and self.is_leading(node)
            for alias in node.names:
                if kind is ast.Import:
                    bound = alias.asname or alias.name.split('.')[0]
                    scope.bind(bound, Binding('import', node, alias.name if alias.asname else bound, leading=leading))
                elif alias.name != '*':
                    bound = alias.asname or alias.name
                    qual = '%s.%s' % (node.module or '', alias.name)
                    scope.bind(bound, Binding('import', node, qual, leading=leading))
                else:
                    continue
                scope.flag(bound, DEF_IMPORT)
        elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.Lambda:
            if kind is not ast.Lambda:
                scope.bind(node.name, Binding('def', node))
                scope.flag(node.name, DEF_LOCAL)
            args = node.args
            positional = args.posonlyargs + args.args
            for index, arg in enumerate(positional):
                inner.bind(arg.arg, Binding('param', node, index=index if kind is not ast.Lambda else -1))
            others = args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]
            for arg in others:
                inner.bind(arg.arg, Binding('param', node, index=-1))
            for arg in positional + others:
                if inner.flags.get(arg.arg, 0) & DEF_PARAM:
                    self.needs_symtable = True  # duplicate argument: symtable's SyntaxError
                inner.flag(arg.arg, DEF_PARAM)
        elif kind is ast.ClassDef:
            scope.bind(node.name, Binding('class', node))
            scope.flag(node.name, DEF_LOCAL)
        elif kind is ast.ExceptHandler:
            if node.name:
                scope.bind(node.name, Binding('value', node))
                scope.bind(node.name, Binding('del', node))
                scope.flag(node.name, DEF_LOCAL)
        elif kind is ast.MatchAs or kind is ast.MatchStar:
            if node.name:
                scope.bind(node.name, Binding('value', node))
                scope.flag(node.name, DEF_LOCAL)
        elif kind is ast.MatchMapping:
            if node.rest:
                scope.bind(node.rest, Binding('value', node))
                scope.flag(node.rest, DEF_LOCAL)
        elif kind is ast.Global:
            for name in node.names:
                scope.flag(name, DEF_GLOBAL)
        elif kind is ast.Nonlocal:
            for name in node.names:
                scope.flag(name, DEF_NONLOCAL)

    def is_leading(self, node):
        """An import in the file's first block of imports, before any other code runs."""
        if self.leading is None:
            self.leading = set()
            for statement in self.tree.body:
                if isinstance(statement, (ast.Import, ast.ImportFrom)):
                    self.leading.add(id(statement))
                elif not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)):
                    break
        return id(node) in self.leading

    # Resolution of a name read in a scope, by Python's rules (symtable decides the scope).
    def meanings(self, name, scope, depth=0):
        key = (name, id(scope))
        cached = self.meanings_cache.get(key)
        if cached is None:
            cached = self.meanings_cache[key] = self.resolve(name, scope, depth)
        return cached

    def resolve(self, name, scope, depth):
        if scope.kind == 'function':
            where = scope.scope_of_name(name)
            if where is LOCAL:
                return self.bound_meanings(name, scope, depth)
            if where is FREE:
                return self.enclosing_meanings(name, scope, depth)
            return self.global_meanings(name, depth)
        if scope.kind == 'class':
            # A class body reads its own binding if made yet, else (LOAD_NAME) the module's, or
            # (LOAD_CLASSDEREF) an enclosing function's.
            where = scope.scope_of_name(name)
            if where is GLOBAL_EXPLICIT:
                return self.global_meanings(name, depth)
            result = []
            if where is LOCAL and name in scope.bindings:
                result += self.bound_meanings(name, scope, depth)
            if where is FREE:
                return result + self.enclosing_meanings(name, scope, depth)
            return result + self.global_meanings(name, depth)
        return self.global_meanings(name, depth)

    def meanings_when_bound(self, name, scope):
        """The meanings a name has when its read succeeds: unbound, it raises NameError instead."""
        return [m for m in self.meanings(name, scope) if m.kind != 'undefined']

    def enclosing_meanings(self, name, scope, depth):
        outer = scope.parent
        while outer is not None:
            if outer.kind == 'function' and outer.scope_of_name(name) is LOCAL:
                    return self.bound_meanings(name, outer, depth)
            outer = outer.parent
        return self.global_meanings(name, depth)

    def global_meanings(self, name, depth):
        cached = self.global_cache.get(name)
        if cached is None:
            cached = self.global_cache[name] = self.resolve_global(name, depth)
        return cached

    def resolve_global(self, name, depth):
        bindings = self.global_bindings(name)
        result = unique_meanings(self.meaning_of(b, s, depth) for s, b in bindings if b.kind != 'del')
        only_leading_import = (len(bindings) == 1 and bindings[0][1].kind == 'import'
                               and bindings[0][1].leading)
        if not only_leading_import:
            # A module-level name may be unbound (not yet, deleted, conditional): builtins answer then.
            result.append(Meaning('builtin', name) if name in BUILTIN_NAMES else Meaning('undefined', name))
        return result

    def global_bindings(self, name):
        """Module-level bindings, and those made through `global name` in any function or class."""
        if self.globals_index is None:
            index = {}
            for scope in self.all_scopes:
                for bound, bindings in scope.bindings.items():
                    if scope is self.module_scope or scope.flags.get(bound, 0) & DEF_GLOBAL:
                        index.setdefault(bound, []).extend((scope, b) for b in bindings)
            self.globals_index = index
        return self.globals_index.get(name, [])

    def bound_meanings(self, name, scope, depth):
        return unique_meanings(self.meaning_of(b, scope, depth) for b in scope.bindings.get(name, [])
                               if b.kind != 'del') or [Meaning('value', scope=scope)]

    def meaning_of(self, binding, scope, depth):
        if binding.kind == 'import':
            return Meaning('import', binding.qualname, binding, scope)
        if binding.kind in ('param', 'def', 'class'):
            return Meaning(binding.kind, None, binding, scope)
        if binding.value is not None and depth < 8 and isinstance(binding.value, (ast.Name, ast.Attribute)):
            quals = self.qualnames(binding.value, scope, depth + 1)
            if quals:
                return Meaning('alias', quals, binding, scope)
        return Meaning('value', None, binding, scope)

    def qualnames(self, node, scope, depth=0):
        """The qualified names an expression may stand for (`yaml.SafeLoader`), or [] when unknown."""
        if isinstance(node, ast.Name):
            result = []
            for meaning in self.meanings(node.id, scope, depth):
                if meaning.kind == 'import':
                    result.append(meaning.qualname)
                elif meaning.kind == 'builtin':
                    result.append('builtins.' + meaning.qualname)
                elif meaning.kind == 'alias':
                    result += meaning.qualname
            return result
        if isinstance(node, ast.Attribute):
            return ['%s.%s' % (q, node.attr) for q in self.qualnames(node.value, scope, depth)]
        return []

    # --- the second pass: the rules ------------------------------------------------------------

    def check(self):
        self.prepare_classes()
        node_scope = self.node_scope
        methods = {kind: method.__get__(self) for kind, method in CHECK_METHODS.items()}
        for node in self.order:
            method = methods.get(type(node))
            if method is not None:
                method(node, node_scope[id(node)])
        self.check_contract()

    def report(self, rule, message, node):
        if isinstance(node, ast.Attribute) and getattr(node, 'end_lineno', None):
            # At the attribute's name (always the node's end), not at the start of its object.
            column = max(node.end_col_offset - len(node.attr.encode('utf-8')), 0)
            self.findings.add(rule, message, line=node.end_lineno, column=column)
            return
        self.findings.add(rule, message, node)

    def parent(self, node):
        return self.parents.get(id(node))

    # Classes the plugin defines: the names each binds (what self/cls/super() may use privately).
    def prepare_classes(self):
        self.class_names = {}
        self.private_methods = {}
        for class_id, node in self.plugin_classes.items():
            names = set()
            for statement in node.body:
                if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    names.add(statement.name)
                for target in assigned_names(statement):
                    names.add(target)
            self.class_names[class_id] = names
        for node in self.order:
            if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
                owner = self.own_class(node.value, self.node_scope[id(node)])
                if owner is not None:
                    self.class_names[id(owner)].add(node.attr)

    def own_class(self, value, scope):
        """The plugin class C when `value` is the first parameter of a method of C, or super()
        in its zero-argument form directly in such a method; None otherwise."""
        if isinstance(value, ast.Name):
            meanings = self.meanings(value.id, scope)
            owners = set()
            for meaning in meanings:
                binding = meaning.binding
                if meaning.kind != 'param' or binding.index != 0:
                    return None
                method_scope = self.scope_of.get(id(binding.node))
                if method_scope is None or method_scope.method_of is None or self.is_static(binding.node):
                    return None
                owners.add(id(method_scope.method_of))
            if len(owners) == 1:
                return self.plugin_classes[owners.pop()]
            return None
        if self.is_zero_arg_super(value, scope):
            return scope.method_of
        return None

    def is_zero_arg_super(self, value, scope):
        return (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == 'super'
                and not value.args and not value.keywords and scope.method_of is not None
                and not self.is_static(scope.node) and (scope.node.args.posonlyargs + scope.node.args.args)
                and all(m.kind == 'builtin' for m in self.meanings('super', scope)))

    def is_static(self, function):
        for decorator in function.decorator_list:
            if self.builtin_named(decorator, 'staticmethod', self.node_scope[id(function)]):
                return True
            # An unknown decorator may call the function with anything as its first argument.
            if not self.is_known_decorator(decorator, function):
                return True
        return False

    def is_known_decorator(self, decorator, function):
        scope = self.node_scope[id(function)]
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        quals = self.resolved_qualnames(target, scope)
        if quals and all(q in R['method_decorators'] for q in quals):
            return True
        # `@name.setter` / `@name.getter` of a property defined in the same class.
        return (isinstance(target, ast.Attribute) and target.attr in ('setter', 'getter', 'deleter')
                and self.is_property_of_class(target.value, scope, frozenset()))

    # Door 2: decorators are judged on what their names resolve to, never on their spelling.
    def resolved_qualnames(self, node, scope):
        """qualnames() when every meaning of the expression's root name is an import, a builtin or
        an alias of one; [] when any binding of the plugin's own may answer instead (a module-level
        `def property(f)` beside the builtin)."""
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name):
            return []
        meanings = self.meanings_when_bound(root.id, scope)
        if not meanings or not all(m.kind in ('import', 'builtin', 'alias') for m in meanings):
            return []
        return self.qualnames(node, scope)

    def builtin_named(self, node, name, scope):
        """`node` is the builtin `name` for certain (not a binding of the plugin's of that name)."""
        return self.resolved_qualnames(node, scope) == ['builtins.' + name]

    def is_property_of_class(self, node, scope, seen):
        """`name` in `@name.setter` is a property defined in the same class body: every binding of
        the name there is a def under the builtin @property or under `@other.setter` (getter,
        deleter) of such a property, and one is under @property."""
        if not isinstance(node, ast.Name) or scope.kind != 'class' or node.id in seen or len(seen) > 10:
            return node.id in seen if isinstance(node, ast.Name) else False
        seen = seen | {node.id}
        meanings = self.meanings_when_bound(node.id, scope)
        found = False
        for meaning in meanings:
            function = meaning.binding.node if meaning.kind == 'def' and meaning.scope is scope else None
            if function is None or not function.decorator_list:
                return False
            for decorator in function.decorator_list:
                if self.builtin_named(decorator, 'property', scope):
                    found = True
                elif not (isinstance(decorator, ast.Attribute) and decorator.attr in ('setter', 'getter', 'deleter')
                          and self.is_property_of_class(decorator.value, scope, seen)):
                    return False
        return found

    # --- imports

    def check_Import(self, node, scope):
        for alias in node.names:
            self.check_module(alias.name, alias)

    def check_ImportFrom(self, node, scope):
        if node.level:
            self.report('relative-import', 'Relative imports are not allowed', node)
            return
        module = node.module or ''
        if module == '__future__':
            for alias in node.names:
                if alias.name not in FUTURE_FEATURES:
                    self.report('forbidden-import', "Unknown __future__ feature '%s'" % alias.name, node)
            return
        if not self.check_module(module, node):
            return
        for alias in node.names:
            if alias.name == '*':
                self.report('star-import', 'Star imports are not allowed', node)
                continue
            self.check_member(module, alias.name, node, imported=True)

    def check_module(self, dotted, node):
        if is_forbidden_module(dotted):
            self.report('forbidden-import', "Import of forbidden module '%s'" % dotted, node)
            return False
        if any(part.startswith('_') for part in dotted.split('.')):
            self.report('forbidden-import', "Import of private module '%s' is not allowed" % dotted, node)
            return False
        if dotted not in MODULE_TABLES:
            self.report('forbidden-import', "Import of module '%s' is not allowed" % dotted, node)
            return False
        return True

    def table(self, qualname):
        return MODULE_TABLES.get(qualname) or OBJECT_TABLES.get(qualname)

    def check_member(self, qualname, name, node, imported=False):
        """`qualname.name` where qualname has a table: listed, or refused."""
        table = self.table(qualname)
        if table is None:
            return
        full = '%s.%s' % (qualname, name)
        if imported and is_private(name):
            self.report('private-access', "Import of private name '%s' is not allowed" % full, node)
            return
        if imported and name in FORBIDDEN_MODULES and name not in table.get('members', ()):
            self.report('forbidden-import', "Use of forbidden module '%s' through '%s'" % (name, qualname), node)
            return
        refused = table.get('refused', {})
        if name in refused:
            rule, why = refused[name].split(': ', 1)
            self.report(rule, "'%s' is not allowed: %s" % (full, why), node)
        elif name in table.get('members', ()):
            return
        elif is_forbidden_module(full):
            self.report('forbidden-import', "%s forbidden module '%s'" % ('Import of' if imported else 'Use of', full),
                        node)
        elif full in MODULE_TABLES:
            return
        elif not (is_dunder(name) or is_private(name)) or imported:
            # (Private and dunder names have their own rules; an import of one is refused here.)
            self.report('module-attribute', "'%s' is not part of the allowed API of '%s'" % (name, qualname), node)

    # --- names

    def check_Name(self, node, scope):
        name = node.id
        parent = self.parent(node)
        if not isinstance(node.ctx, ast.Load):
            self.check_name_binding(node, scope)
            return
        self.check_reading_reference(node, self.qualnames(node, scope))
        if name in FORBIDDEN_BUILTINS and name not in BUILTIN_NAMES_OK_AS_ATTRIBUTES:
            if not (isinstance(parent, ast.Call) and parent.func is node and self.literal_attribute_call(parent)):
                self.report('forbidden-name', "Use of forbidden name '%s'" % name, node)
            return
        if is_dunder(name):
            if name not in ALLOWED_PLAIN_DUNDERS:
                self.report('dunder-access', "Access to dunder name '%s' is not allowed" % name, node)
            return
        meanings, builtin, undefined, imports, module_values = self.name_facts(name, scope)
        if scope.kind == 'class':
            self.check_method_in_class_body(node, scope)
        if undefined and is_forbidden_module(name):
            self.report('forbidden-import', "Use of forbidden module '%s', which the plugin does not import" % name,
                        node)
        elif undefined and (is_private(name) or name in MODULE_REACHING_ATTRIBUTES):
            # Door 3: a library module's private name or module, supplied only by globals copied in
            # at run time (owtf's own plugins read public names they never bind: those stay).
            self.report('forbidden-name', "Name '%s' is bound nowhere in the plugin and is not a builtin: its value "
                        'would come from outside the plugin' % name, node)
        is_callee = isinstance(parent, ast.Call) and parent.func is node
        if builtin and name in FORBIDDEN_BUILTINS:
            self.report('forbidden-name', "Use of forbidden name '%s'" % name, node)
            return
        if builtin and name == 'open' and not is_callee:
            self.report('open-write', 'open may only be called directly, with a literal read mode', node)
        for qualname in imports:
            self.check_callable_used_directly(qualname, node, is_callee)
        self.check_resolved_name(node, scope, parent, is_callee, builtin)
        if not is_callee and any(m.kind == 'class' and self.derives_from_formatter(m.binding.node)
                                 for m in meanings) and not self.names_a_type(node):
            self.report('dynamic-name', '%s, a logging.Formatter, may only be called directly (its style '
                        'decides how fields are read)' % name, node)
        if builtin and name == 'super' and not is_callee:
            self.report('private-access', 'super may only be called, as super() in a method', node)
        if module_values and not (isinstance(parent, ast.Attribute) and parent.value is node):
            for qual in module_values:
                rule = MODULES_VALUE_RULE.get(qual, 'module-attribute')
                self.report(rule, "Module '%s' may only be used as %s.<name>" % (qual, qual), node)
        # A call of a name bound nowhere: something outside the plugin would have to supply it.
        if is_callee and undefined:
            for argument in list(parent.args) + [k.value for k in parent.keywords]:
                value = argument.value if isinstance(argument, ast.Starred) else argument
                if self.is_decoder_call(value, scope):
                    self.report('decoded-call', "A decoded value is passed to '%s', which the plugin "
                                "does not define" % name, value)

    def check_resolved_name(self, node, scope, parent, is_callee, builtin):
        """Door 2: rules on what a name means, however it is spelled (`from operator import
        attrgetter`, `kind = type`)."""
        quals = self.qualnames(node, scope)
        if 'operator.attrgetter' in quals and not self.is_key_attrgetter(node, parent):
            self.report('dangerous-attribute', 'attrgetter only as key=attrgetter("name", ...) with literal names '
                        'that pass the attribute rules', node)
        if (builtin and node.id == 'type' or 'builtins.type' in quals) and not is_callee and not (
                isinstance(parent, ast.Compare) or self.names_a_type(node)):
            # Called elsewhere (an alias, map, a list), type(x) hands out the class of x unchecked.
            self.report('class-machinery', 'type may only be called directly (type(x) compared or named) or '
                        'named as a type', node)

    def name_facts(self, name, scope):
        """What check_Name needs of a name read in a scope, once per name and scope: its meanings;
        whether one is the builtin; whether all are undefined; the imports among them; and the
        allowed modules it may stand for."""
        key = (name, id(scope))
        facts = self.name_facts_cache.get(key)
        if facts is None:
            meanings = self.meanings(name, scope)
            imports = [m.qualname for m in meanings if m.kind == 'import']
            module_values = []
            for meaning in meanings:
                quals = [meaning.qualname] if meaning.kind == 'import' else (
                    meaning.qualname if meaning.kind == 'alias' else [])
                module_values += [qual for qual in quals if qual in MODULE_TABLES]
            facts = self.name_facts_cache[key] = (
                meanings, any(m.kind == 'builtin' for m in meanings),
                bool(meanings) and all(m.kind == 'undefined' for m in meanings), imports, module_values)
        return facts

    def check_name_binding(self, node, scope):
        name = node.id
        self.check_bound_name(name, node)
        if is_dunder(name):
            in_class = isinstance(scope.node, ast.ClassDef) and self.parent(self.parent(node)) is scope.node
            if name in CLASS_MACHINERY_DUNDERS and in_class:
                self.report('class-machinery', "Defining '%s' is not allowed" % name, node)
            elif name in READ_ONLY_PLAIN_DUNDERS or not (
                    name in ALLOWED_PLAIN_DUNDERS or (in_class and name in ALLOWED_DUNDER_METHODS)):
                self.report('dunder-access', "Assigning to dunder name '%s' is not allowed" % name, node)
            return
        self.check_not_rebinding_import(name, scope, node)

    def check_bound_name(self, name, node):
        """A forbidden builtin's name is never rebound (`del exec`, `except E as eval`, `global eval`)."""
        if name in FORBIDDEN_BUILTINS and name not in BUILTIN_NAMES_OK_AS_ATTRIBUTES:
            self.report('forbidden-name', "Binding the forbidden name '%s' is not allowed" % name, node)

    def check_not_rebinding_import(self, name, scope, node, qualname=None):
        """One name, one meaning: what an import binds is not rebound (nor shadowed in an inner
        scope) except by an import of the same thing."""
        key = (name, id(scope))
        imports = self.import_cache.get(key)
        if imports is None:
            bindings = [b for _, b in self.global_bindings(name)] + scope.bindings.get(name, [])
            imports = self.import_cache[key] = {b.qualname for b in bindings if b.kind == 'import'}
        if imports and not (qualname is not None and imports == {qualname}):
            self.report('module-tampering', "Rebinding '%s', a name bound by an import, is not allowed" % name, node)

    def check_Global(self, node, scope):
        for name in node.names:
            self.check_bound_name(name, node)
            if is_dunder(name):
                self.report('dunder-access', "Access to dunder name '%s' is not allowed" % name, node)

    check_Nonlocal = check_Global

    def check_FunctionDef(self, node, scope):
        name = node.name
        if is_dunder(name):
            in_class = isinstance(scope.node, ast.ClassDef) and node in scope.node.body
            if name in CLASS_MACHINERY_DUNDERS and in_class:
                self.report('class-machinery', "Defining '%s' is not allowed" % name, node)
            elif not (in_class and name in ALLOWED_DUNDER_METHODS):
                self.report('dunder-access', "Defining '%s' is not allowed" % name, node)
        else:
            self.check_not_rebinding_import(name, scope, node)
        for arg in all_args(node.args):
            if is_dunder(arg.arg):
                self.report('dunder-access', "Parameter name '%s' is not allowed" % arg.arg, arg)
            if arg.arg in FORBIDDEN_BUILTINS and arg.arg not in BUILTIN_NAMES_OK_AS_ATTRIBUTES:
                self.report('forbidden-name', "Parameter name '%s' is not allowed" % arg.arg, arg)
            if arg.annotation is not None:
                self.check_annotation(arg.annotation)
        if node.returns is not None:
            self.check_annotation(node.returns)

    check_AsyncFunctionDef = check_FunctionDef

    def check_Lambda(self, node, scope):
        for arg in all_args(node.args):
            if is_dunder(arg.arg):
                self.report('dunder-access', "Parameter name '%s' is not allowed" % arg.arg, arg)

    def check_AnnAssign(self, node, scope):
        self.check_annotation(node.annotation)

    def check_keyword(self, node, scope):
        if node.arg is not None and is_dunder(node.arg):
            self.report('dunder-access', "Keyword name '%s' is not allowed" % node.arg, node.value)

    def check_MatchAs(self, node, scope):
        if node.name:
            self.check_bound_name(node.name, node)
            self.check_not_rebinding_import(node.name, scope, node)

    check_MatchStar = check_MatchAs

    def check_ExceptHandler(self, node, scope):
        if node.name:
            self.check_bound_name(node.name, node)
            if is_dunder(node.name):
                self.report('dunder-access', "Assigning to dunder name '%s' is not allowed" % node.name, node)
            else:
                self.check_not_rebinding_import(node.name, scope, node)

    def check_alias(self, node, scope):
        parent = self.parent(node)
        if isinstance(parent, ast.ImportFrom):
            if node.name in FORBIDDEN_BUILTINS and node.name not in BUILTIN_NAMES_OK_AS_ATTRIBUTES:
                self.report('forbidden-name', "Import of the forbidden name '%s'" % node.name, parent)
            bound, qualname = node.asname or node.name, '%s.%s' % (parent.module or '', node.name)
        else:
            bound = node.asname or node.name.split('.')[0]
            qualname = node.name if node.asname else bound
        if is_dunder(bound):
            self.report('dunder-access', "Importing as '%s' is not allowed" % bound, parent)
        self.check_bound_name(bound, parent)
        self.check_not_rebinding_import(bound, scope, parent, qualname)

    def check_ClassDef(self, node, scope):
        if is_dunder(node.name):
            self.report('dunder-access', "Class name '%s' is not allowed" % node.name, node)
        else:
            self.check_not_rebinding_import(node.name, scope, node)
        for keyword in node.keywords:
            what = 'metaclass=' if keyword.arg == 'metaclass' else 'class keyword %s=' % keyword.arg
            self.report('class-machinery', '%s is not allowed: it changes how the class is built' % what, keyword)
        for base in node.bases:
            quals = self.qualnames(base, scope)
            if 'builtins.type' in quals or any(q in R['metaclasses'] for q in quals):
                self.report('class-machinery', 'A metaclass (a subclass of type) is not allowed', base)
            if isinstance(base, ast.Starred):
                self.report('class-machinery', 'Bases must be listed, not unpacked', base)

    # --- attributes

    def check_Attribute(self, node, scope):
        attr = node.attr
        parent = self.parent(node)
        load = isinstance(node.ctx, ast.Load)
        quals = self.qualnames(node.value, scope)
        if not load and quals:
            self.report('module-tampering', "Assigning to attributes of '%s' is not allowed" % quals[0], node)
        elif not load and not self.plugin_object(node.value, scope, 0):
            root = self.chain_root(node.value, scope)
            if root:
                rule = 'dynamic-name' if root.split('.')[0] in ('dataclasses', 'typing', 'enum') else 'module-tampering'
                self.report(rule, "Assigning to attributes of objects '%s' hands out is not allowed" % root, node)
            else:
                self.report('module-tampering', "Assigning to attributes of an object the analyser cannot trace to the "
                            "plugin's own classes is not allowed: it may be a library object (a dataclasses Field, "
                            'whose name becomes code)', node)
        self.check_attribute_name(attr, node, node.value, scope, load, parent)
        self.check_request_attribute(node, scope, load)
        if load and quals:
            self.check_reading_reference(node, ['%s.%s' % (q, attr) for q in quals])
        for qual in quals:
            self.check_member(qual, attr, node)
        if attr in ('format', 'format_map'):
            self.check_format(node, scope, parent)
        called = isinstance(parent, ast.Call) and parent.func is node
        for qual in quals:
            if '%s.%s' % (qual, attr) in ('yaml.load', 'yaml.load_all') and not called:
                self.report('unsafe-yaml-load', 'yaml.%s may only be called directly, with Loader=yaml.SafeLoader'
                            % attr, node)
        for qual in quals:
            self.check_callable_used_directly('%s.%s' % (qual, attr), node, called)
        if attr == 'register' and load:
            self.check_register(node, scope, parent)
        if attr == 'open' and not any(q + '.open' in OPEN_LIKE for q in quals):
            self.check_method_open(node, parent)
        if load and isinstance(node.value, ast.Name) and not is_dunder(attr):
            self.check_method_through_class(node, scope)

    def plugin_object(self, value, scope, depth):
        """Door 3: `value` is an object of the plugin's own for certain, whatever binds its name: self
        or cls in a method, a plugin class or def, or a local bound only to `C(...)` of a plugin class
        with plugin bases and no `__new__`, or to `types.SimpleNamespace(...)`, or a parameter of a
        helper every call of which passes one. A for or with target, another parameter, a match capture, an except name, a comprehension's value, a name also bound by
        unpacking or `+=`, or any attribute or item of an object may hold a library object."""
        if not isinstance(value, ast.Name) or depth > 4:
            return False
        if self.own_class(value, scope) is not None:
            return True
        meanings = self.meanings_when_bound(value.id, scope)
        if not meanings:
            return False
        for meaning in meanings:
            if meaning.kind in ('class', 'def'):
                continue
            if meaning.kind == 'param' and self.param_plugin_object(meaning.binding, value.id, depth):
                continue  # `def fill(report): report.title = ...`, every call passing a plugin object
            made = meaning.binding.value if meaning.kind == 'value' and meaning.binding is not None else None
            if isinstance(made, ast.Name) and self.plugin_object(made, self.node_scope[id(made)], depth + 1):
                continue
            loop = self.parent(meaning.binding.node) if meaning.kind == 'value' and meaning.binding else None
            if (isinstance(loop, (ast.For, ast.AsyncFor, ast.comprehension)) and loop.target is meaning.binding.node
                    and self.plugin_objects(loop.iter, self.node_scope[id(loop.iter)], depth + 1)):
                continue  # `for finding in findings`, each element a plugin object
            if not (isinstance(made, ast.Call) and self.makes_plugin_object(made, self.node_scope[id(made)])):
                return False
        return True

    def param_plugin_object(self, binding, name, depth):
        """A parameter of a plain function (not a method, not decorated, not run(), only ever
        called directly, never with *args or **kwargs) that every call passes a plugin object, or
        leaves at a default of None. Kept per parameter: stores in a helper called from many
        places would otherwise scan every call again."""
        function = binding.node
        if (not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or binding.index is None
                or binding.index < 0 or function.decorator_list or function is self.run_function()):
            return False
        outer = self.node_scope.get(id(function))
        if outer is None or outer.kind == 'class':
            return False
        cache = self.__dict__.setdefault('param_plugin_object_cache', {})
        key = (id(function), binding.index)
        if key not in cache:
            cache[key] = False  # a helper passing its parameter on to itself proves nothing
            cache[key] = self.find_param_plugin_object(function, binding.index, name, depth)
        return cache[key]

    def find_param_plugin_object(self, function, index, name, depth):
        positional = function.args.posonlyargs + function.args.args
        defaults = dict(zip(positional[len(positional) - len(function.args.defaults):], function.args.defaults))
        default = defaults.get(positional[index])
        if default is not None and not (isinstance(default, ast.Constant) and default.value is None):
            return False
        keyword = name if index >= len(function.args.posonlyargs) else ''
        for read in self.name_reads().get(function.name, []):
            read_scope = self.node_scope[id(read)]
            if not any(m.kind == 'def' and m.binding.node is function for m in self.meanings(read.id, read_scope)):
                continue
            call = self.parent(read)
            if not (isinstance(call, ast.Call) and call.func is read):
                return False
            argument = call_argument(call, index, keyword)
            if argument is UNKNOWN:
                return False
            if argument is not ABSENT and not self.plugin_element(argument, read_scope, depth + 1):
                return False
        return True

    def plugin_objects(self, sequence, scope, depth):
        """Every element of `sequence` is a plugin object: a literal list or tuple of them, a
        comprehension that makes them, or a name bound only to such, that is only iterated,
        sorted or counted (no append() or store can have added a library object)."""
        if depth > 4:
            return False
        if isinstance(sequence, (ast.List, ast.Tuple, ast.Set)):
            return all(self.plugin_element(e, scope, depth) for e in sequence.elts)
        if isinstance(sequence, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            inner = self.scope_of[id(sequence)]
            return self.plugin_element(sequence.elt, inner, depth)
        if not isinstance(sequence, ast.Name):
            return False
        # Once per name and scope: each store in a loop over it would scan its every read again.
        cache = self.__dict__.setdefault('plugin_objects_cache', {})
        key = (sequence.id, id(scope))
        if key not in cache:
            cache[key] = False  # a name bound to itself, through a cycle, proves nothing
            cache[key] = self.find_plugin_objects(sequence, scope, depth)
        return cache[key]

    def find_plugin_objects(self, sequence, scope, depth):
        meanings = self.meanings_when_bound(sequence.id, scope)
        bindings = set()
        for meaning in meanings:
            made = meaning.binding.value if meaning.kind == 'value' and meaning.binding is not None else None
            if made is None or not self.plugin_objects(made, self.node_scope[id(made)], depth + 1):
                return False
            bindings.add(id(meaning.binding))
        if not meanings:
            return False
        for read in self.name_reads().get(sequence.id, ()):
            read_scope = self.node_scope[id(read)]
            if not any(id(m.binding) in bindings for m in self.meanings(read.id, read_scope)):
                continue
            parent = self.parent(read)
            if isinstance(parent, (ast.For, ast.AsyncFor, ast.comprehension)) and parent.iter is read:
                continue
            if isinstance(parent, ast.Call) and read in parent.args and all(
                    q in ITERATING_BUILTINS for q in self.resolved_qualnames(parent.func, read_scope) or ['?']):
                continue
            return False
        return True

    def plugin_element(self, element, scope, depth):
        if isinstance(element, ast.Call):
            return self.makes_plugin_object(element, scope)
        return self.plugin_object(element, scope, depth + 1)

    def makes_plugin_object(self, call, scope):
        quals = self.resolved_qualnames(call.func, scope)
        if quals == ['types.SimpleNamespace']:
            return True
        if quals in (['copy.copy'], ['copy.deepcopy']) and len(call.args) == 1 and not call.keywords:
            # A copy of a plugin object is one, its class rebuilt by copy's reconstruction (a plugin
            # defines no __reduce_ex__, __getstate__ or __setstate__: dunder-access), unless some
            # plugin class has a __copy__ or __deepcopy__, which may return anything.
            return not any({'__copy__', '__deepcopy__'} & self.class_names[id(c)]
                           for c in self.plugin_classes.values()) and self.plugin_element(call.args[0], scope, 0)
        if not isinstance(call.func, ast.Name):
            return False
        meanings = self.meanings_when_bound(call.func.id, scope)
        return bool(meanings) and all(
            m.kind == 'class' and self.is_closed_class(m.binding.node, 0)
            and not any('__new__' in self.class_names[id(c)] for c in self.plugin_ancestry(m.binding.node))
            for m in meanings)

    def chain_root(self, expression, scope, depth=0):
        """The import an object comes from, through calls, attributes and subscripts
        (`logging.getLogger().manager`, or a local bound once to such a value), or None."""
        while isinstance(expression, (ast.Attribute, ast.Call, ast.Subscript)):
            if isinstance(expression, ast.Call) and self.is_builtin_call(expression, 'type', scope) and expression.args:
                expression = expression.args[0]  # type(x) is x's class: patching it patches x's kind
                continue
            expression = expression.func if isinstance(expression, ast.Call) else expression.value
        if not isinstance(expression, ast.Name) or depth > 4:
            return None
        quals = self.qualnames(expression, scope)
        if quals and not all(q.startswith('builtins.') for q in quals):
            return quals[0]
        for meaning in self.meanings(expression.id, scope):
            binding = meaning.binding
            if meaning.kind == 'value' and binding is not None and binding.value is not None:
                root = self.chain_root(binding.value, meaning.scope, depth + 1)
                if root:
                    return root
        return None

    def check_attribute_name(self, attr, node, value, scope, load, parent, in_pattern=False):
        """The rules on an attribute name, whatever it is read on."""
        if attr in FORBIDDEN_BUILTINS and attr not in BUILTIN_NAMES_OK_AS_ATTRIBUTES:
            self.report('forbidden-name', "Use of forbidden name '%s'" % attr, node)
            return
        if is_dunder(attr):
            called = isinstance(parent, ast.Call) and parent.func is node
            own = value is not None and self.own_class(value, scope) is not None
            nxt = parent.attr if isinstance(parent, ast.Attribute) and parent.value is node else None
            allowed = ((attr in READABLE_DUNDER_ATTRIBUTES and load)
                       or (attr == '__class__' and load and nxt in ('__name__', '__qualname__'))
                       or (attr in ALLOWED_DUNDER_METHODS and called
                           and (own or self.is_base_call_on_self(node, scope))))
            if not allowed:
                self.report('dunder-access', "Access to dunder name '%s' is not allowed" % attr, node)
            return
        if attr in DANGEROUS_ATTRIBUTES or attr.startswith(DANGEROUS_ATTRIBUTE_PREFIXES):
            self.report('dangerous-attribute', "Use of dangerous attribute '%s'" % attr, node)
            return
        if attr in MODULE_REACHING_ATTRIBUTES:
            self.report('dangerous-attribute', "Attribute '%s' reaches a forbidden module" % attr, node)
            return
        if attr in FILE_WRITING_METHODS:
            self.report('open-write', "Writing files with .%s() is not allowed" % attr, node)
            return
        if attr == 'attrgetter' and not self.is_key_attrgetter(node, parent):
            self.report('dangerous-attribute', 'attrgetter only as key=attrgetter("name", ...) with literal names '
                        'that pass the attribute rules', node)
            return
        if (attr in NAME_TAKING_CALLS and not (isinstance(parent, ast.Call) and parent.func is node)
                and not self.names_a_type(node)):
            if not in_pattern:
                self.report('dynamic-name', '%s may only be called directly, with literal names' % attr, node)
            return
        if is_private(attr) and attr not in PUBLIC_UNDERSCORE_ATTRIBUTES:
            owner = self.own_class(value, scope) if value is not None else None
            if owner is None:
                owner = self.checked_instance_class(value, node, scope)
            if owner is None or not self.owns_name(owner, attr):
                why = ''
                if owner is not None and self.trust_ended(owner):
                    why = (": class '%s' may not be what its statement says (a decorator, a class keyword, a "
                           'library base, a class handed out as a value, or over %d ancestors)'
                           % (owner.name, MAX_TRUSTED_ANCESTRY))
                elif owner is not None:
                    why = (': no class of its own binds it for certain (in the class body or in __init__), '
                           'or a library base of its family has it')
                self.report('private-access', "Access to private attribute '%s' is not allowed%s" % (attr, why), node)

    def checked_instance_class(self, value, node, scope):
        """The method's class C when `value` is a parameter of the method, never rebound, that
        isinstance(value, C) has checked where `node` runs (`if isinstance(other, C): ...`,
        `isinstance(other, C) and ...`, or after `if not isinstance(other, C): return ...`).
        Only then is `other._key` the class's own name: on any other object, a class that binds
        a private name would unlock it everywhere (`loop._make_subprocess_transport`)."""
        method = scope.method_of
        if not isinstance(value, ast.Name) or method is None:
            return None
        meanings = self.meanings(value.id, scope)
        if meanings and all(m.kind == 'value' and m.scope is scope and m.binding is not None and self.builds_instance_of(
                m.binding.value, method, scope) for m in meanings):
            return method  # `new = C(...)`: an instance of the class itself
        if not meanings or not all(m.kind == 'param' and m.binding.node is scope.node for m in meanings):
            return None
        if self.only_compared(node) and self.comparisons_are_pure():
            return method  # `self._severity < other._severity`: a value compared is never run or kept
        is_check = lambda test: self.is_isinstance_check(test, value.id, method, scope)
        child, parent = node, self.parent(node)
        while parent is not None and child is not scope.node:
            if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test and (
                    child in parent.body if isinstance(parent, ast.If) else child is parent.body):
                if is_check(parent.test):
                    return method
            elif isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.And):
                if any(is_check(v) for v in parent.values[:parent.values.index(child)]):
                    return method
            for field in ('body', 'orelse', 'finalbody'):
                block = getattr(parent, field, None)
                if isinstance(block, list):
                    position = self.position_in_block(block, child)
                    if position is not None:
                        guard = self.first_guard(block, value.id, method, is_check)
                        if guard is not None and guard < position:
                            return method
            child, parent = parent, self.parent(parent)
        return None

    def position_in_block(self, block, statement):
        """The index of a statement in its block, from an index built once per block (a scan per
        read was quadratic in a long method)."""
        index = self.block_index.get(id(block))
        if index is None:
            index = self.block_index[id(block)] = {id(each): position for position, each in enumerate(block)}
        return index.get(id(statement))

    def first_guard(self, block, name, method, is_check):
        """The index of the first `if not isinstance(name, C): return ...` of a block, or None; once
        per block, name and class."""
        key = (id(block), name, id(method))
        if key not in self.guard_cache:
            found = None
            for position, earlier in enumerate(block):
                if (isinstance(earlier, ast.If) and isinstance(earlier.test, ast.UnaryOp)
                        and isinstance(earlier.test.op, ast.Not) and is_check(earlier.test.operand)
                        and isinstance(earlier.body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))):
                    found = position
                    break
            self.guard_cache[key] = found
        return self.guard_cache[key]

    def builds_instance_of(self, value, cls, scope):
        """`C(...)` (or `cls(...)` in C's classmethod) where C has no base from outside the plugin
        and no `__new__` of its own, which could return any object."""
        if (not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)) or self.trust_ended(cls)
                or not self.only_plugin_bases(cls)):
            return False
        if any('__new__' in self.class_names[id(c)] for c in self.plugin_ancestry(cls)):
            return False
        if self.own_class(value.func, scope) is cls:
            return True
        meanings = self.meanings_when_bound(value.func.id, scope)
        return bool(meanings) and all(m.kind == 'class' and m.binding.node is cls for m in meanings)

    def binds_in_plugin_ancestry(self, cls, name):
        """The class or one of its plugin bases binds the name (a private name it owns)."""
        return any(name in self.class_names[id(c)] for c in self.plugin_ancestry(cls))

    def plugin_ancestry(self, cls):
        """The class and every plugin class among its bases, however deep (each once)."""
        found = self.ancestry_cache.get(id(cls))
        if found is None:
            found, seen, pending = [], set(), [cls]
            while pending:
                current = pending.pop()
                if id(current) in seen:
                    continue  # a set: a scan of `found` made a chain of classes cubic
                seen.add(id(current))
                found.append(current)
                outer = self.node_scope[id(current)]
                for base in current.bases:
                    if isinstance(base, ast.Name):
                        pending += [m.binding.node for m in self.meanings_when_bound(base.id, outer) if m.kind == 'class']
            self.ancestry_cache[id(cls)] = found
        return found

    def only_compared(self, node):
        parent = self.parent(node)
        while isinstance(parent, (ast.Tuple, ast.List)) and isinstance(parent.ctx, ast.Load):
            node, parent = parent, self.parent(parent)
        return isinstance(parent, ast.Compare)

    def is_isinstance_check(self, test, name, cls, scope):
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            return any(self.is_isinstance_check(v, name, cls, scope) for v in test.values)
        if not (self.is_builtin_call(test, 'isinstance', scope) and len(test.args) == 2 and not test.keywords
                and all(m.kind == 'builtin' for m in self.meanings_when_bound('isinstance', scope))):
            return False  # the builtin for certain: a plugin's own isinstance could answer True
        subject, checked = test.args
        if not (isinstance(subject, ast.Name) and subject.id == name and isinstance(checked, ast.Name)):
            return False
        meanings = self.meanings_when_bound(checked.id, scope)
        return (bool(meanings) and all(m.kind == 'class' and m.binding.node is cls for m in meanings)
                and not self.trust_ended(cls) and self.only_plugin_bases(cls))

    def only_plugin_bases(self, cls):
        """No base from outside the plugin: an ABC's register() or a runtime Protocol would make
        isinstance true of any object."""
        for current in self.plugin_ancestry(cls):
            if current.keywords:
                return False
            outer = self.node_scope[id(current)]
            for base in current.bases:
                meanings = self.meanings_when_bound(base.id, outer) if isinstance(base, ast.Name) else []
                if not meanings or not all(m.kind == 'class' for m in meanings):
                    return False
        return True

    # --- door 1: the exemptions trust the class object, which the class statement only describes.
    # self/cls/super(), `C(...)`, isinstance, a value only compared and a class constant are
    # trusted only in a family of classes whose every possible class object the tree proves: the
    # classes of the plugin that one another derive from, each made by its statement alone, with
    # no base but such classes and the library classes of `known_bases` (whose names the tables
    # list), and no class object handed to code that could derive from it.

    def class_families(self):
        """Once per plugin: (ended, library_names, has_library). `ended` holds the ids of the classes
        whose trust ends: one not plain (a class keyword, a decorator that may return another
        class, a base that is not a plugin class or a known library class, handed out as a value),
        every class deriving from one, and every class one derives from (its methods' self may be
        an instance of it). library_names maps a class id to the names the known library bases of
        its family hold; has_library to whether the family has one."""
        if self.families is not None:
            return self.families
        known = R['known_bases']
        classes = self.plugin_classes
        parent_of = {}  # union-find over "derives from": one family per connected set
        bases_of, children, library, not_plain = {}, {}, {}, set(self.escaped_classes())

        def root(class_id):
            while parent_of.setdefault(class_id, class_id) != class_id:
                parent_of[class_id] = parent_of[parent_of[class_id]]
                class_id = parent_of[class_id]
            return class_id

        for class_id, cls in classes.items():
            scope = self.node_scope[class_id]
            names = library[class_id] = set()
            bases_of[class_id] = []
            if cls.keywords or not all(self.is_identity_decorator(d, scope) for d in cls.decorator_list):
                not_plain.add(class_id)
            for base in cls.bases:
                plugin_bases = self.plugin_base_classes(base, scope)
                quals = None if plugin_bases is not None else self.known_library_base(base, scope)
                if plugin_bases is not None:
                    for parent in plugin_bases:
                        bases_of[class_id].append(id(parent))
                        children.setdefault(id(parent), []).append(class_id)
                        parent_of[root(class_id)] = root(id(parent))
                elif quals is not None:
                    for qual in quals:
                        names.update(known[qual])
                else:
                    not_plain.add(class_id)
        ended, pending = set(), list(not_plain)
        while pending:  # down: a class deriving from one not plain is not either
            class_id = pending.pop()
            if class_id not in ended:
                ended.add(class_id)
                pending += children.get(class_id, [])
        up = set()
        pending = list(ended)
        while pending:  # up: the classes they derive from
            class_id = pending.pop()
            if class_id not in up:
                up.add(class_id)
                pending += bases_of.get(class_id, [])
        family_names, family_library = {}, {}
        for class_id, names in library.items():
            family = root(class_id)
            family_names.setdefault(family, set()).update(names)
            family_library[family] = family_library.get(family, False) or bool(
                [b for b in classes[class_id].bases if self.plugin_base_classes(b, self.node_scope[class_id]) is None])
        library_names = {class_id: family_names[root(class_id)] for class_id in classes}
        has_library = {class_id: family_library[root(class_id)] for class_id in classes}
        self.families = (up, library_names, has_library, bases_of)
        return self.families

    def plugin_base_classes(self, base, scope):
        """The plugin ClassDefs a base names, when it can only be one of them; else None."""
        if not isinstance(base, ast.Name):
            return None
        meanings = self.meanings_when_bound(base.id, scope)
        if meanings and all(m.kind == 'class' for m in meanings):
            return [m.binding.node for m in meanings]
        return None

    def resolved_qualnames(self, node, scope):
        """qualnames() when every meaning of the expression's name is an import, an alias or a
        builtin (qualnames() leaves the others out); else None."""
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name):
            return None
        meanings = self.meanings_when_bound(root.id, scope)
        if not meanings or not all(m.kind in ('import', 'alias', 'builtin') for m in meanings):
            return None
        return self.qualnames(node, scope) or None

    def known_library_base(self, base, scope):
        quals = self.resolved_qualnames(base, scope)
        return quals if quals and all(q in R['known_bases'] for q in quals) else None

    def is_identity_decorator(self, decorator, scope):
        """A class decorator that returns the class it is given (`@dataclass`, `@total_ordering`)."""
        quals = self.resolved_qualnames(decorator.func if isinstance(decorator, ast.Call) else decorator, scope)
        return bool(quals) and all(q in R['identity_class_decorators'] for q in quals)

    def escaped_classes(self):
        """The ids of plugin classes handed out as values (stored, passed, returned, `C.mro()`):
        the code that receives one may derive a class from it (`typing.ABCMeta("X",
        (OpenerDirector, C), {})`). A class object is reached by its name, by a classmethod's
        `cls`, or as an attribute when it is defined in a class body (`Outer.Inner`)."""
        escaped = set()
        reads = self.name_reads()
        for name in {cls.name for cls in self.plugin_classes.values()}:
            for read in reads.get(name, []):
                if self.names_class_in_place(read):
                    continue
                for meaning in self.meanings_when_bound(name, self.node_scope[id(read)]):
                    if meaning.kind == 'class':
                        escaped.add(id(meaning.binding.node))
        nested, first_params = {}, set()
        for cls in self.plugin_classes.values():
            if isinstance(self.parent(cls), ast.ClassDef):
                nested.setdefault(cls.name, []).append(id(cls))
            for statement in cls.body:
                if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and self.is_classmethod(statement):
                    first_params.update(a.arg for a in (statement.args.posonlyargs + statement.args.args)[:1])
        for name in first_params:
            for read in reads.get(name, []):
                if not self.names_class_in_place(read):
                    owner = self.own_class(read, self.node_scope[id(read)])
                    if owner is not None:
                        escaped.add(id(owner))  # `return cls` (a subclass's too: its family ends)
        if nested:
            for node in self.order:
                if (type(node) is ast.Attribute and node.attr in nested and type(node.ctx) is ast.Load
                        and not self.names_class_in_place(node)):
                    escaped.update(nested[node.attr])
        return escaped

    def names_class_in_place(self, node):
        """A class object read where it stays what it is: called, a base, an attribute's object,
        checked (the builtin isinstance/issubclass, super(C, self)), caught, raised, a class pattern,
        a decorator, an annotation of a function, or compared by `is` (by `==` or `in` when no
        comparison method of the plugin keeps what it is handed)."""
        parent = self.parent(node)
        if isinstance(parent, ast.Call) and parent.func is node:
            return True
        if isinstance(parent, ast.Attribute):
            return parent.value is node and parent.attr != 'mro'  # C.mro() lists C itself
        if isinstance(parent, ast.ClassDef):
            return node in parent.bases or node in parent.decorator_list
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and node in parent.decorator_list:
            return True
        annotation = False
        while isinstance(parent, (ast.Tuple, ast.BinOp, ast.Subscript)):
            # `A | B` and `list[C]` of types only: a plugin object's `__ror__` or `__getitem__`
            # would be handed the class. A subscript only as a type hint.
            if isinstance(parent, ast.BinOp) and not (isinstance(parent.op, ast.BitOr) and all(
                    self.is_type_expression(side, self.node_scope[id(parent)]) for side in (parent.left, parent.right))):
                return False
            if isinstance(parent, ast.Subscript):
                if parent.value is node or not self.is_type_expression(parent.value, self.node_scope[id(parent)]):
                    return False
                annotation = True
            node, parent = parent, self.parent(parent)
        if isinstance(parent, (ast.arg, ast.FunctionDef, ast.AsyncFunctionDef)):
            return parent.annotation is node if isinstance(parent, ast.arg) else parent.returns is node
        if isinstance(parent, ast.AnnAssign):
            # A class body's annotation is handed back at run time (dataclasses.fields(C)[0].type).
            return parent.annotation is node and not isinstance(self.parent(parent), ast.ClassDef)
        if annotation:
            return False
        if isinstance(parent, ast.Call):
            func = parent.func
            return (isinstance(func, ast.Name) and func.id in ('isinstance', 'issubclass', 'super')
                    and len(parent.args) == 2 and not parent.keywords
                    and parent.args[0 if func.id == 'super' else 1] is node
                    and all(m.kind == 'builtin' for m in self.meanings(func.id, self.node_scope[id(parent)])))
        if isinstance(parent, ast.Compare):
            return all(isinstance(op, (ast.Is, ast.IsNot)) for op in parent.ops) or self.comparisons_are_pure()
        if isinstance(parent, ast.ExceptHandler):
            return parent.type is node
        return isinstance(parent, (ast.Raise, ast.MatchClass))

    def is_type_expression(self, node, scope):
        """None, a class, a builtin or an import (`typing.Optional`), a subscript or `|` of them:
        no plugin object whose methods an operator would call."""
        if isinstance(node, ast.Constant):
            return node.value is None
        if isinstance(node, ast.BinOp):
            return (isinstance(node.op, ast.BitOr) and self.is_type_expression(node.left, scope)
                    and self.is_type_expression(node.right, scope))
        if isinstance(node, ast.Subscript):
            return self.is_type_expression(node.value, scope)
        while isinstance(node, ast.Attribute):
            node = node.value
        if not isinstance(node, ast.Name):
            return False
        meanings = self.meanings_when_bound(node.id, scope)
        return bool(meanings) and all(m.kind in ('class', 'builtin', 'import', 'alias') for m in meanings)

    def trust_ended(self, cls):
        return id(cls) in self.class_families()[0] or not self.small_ancestry(cls)

    def small_ancestry(self, cls):
        """At most MAX_TRUSTED_ANCESTRY plugin classes in C's ancestry, counted with a bounded walk
        once per class (a base already too deep answers at once): no ordinary plugin has more,
        and the whole ancestry of each class of a chain of thousands was quadratic."""
        small, bases_of = self.ancestry_small, self.class_families()[3]
        key = id(cls)
        if key not in small:
            seen, pending, within = set(), [key], True
            while pending:
                current = pending.pop()
                if current in seen:
                    continue
                if small.get(current) is False or len(seen) == MAX_TRUSTED_ANCESTRY:
                    within = False
                    break
                seen.add(current)
                pending += bases_of.get(current, ())
            small[key] = within
        return small[key]

    def owns_name(self, cls, name):
        """Whether `name` read on an instance (or the class) of C's family is the plugin's own:
        the family's trust has not ended, no known library base of it holds the name, and either
        the family has no library base or a plugin class C derives from binds it by a statement
        certain to have run."""
        if self.trust_ended(cls) or name in self.class_families()[1][id(cls)]:
            return False
        if not self.class_families()[2][id(cls)]:
            # No library class in the family: every class object it has is one of the plugin's
            # statements over `object`, which holds no private name, so the name can only be
            # the plugin's own, wherever it is bound (`self._start` set in `__enter__`).
            return True
        certain = self.certainly_bound()
        return any(name in certain.get(id(c), ()) for c in self.plugin_ancestry(cls))

    def certainly_bound(self):
        """Per class id, the names a class binds for certain: a def, a class or an assignment with
        a value directly in its body, and attributes stored on self in `__init__`/`__post_init__`
        or a method they call on self; not annotations without a value, nor a name `del` anywhere
        in the body or on self, nor stores in other methods (which may never run)."""
        if self.certain_names is not None:
            return self.certain_names
        certain, deleted, stores, calls = {}, {}, {}, {}
        for class_id, cls in self.plugin_classes.items():
            names = certain[class_id] = set()
            for name, bindings in self.scope_of[class_id].bindings.items():
                if any(b.kind == 'del' for b in bindings):
                    continue
                for binding in bindings:
                    statement = binding.node if binding.kind in ('def', 'class') else self.statement_of(binding.node)
                    if statement is not None and self.parent(statement) is cls and (
                            binding.kind in ('def', 'class') or isinstance(statement, (ast.Assign, ast.AugAssign))
                            or (isinstance(statement, ast.AnnAssign) and statement.value is not None)):
                        names.add(name)
        for node in self.order:
            if type(node) is not ast.Attribute or not isinstance(node.value, ast.Name):
                continue
            scope = self.node_scope[id(node)]
            method = scope.node
            if scope.method_of is None or self.own_class(node.value, scope) is not scope.method_of:
                continue
            key = (id(scope.method_of), method.name)
            if isinstance(node.ctx, ast.Del):
                deleted.setdefault(id(scope.method_of), set()).add(node.attr)
            elif isinstance(node.ctx, ast.Store):
                stores.setdefault(key, set()).add(node.attr)
            elif isinstance(self.parent(node), ast.Call) and self.parent(node).func is node:
                calls.setdefault(key, set()).add(node.attr)
        for class_id in self.plugin_classes:
            run, pending = set(), ['__init__', '__post_init__']
            while pending:
                name = pending.pop()
                if name not in run:
                    run.add(name)
                    pending += calls.get((class_id, name), ())
                    certain[class_id] |= stores.get((class_id, name), set())
            certain[class_id] -= deleted.get(class_id, set())
        self.certain_names = certain
        return certain

    def statement_of(self, node):
        while node is not None and not isinstance(node, ast.stmt):
            node = self.parent(node)
        return node

    def comparisons_are_pure(self):
        """Whether every comparison or `in` method of the plugin's classes (`__eq__`, `__lt__`,
        `__contains__`, ...) is a def that uses its other operand only to compare it or check its
        class: `a == other._x` hands other._x to them, and one that keeps or returns it (`return
        other`) would give the plugin a library's private value."""
        if self.pure_comparisons is None:
            pure = True
            for class_id in self.plugin_classes:
                for name, bindings in self.scope_of[class_id].bindings.items():
                    if name in COMPARISON_METHODS and not all(
                            b.kind == 'def' and self.is_pure_comparison(b.node) for b in bindings):
                        pure = False
            self.pure_comparisons = pure
        return self.pure_comparisons

    def is_pure_comparison(self, function):
        args = function.args
        if (function.decorator_list or isinstance(function, ast.AsyncFunctionDef) or args.vararg or args.kwarg
                or args.kwonlyargs or len(args.posonlyargs + args.args) != 2):
            return False
        other = (args.posonlyargs + args.args)[1].arg
        for node in ast.walk(function):
            if isinstance(node, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef) + COMPREHENSION_TYPES):
                if node is not function:
                    return False
            if isinstance(node, ast.Name) and node.id == other and not self.only_compared_operand(node):
                return False
        return True

    def only_compared_operand(self, node):
        """`other`, `other.x.y` or `type(other)`, alone or in a tuple, as an operand of a comparison
        or the first argument of isinstance, whose result is returned, tested or negated."""
        parent = self.parent(node)
        while True:
            if isinstance(parent, ast.Attribute) and parent.value is node:
                pass
            elif isinstance(parent, ast.Tuple) and isinstance(parent.ctx, ast.Load):
                pass
            elif (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.args
                  and parent.args[0] is node and parent.func.id in ('type', 'isinstance')
                  and all(m.kind == 'builtin' for m in self.meanings(parent.func.id, self.node_scope[id(parent)]))):
                if parent.func.id == 'isinstance':
                    node, parent = parent, self.parent(parent)
                    break
            elif isinstance(parent, ast.Compare):
                node, parent = parent, self.parent(parent)
                break
            else:
                return False
            node, parent = parent, self.parent(parent)
        while isinstance(parent, (ast.BoolOp, ast.Compare)) or (
                isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)):
            node, parent = parent, self.parent(parent)
        return (isinstance(parent, ast.Return) or (isinstance(parent, (ast.If, ast.IfExp, ast.While, ast.Assert))
                                                     and parent.test is node))

    def is_key_attrgetter(self, node, call):
        if not (isinstance(call, ast.Call) and call.func is node and call.args and not call.keywords):
            return False
        keyword = self.parent(call)
        if not (isinstance(keyword, ast.keyword) and keyword.arg == 'key'):
            return False
        for argument in call.args:
            if not is_str_constant(argument):
                return False
            for part in argument.value.split('.'):
                if not IDENTIFIER.match(part) or attribute_problem(part) or part in FILE_WRITING_METHODS:
                    return False
        return True

    def check_callable_used_directly(self, qual, node, called):
        """Openers (open, gzip.open, ...), logging.basicConfig, logging.Formatter and the calls that
        take names as data are judged at their call: as values (stored, returned, passed to partial
        or map) their mode, style or names would go unchecked."""
        if called:
            return
        if qual in OPEN_LIKE or qual == 'logging.basicConfig':
            self.report('open-write', '%s may only be called directly' % qual.replace('builtins.', ''), node)
        elif qual == 'logging.Formatter':
            if not self.names_a_type(node):
                self.report('dynamic-name', 'logging.Formatter may only be called directly (its style decides '
                            'how fields are read)', node)
        elif isinstance(node, ast.Name) and qual.rsplit('.', 1)[-1] in NAME_TAKING_CALLS:
            if not self.names_a_type(node):
                self.report('dynamic-name', '%s may only be called directly, with literal names' % node.id, node)

    def names_a_type(self, node):
        """A class named, not used: a base, isinstance/issubclass's class, an annotation."""
        parent = self.parent(node)
        while isinstance(parent, (ast.Tuple, ast.Subscript, ast.BinOp)):
            node, parent = parent, self.parent(parent)
        if isinstance(parent, ast.ClassDef):
            return node in parent.bases
        if isinstance(parent, ast.Call):
            return (isinstance(parent.func, ast.Name) and parent.func.id in ('isinstance', 'issubclass')
                    and len(parent.args) == 2 and parent.args[1] is node)
        # A class body's annotations are handed back at run time (dataclasses.fields()[0].type,
        # a NamedTuple's): there the class is a value, not only a name.
        return (isinstance(parent, ast.arg) or (isinstance(parent, ast.AnnAssign) and parent.annotation is node
                                                and not isinstance(self.parent(parent), ast.ClassDef))
                or (isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and parent.returns is node))

    # A logging.Formatter's style decides whether its fields are read as attributes (str.format).
    def makes_formatter(self, call, quals, scope):
        """logging.Formatter(...), a plugin subclass of it, or __init__ on self/super() in one."""
        if 'logging.Formatter' in quals:
            return True
        func = call.func
        if isinstance(func, ast.Name):
            return any(m.kind == 'class' and self.derives_from_formatter(m.binding.node)
                       for m in self.meanings(func.id, scope))
        if isinstance(func, ast.Attribute) and func.attr == '__init__':
            owner = self.own_class(func.value, scope)
            return owner is not None and self.derives_from_formatter(owner)
        return False

    def derives_from_formatter(self, classdef):
        """A base is logging.Formatter, or a plugin class that derives from it; each class decided
        once from its bases' answers (its whole ancestry per class was quadratic in a chain). A
        base still being decided (a cycle of rebound names) counts as one: its calls are checked."""
        known = self.formatter_classes
        pending, started = [(classdef, False)], set()
        while pending:
            cls, bases_done = pending.pop()
            if id(cls) in known or (not bases_done and id(cls) in started):
                continue
            scope = self.node_scope[id(cls)]
            parents = [m.binding.node for base in cls.bases if isinstance(base, ast.Name)
                       for m in self.meanings_when_bound(base.id, scope) if m.kind == 'class']
            if bases_done:
                known[id(cls)] = (any('logging.Formatter' in self.qualnames(base, scope) for base in cls.bases)
                                  or any(known.get(id(p), True) for p in parents))
            else:
                started.add(id(cls))
                pending.append((cls, True))
                pending += [(p, False) for p in parents if id(p) not in known]
        return known[id(classdef)]

    def check_formatter_arguments(self, call):
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            self.report('dynamic-name', 'logging.Formatter() arguments must be written out (its style decides '
                        'how fields are read)', call)
        elif len(call.args) >= 3 and not is_str_constant(call.args[2], ('%', '$')):
            self.report('dynamic-name', "logging.Formatter style other than '%' or '$' is not allowed", call.args[2])

    def check_method_through_class(self, node, scope):
        """`C.method` (called with anything as self, aliased, passed to partial or map, a
        property's fget) is refused when the method trusts self with private names."""
        meanings = self.meanings_when_bound(node.value.id, scope)
        if not meanings or not all(m.kind == 'class' for m in meanings) or self.is_base_call_on_self(node, scope):
            return
        for meaning in meanings:
            if self.member_trusts_self(meaning.binding.node, node.attr):
                self.report('private-access', "Method '%s' uses private attributes: call it on an instance"
                            % node.attr, node)
                return

    def is_base_call_on_self(self, node, scope):
        """`Base.method(self, ...)` in a method of a plugin class that derives from the plugin class
        Base: the method runs on the real self, as super() would call it."""
        call = self.parent(node)
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and isinstance(call, ast.Call)
                and call.func is node and call.args and not isinstance(call.args[0], ast.Starred)):
            return False
        owner = self.own_class(call.args[0], scope)
        if owner is None or not isinstance(call.args[0], ast.Name):
            return False
        bases = self.meanings_when_bound(node.value.id, scope)
        return bool(bases) and all(m.kind == 'class' and m.binding.node in self.plugin_ancestry(owner)
                                   for m in bases)

    def member_trusts_self(self, cls, attr):
        """Whether C.attr may be a function that trusts its first argument with private names:
        a def of that name that uses them, or anything else bound to that name in a class that has
        such a def (`g = f`, `p = property(f)`), in C or the plugin classes it derives from."""
        for owner in self.plugin_ancestry(cls):
            trusting = self.trusting_methods(owner)
            for binding in self.scope_of[id(owner)].bindings.get(attr, []):
                if id(binding.node) in trusting if binding.kind == 'def' else trusting:
                    return True
        return False

    def trusting_methods(self, owner):
        """The ids of the methods of a class body that trust self with private names, once per
        class: `C.m` read a thousand times would walk every method a thousand times."""
        found = self.trusting_cache.get(id(owner))
        if found is None:
            found = self.trusting_cache[id(owner)] = frozenset(
                id(statement) for statement in owner.body
                if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))
                and not self.is_static(statement) and not self.is_classmethod(statement)
                and self.uses_private_self(statement))
        return found

    def is_classmethod(self, function):
        """Reached through its class, a classmethod is bound to the class: cls is still C (the
        builtin for certain: a plugin's own `classmethod` may return the function itself)."""
        scope = self.node_scope[id(function)]
        return any(self.builtin_named(d, 'classmethod', scope) for d in function.decorator_list)

    def check_method_in_class_body(self, node, scope):
        """In the class body, a method that trusts self is only defined, never used as a value
        (`x = f(other)`, `g = f`, `property(f)`): that would call it with anything as self.
        `@f.setter` on a property of the same name stays allowed."""
        parent = self.parent(node)
        if (isinstance(parent, ast.Attribute) and parent.attr in ('setter', 'getter', 'deleter')
                and isinstance(self.parent(parent), (ast.FunctionDef, ast.AsyncFunctionDef))):
            return
        for meaning in self.meanings(node.id, scope):
            function = meaning.binding.node if meaning.kind == 'def' else None
            if (function is not None and meaning.scope is scope and not self.is_static(function)
                    and not self.is_classmethod(function) and self.uses_private_self(function)):
                self.report('private-access', "Method '%s' uses private attributes: call it on an instance"
                            % node.id, node)
                return

    def uses_private_self(self, function):
        found = self.private_use_cache.get(id(function))
        if found is None:
            found = self.private_use_cache[id(function)] = any(
                isinstance(child, ast.Attribute) and (is_private(child.attr) or is_dunder(child.attr))
                for child in ast.walk(function))
        return found

    # --- calls

    def check_Call(self, node, scope):
        func = node.func
        quals = self.qualnames(func, scope)
        self.check_reading_call(node, scope, quals)
        for qual in quals:
            spec = OPEN_LIKE.get(qual)
            if spec is not None:
                self.check_open_mode(node, qual, spec)
                if call_argument(node, 99, 'opener') is not ABSENT:
                    # The opener's return value is used as a file descriptor: any of the framework's.
                    self.report('open-write', '%s() with opener= is not allowed: an opener can hand it any of '
                                "the framework's file descriptors" % qual.replace('builtins.', ''), node)
            if qual in ('yaml.load', 'yaml.load_all'):
                self.check_yaml_loader(node, scope, qual)
            if qual == 'logging.basicConfig' and call_argument(node, 99, 'filename') is not ABSENT:
                self.report('open-write', 'logging.basicConfig may not log to a file', node)
            if qual in ('pathlib.Path', 'pathlib.PosixPath'):
                parent = self.parent(node)
                if not (isinstance(parent, ast.Attribute) and parent.value is node and parent.attr in PATH_READ_MEMBERS):
                    self.report('open-write', 'Path(...) may only be used directly to read: Path(p).read_text(), '
                                'Path(p).open()', node)
        if self.is_builtin_call(node, 'type', scope):
            parent = self.parent(node)
            if len(node.args) != 1 or node.keywords:
                self.report('class-machinery', 'type() with three arguments builds a class from a namespace', node)
            elif not (isinstance(parent, ast.Compare) or (
                    isinstance(parent, ast.Attribute) and parent.attr in READABLE_DUNDER_ATTRIBUTES)):
                # The class of an object is a constructor: of a file object, a file writer.
                self.report('class-machinery', 'type(x) may only be compared or named (type(x).__name__)', node)
                self.report('open-write', 'type(x) hands out the class of x; of a file object, a file writer', node)
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if 'functools.wraps' in quals or 'functools.update_wrapper' in quals:
            self.check_wrapper(node, quals, scope)
        if PLUGIN_HELPER + '.CommandDump' in quals:
            self.check_command_resources(node, scope)
        # Keyed on what the callee resolves to (`from functools import wraps as keep`), and on
        # its spelling when it cannot be resolved.
        taking = {q.rsplit('.', 1)[-1] for q in quals if q.rsplit('.', 1)[-1] in NAME_TAKING_CALLS}
        if name in NAME_TAKING_CALLS:
            taking.add(name)
        for each in sorted(taking):
            self.check_name_taking_call(node, each, NAME_TAKING_CALLS[each])
        for keyword in node.keywords:
            if keyword.arg == 'style' and not is_str_constant(keyword.value, ('%', '$')):
                self.report('dynamic-name', "style= other than '%' or '$' formats log records with "
                            "str.format fields read from the record", keyword.value)
            if keyword.arg == 'capture_locals' and not is_false(keyword.value):
                self.report('dynamic-name', 'capture_locals hands out the frames\' local variables', keyword.value)
        if self.makes_formatter(node, quals, scope):
            self.check_formatter_arguments(node)
        if isinstance(func, ast.Call) and self.is_decoder_call(func, scope):
            self.report('decoded-call', 'The result of a decoder must not be called', func)

    def check_register(self, node, scope, parent):
        """Door 4: singledispatch's register(func), register(func, None) and register(cls=func) read
        the class from func's annotations with typing.get_type_hints, which evaluates strings as
        code (a '*x' string is compiled as `(*x,)[0]`). So `.register`, on any object, is only
        called directly with a class first: `f.register(C)` or `f.register(C, function)`."""
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.report('dynamic-name', '@register without a class reads the type from annotations, which '
                        'typing evaluates as code: write @f.register(cls)', node)
            return
        if not (isinstance(parent, ast.Call) and parent.func is node):
            self.report('dynamic-name', '.register may only be called directly, with a class first: as a value, '
                        'register(function) reads the type from annotations, which typing evaluates as code', node)
            return
        args = parent.args
        if (parent.keywords or not 1 <= len(args) <= 2 or any(isinstance(a, ast.Starred) for a in args)
                or not self.is_class_expression(args[0], scope)):
            self.report('dynamic-name', 'register() needs a class first, written out: register(function), '
                        'register(function, None) or register(cls=function) read the type from annotations, '
                        'which typing evaluates as code; write register(cls, function)', parent)

    def is_class_expression(self, node, scope):
        """A class name (or `A | B` of them), as register() takes it."""
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return self.is_class_expression(node.left, scope) and self.is_class_expression(node.right, scope)
        if isinstance(node, ast.Attribute):
            return bool(self.resolved_qualnames(node, scope))
        return self.is_class_name(node, scope)

    def is_class_name(self, node, scope):
        if not isinstance(node, ast.Name):
            return False
        meanings = self.meanings_when_bound(node.id, scope)
        return bool(meanings) and all(m.kind in ('class', 'builtin', 'import') for m in meanings)

    def check_wrapper(self, node, quals, scope):
        """update_wrapper copies the wrapped object's __dict__ into the wrapper: only onto a function
        the plugin defines (`@functools.wraps(f)` on a def), never onto an object of the framework."""
        parent = self.parent(node)
        if 'functools.wraps' in quals:
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and node in parent.decorator_list:
                return
            self.report('module-tampering', 'functools.wraps(f) only as a decorator of a def', node)
            return
        target = node.args[0] if node.args else None
        meanings = self.meanings(target.id, scope) if isinstance(target, ast.Name) else []
        if not meanings or not all(m.kind == 'def' for m in meanings):
            self.report('module-tampering', 'functools.update_wrapper only onto a function the plugin defines', node)

    def check_command_resources(self, node, scope):
        """CommandDump runs the commands of its resource list in a shell: only a list the framework's
        resources give (get_resources(...)), never one the plugin writes."""
        resources = call_argument(node, 2, 'ResourceList')
        if not self.is_framework_resources(resources, scope, 0):
            self.report('dangerous-attribute', 'CommandDump runs its resource list as shell commands: pass '
                        'get_resources(...), not a list of your own', node)

    def is_framework_resources(self, node, scope, depth):
        if node in (ABSENT, UNKNOWN) or depth > 3:
            return False
        if isinstance(node, ast.Call):
            quals = self.qualnames(node.func, scope)
            return bool(quals) and all(q in R['resource_getters'] for q in quals)
        if isinstance(node, ast.Name):
            meanings = self.meanings(node.id, scope)
            if not (meanings and all(
                    m.kind == 'value' and m.binding is not None and m.binding.value is not None
                    and self.is_framework_resources(m.binding.value, m.scope, depth + 1) for m in meanings)):
                return False
            return self.only_handed_to_framework(node.id, {id(m.binding) for m in meanings})
        return False

    def only_handed_to_framework(self, name, bindings):
        """Every read of these bindings, in any scope, is written out as an argument of a call to
        plugin_helper: an alias, a method call, a `with`, a loop or a function of the plugin could
        change the list, through any name and from any scope."""
        for read in self.name_reads().get(name, ()):
            scope = self.node_scope[id(read)]
            if not any(id(m.binding) in bindings for m in self.meanings(name, scope)):
                continue
            call = self.parent(read)
            if isinstance(call, ast.keyword):
                call = self.parent(call)
            elif not (isinstance(call, ast.Call) and read in call.args):
                return False
            quals = self.qualnames(call.func, scope) if isinstance(call, ast.Call) else []
            if not quals or not all(q.startswith(PLUGIN_HELPER + '.') for q in quals):
                return False
        return True

    def name_reads(self):
        """Every Name read, by identifier, once (a scan per call would be quadratic)."""
        if self.reads_by_name is None:
            self.reads_by_name = {}
            for other in self.order:
                if type(other) is ast.Name and type(other.ctx) is ast.Load:
                    self.reads_by_name.setdefault(other.id, []).append(other)
        return self.reads_by_name

    def is_builtin_call(self, node, name, scope):
        return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name
                and any(m.kind == 'builtin' for m in self.meanings(name, scope)))

    def is_decoder_call(self, node, scope):
        return isinstance(node, ast.Call) and any(q in DECODERS for q in self.qualnames(node.func, scope))

    def literal_attribute_call(self, call):
        """getattr(obj, 'name'[, default]) with a literal name: the same as obj.name, checked as such."""
        if len(call.args) < 2 or call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
            return False
        name = call.args[1]
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str) and IDENTIFIER.match(name.value)):
            return False
        if attribute_problem(name.value) or name.value in FILE_WRITING_METHODS:
            return False
        scope = self.node_scope[id(call)]
        load = call.func.id == 'getattr'
        if not load and (self.qualnames(call.args[0], scope) or len(call.args) != (3 if call.func.id == 'setattr' else 2)):
            return False
        synthetic = ast.Attribute(value=call.args[0], attr=name.value,
                                  ctx=ast.Load() if load else ast.Store())
        ast.copy_location(synthetic, call)
        self.parents[id(synthetic)] = self.parent(call)
        self.node_scope[id(synthetic)] = scope
        self.check_Attribute(synthetic, scope)
        return True

    def check_open_mode(self, node, qual, position):
        mode = call_argument(node, position, 'mode')
        if mode is ABSENT:
            return
        if mode is UNKNOWN or not is_str_constant(mode, READ_MODES):
            self.report('open-write', "%s() must use a literal read mode ('r', 'rb' or 'rt')"
                        % qual.replace('builtins.', ''), node)

    def check_method_open(self, node, parent):
        """`.open()` of an object of unknown type: any mode-shaped argument must be a read mode."""
        if not (isinstance(parent, ast.Call) and parent.func is node):
            self.report('open-write', '.open() must be called directly, with a literal read mode', node)
            return
        mode = call_argument(parent, 99, 'mode')
        candidates = [mode, call_argument(parent, 0, ''), call_argument(parent, 1, '')]
        if mode is UNKNOWN:
            self.report('open-write', '.open() must be called with a literal read mode', node)
            return
        for index, candidate in enumerate(candidates):
            if candidate in (ABSENT, UNKNOWN):
                continue
            literal = candidate.value if is_str_constant(candidate) else None
            if (literal is None and index == 0) or (
                    literal is not None and OPEN_MODE_SHAPE.match(literal) and literal not in READ_MODES):
                self.report('open-write', ".open() must use a literal read mode ('r', 'rb' or 'rt')", node)
                return

    def check_yaml_loader(self, node, scope, qual):
        loader = call_argument(node, 1, 'Loader')
        quals = self.qualnames(loader, scope) if loader not in (ABSENT, UNKNOWN) else []
        if not quals or not all(q in YAML_SAFE_LOADERS for q in quals):
            self.report('unsafe-yaml-load', '%s without Loader=yaml.SafeLoader is not allowed; use '
                        'yaml.safe_load' % qual, node)

    def check_name_taking_call(self, node, name, spec):
        """namedtuple('P', 'x y'), Enum('E', 'A B'), make_dataclass(...): names must be literal identifiers."""
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            self.report('dynamic-name', '%s() arguments must be written out' % name, node)
            return
        if spec.get('functional_from') is not None and len(node.args) < spec['functional_from'] and not any(
                k.arg in spec.get('name_keywords', ()) for k in node.keywords):
            return  # Enum(value): a lookup, not the functional API
        if spec.get('refuse'):
            self.report('dynamic-name', '%s: %s' % (name, spec['refuse']), node)
            return
        if 'max_positional' in spec and len(node.args) > spec['max_positional']:
            self.report('dynamic-name', '%s() takes names as data here; not allowed' % name,
                        node.args[spec['max_positional']])
        for keyword in node.keywords:
            if keyword.arg in spec.get('refused_keywords', ()):
                self.report('dynamic-name', '%s(%s=...) takes names or code as data; not allowed'
                            % (name, keyword.arg), keyword.value)
        targets = [a for i, a in enumerate(node.args) if i in spec.get('name_positions', ())]
        targets += [k.value for k in node.keywords if k.arg in spec.get('name_keywords', ())]
        for target in targets:
            if not literal_names(target):
                self.report('dynamic-name', '%s() needs literal identifiers as names' % name, target)

    # --- format templates

    def check_format(self, node, scope, parent):
        called = isinstance(parent, ast.Call) and parent.func is node
        receiver = node.value
        if isinstance(receiver, ast.Name) and receiver.id == 'str' and all(
                m.kind == 'builtin' for m in self.meanings('str', scope)):
            receiver = parent.args[0] if called and parent.args else None
        templates = self.template_texts(receiver, scope) if receiver is not None else None
        if templates is None:
            owner = self.own_class(node.value, scope)
            if owner is not None and self.owns_name(owner, node.attr):
                return  # the plugin's own method of that name (not str.format of a str subclass)
            self.report('format-string', '.%s() is only allowed on a string literal, whose fields are checked'
                        % node.attr, node)
            return
        for problem in self.problems_of_templates(templates):
            self.report(problem[0], 'Format field: %s' % problem[1], node)

    def problems_of_templates(self, templates):
        if isinstance(templates, tuple):
            # The cached texts of a class constant: the same problems at every read of it.
            found = self.template_problems_cache.get(id(templates))
            if found is None:
                found = self.template_problems_cache[id(templates)] = [
                    problem for template in templates for problem in self.template_problems(template, 0)]
            return found
        return [problem for template in templates for problem in self.template_problems(template, 0)]

    def template_texts(self, node, scope):
        """The literal templates `node` can be (a literal, a module constant, a class constant), or None."""
        if isinstance(node, ast.Attribute):
            return self.class_constant_texts(node, scope)
        template = self.template_text(node, scope)
        return None if template is None else [template]

    def class_constant_texts(self, node, scope):
        """`self.ROW` / `C.ROW` of a plugin class with no outside base, where every plugin class
        binding ROW binds it once, to a literal, with a plain assignment (an annotated one is a
        dataclass field, set per instance), and nothing anywhere stores or deletes an attribute
        of that name (`obj.ROW = ...`, setattr with that literal): each of those literals."""
        owner = self.own_class(node.value, scope)
        if owner is None and isinstance(node.value, ast.Name):
            meanings = self.meanings_when_bound(node.value.id, scope)
            if meanings and all(m.kind == 'class' and m.binding.node is meanings[0].binding.node for m in meanings):
                owner = meanings[0].binding.node
        name = node.attr
        if (owner is None or self.trust_ended(owner) or self.class_families()[2][id(owner)]
                or not self.only_plugin_bases(owner) or not self.binds_in_plugin_ancestry(owner, name)):
            return None  # a library class of its family (`logging.Formatter`'s datefmt) may set the name
        return self.constant_texts_named(name)

    def constant_texts_named(self, name):
        """The literals every plugin class binds `name` to (see class_constant_texts), or None;
        once per name, as a tuple the format check keys its findings on: a read per class of
        a thousand classes would loop over every class a thousand times."""
        if name in self.constant_texts_cache:
            return self.constant_texts_cache[name]
        texts = []
        for cls in self.plugin_classes.values():
            bindings = self.scope_of[id(cls)].bindings.get(name, [])
            if not bindings:
                continue
            binding = bindings[0]
            statement = self.parent(binding.node)
            if (len(bindings) != 1 or binding.kind != 'value' or not isinstance(statement, ast.Assign)
                    or self.parent(statement) is not cls or not is_str_constant(binding.value)):
                texts = None
                break
            texts.append(binding.value.value)
        if texts is not None and name in self.attributes_set_anywhere():
            texts = None
        result = self.constant_texts_cache[name] = None if texts is None else tuple(texts)
        return result

    def attributes_set_anywhere(self):
        """Attribute names stored or deleted anywhere, or named by setattr/delattr with a literal."""
        if self.stored_attributes is None:
            stored = set()
            for other in self.order:
                if type(other) is ast.Attribute and type(other.ctx) is not ast.Load:
                    stored.add(other.attr)
                elif (type(other) is ast.Call and isinstance(other.func, ast.Name)
                      and other.func.id in ('setattr', 'delattr') and len(other.args) >= 2
                      and is_str_constant(other.args[1])):
                    stored.add(other.args[1].value)
            self.stored_attributes = stored
        return self.stored_attributes

    def template_text(self, node, scope):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            # A module constant bound once, unconditionally, to a literal (unbound, it is a NameError).
            meanings = [m for m in self.meanings(node.id, scope) if m.kind != 'undefined']
            bindings = self.global_bindings(node.id)
            # ...and the name read here is that binding, not a local of the same name.
            if (len(meanings) == 1 and meanings[0].kind == 'value' and len(bindings) == 1
                    and meanings[0].binding is bindings[0][1]):
                binding = bindings[0][1]
                if (bindings[0][0] is self.module_scope and is_str_constant(binding.value)
                        and self.parent(self.parent(binding.node)) is self.tree):
                    return binding.value.value
        return None

    def template_problems(self, template, depth):
        """CPython's own reading of the fields (string.Formatter().parse, then the field-name split)."""
        problems = []
        try:
            parsed = list(string.Formatter().parse(template))
        except ValueError:
            return [('format-string', 'template is not valid')]
        for _literal, field, spec, _conversion in parsed:
            if field is None:
                continue
            try:
                _first, rest = formatter_field_name_split(field)
                rest = list(rest)
            except ValueError:
                return [('format-string', 'field %r is not valid' % field)]
            for is_attribute, key in rest:
                if is_attribute:
                    problem = attribute_problem(key)
                    if problem:
                        problems.append(problem)
                elif isinstance(key, str) and (is_dunder(key) or is_private(key)):
                    problems.append(('format-string', 'index %r is not allowed' % key))
            if spec and depth < 2:
                problems += self.template_problems(spec, depth + 1)
            elif spec and '{' in spec:
                problems.append(('format-string', 'fields nested too deeply'))
        return problems

    # --- match statements

    def check_MatchClass(self, node, scope):
        for attr in node.kwd_attrs:
            self.check_attribute_name(attr, node, None, scope, True, None, in_pattern=True)
        if not node.patterns:
            return
        meanings = self.meanings_when_bound(node.cls.id, scope) if isinstance(node.cls, ast.Name) else []
        if meanings and all(m.kind == 'builtin' and m.qualname in SELF_MATCHING_BUILTINS for m in meanings):
            if len(node.patterns) == 1:
                return
        if meanings and all(m.kind == 'class' and self.is_closed_class(m.binding.node, 0) for m in meanings):
            return
        self.report('match-pattern', 'Positional patterns only on classes the plugin defines (their '
                    '__match_args__ decide which attributes are read)', node)

    def is_closed_class(self, cls, depth):
        if depth > 10 or cls.keywords:
            return False
        scope = self.node_scope[id(cls)]
        for decorator in cls.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            quals = self.qualnames(target, scope)
            if not quals or not all(q == 'dataclasses.dataclass' for q in quals):
                return False
        for base in cls.bases:
            if not isinstance(base, ast.Name):
                return False
            meanings = self.meanings_when_bound(base.id, scope)
            if not meanings or not all(m.kind == 'class' and self.is_closed_class(m.binding.node, depth + 1)
                                       for m in meanings):
                if not all(m.kind == 'builtin' and m.qualname == 'object' for m in meanings):
                    return False
        return True

    # --- annotations: a string annotation is code that typing may evaluate

    def check_annotation(self, annotation, depth=0):
        for child in ast.walk(annotation):
            if isinstance(child, ast.Constant) and isinstance(child.value, str):
                self.check_string_annotation(child, depth)

    def check_string_annotation(self, constant, depth):
        # typing.ForwardRef compiles '*x' as `(*x,)[0]` (an unpacked TypeVarTuple), which parses.
        text = constant.value
        text = '(%s,)[0]' % text if text.startswith('*') else text.strip()
        try:
            expression = ast.parse(text, mode='eval')
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return  # never evaluable, so never code
        if depth > 3 or any(isinstance(n, SCOPE_NODES + (ast.NamedExpr,)) for n in ast.walk(expression)):
            self.report('dynamic-name', 'String annotation is too complex to check', constant)
            return
        # typing evaluates it against the module's globals: checked there, reported at the string.
        sub = Analyser.__new__(Analyser)
        sub.__dict__.update(self.__dict__)
        sub.findings = Findings()
        sub.order = []
        for node in ast.walk(expression):
            self.parents.setdefault(id(node), None)
            for child in ast.iter_child_nodes(node):
                self.parents[id(child)] = node
            self.node_scope[id(node)] = self.module_scope
            sub.order.append(node)
        for node in sub.order:
            method = getattr(sub, 'check_' + type(node).__name__, None)
            if method is not None and not isinstance(node, ast.Constant):
                method(node, self.module_scope)
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                sub.check_string_annotation(node, depth + 1)
        for _line, _column, rule, message in sub.findings.items:
            self.report(rule, 'In a string annotation: ' + message, constant)

    # --- the framework's contract

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


# The children of each node type, without the shared Load/Store/Del context objects; and the rule
# method of each node type (check_Name for ast.Name, ...).
AST_TYPES = [cls for cls in vars(ast).values() if isinstance(cls, type) and issubclass(cls, ast.AST)]
# (Operators are shared singletons like the contexts, and no rule reads them.) Last field first.
CHILD_FIELDS = {cls: tuple(reversed([field for field in cls._fields if field not in ('ctx', 'op', 'ops')]))
                for cls in AST_TYPES}
CHECK_METHODS = {cls: getattr(Analyser, 'check_' + cls.__name__) for cls in AST_TYPES
                 if hasattr(Analyser, 'check_' + cls.__name__)}


def unique_meanings(meanings):
    """Several plain values bound in one scope mean the same to the rules: one meaning (with no
    single binding) stands for all, so a name assigned 10,000 times does not cost 10,000 per read."""
    result = []
    value_at = {}
    for meaning in meanings:
        if meaning.kind == 'value':
            index = value_at.get(id(meaning.scope))
            if index is not None:
                result[index] = Meaning('value', None, None, meaning.scope)
                continue
            value_at[id(meaning.scope)] = len(result)
        result.append(meaning)
    return result


class DepthError(Exception):
    pass


ABSENT = object()
UNKNOWN = object()


def call_argument(call, position, keyword):
    for kw in call.keywords:
        if kw.arg is None:
            return UNKNOWN
        if kw.arg == keyword:
            return kw.value
    for index, argument in enumerate(call.args):
        if isinstance(argument, ast.Starred):
            return UNKNOWN
        if index == position:
            return argument
    return ABSENT


def is_str_constant(node, allowed=None):
    return (isinstance(node, ast.Constant) and isinstance(node.value, str)
            and (allowed is None or node.value in allowed))


def is_false(node):
    return isinstance(node, ast.Constant) and node.value in (False, None, 0)


def literal_names(node):
    """'a b', 'a,b', ['a', 'b'], [('a', int)], {'a': int}: names a library turns into attributes."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        names = node.value.replace(',', ' ').split()
    elif isinstance(node, (ast.List, ast.Tuple)):
        names = []
        for element in node.elts:
            if isinstance(element, (ast.Tuple, ast.List)) and element.elts:
                element = element.elts[0]
            if not (isinstance(element, ast.Constant) and isinstance(element.value, str)):
                return False
            names.append(element.value)
    elif isinstance(node, ast.Dict):
        names = []
        for key in node.keys:
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                return False
            names.append(key.value)
    else:
        return False
    return all(IDENTIFIER.match(n) and not n.startswith('_') for n in names)


def attribute_problem(attr):
    if is_dunder(attr):
        if attr in READABLE_DUNDER_ATTRIBUTES:
            return None
        return ('dunder-access', "Access to dunder name '%s' is not allowed" % attr)
    if is_private(attr) and attr not in PUBLIC_UNDERSCORE_ATTRIBUTES:
        return ('private-access', "Access to private attribute '%s' is not allowed" % attr)
    if attr in DANGEROUS_ATTRIBUTES or attr.startswith(DANGEROUS_ATTRIBUTE_PREFIXES) or \
            attr in MODULE_REACHING_ATTRIBUTES:
        return ('dangerous-attribute', "Use of dangerous attribute '%s'" % attr)
    if attr in FORBIDDEN_BUILTINS and attr not in BUILTIN_NAMES_OK_AS_ATTRIBUTES:
        return ('forbidden-name', "Use of forbidden name '%s'" % attr)
    return None


def all_args(args):
    return args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]


def assigned_names(statement):
    targets = []
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
        targets = [statement.target]
    names = []
    for target in targets:
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                names.append(node.id)
    return names


# --- entry points -----------------------------------------------------------------------------

class AnalysisTooSlow(BaseException):
    """Raised by the CPU-time alarm; a BaseException so that no `except Exception` of a rule hides it."""


def out_of_time(signum, frame):
    raise AnalysisTooSlow()


def analyse(raw, budget_s=DEFAULT_BUDGET_S):
    """The violations for one plugin's bytes, sorted; never raises.

    The budget is CPU time (ITIMER_PROF: user and system time of this process), so a niced worker
    on a busy machine is not refused for the time it waited for the CPU."""
    findings = Findings()
    signal.signal(signal.SIGPROF, out_of_time)
    signal.setitimer(signal.ITIMER_PROF, budget_s)
    try:
        try:
            analyse_into(raw, findings)
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
            # An alarm that fired just before it was disarmed must not raise after this point.
            signal.signal(signal.SIGPROF, signal.SIG_IGN)
    except AnalysisTooSlow:
        findings.items = [(1, 0, 'analysis-too-slow', 'The analysis took more than its budget of %g s of CPU '
                           'time; plugin rejected (split it into smaller files or simplify the repeated '
                           'pattern)' % budget_s)]
    return to_violations(findings, raw)


def analyse_into(raw, findings):
    try:
        text = check_bytes(raw, findings)
        if text is not None:
            tree = parse(raw, findings)
            if tree is not None:
                check_identifiers(tree, raw, findings)
                analyser = Analyser(tree, findings)
                analyser.collect()
                if not analyser.needs_symtable or symtable_accepts(text, findings):
                    analyser.check()
    except DepthError as error:
        node = error.args[0]
        findings.items = [(getattr(node, 'lineno', 1), getattr(node, 'col_offset', 0), 'too-deep',
                           'Nesting deeper than %d levels is not allowed' % MAX_NESTING_DEPTH)]
    except RecursionError:
        findings.items = [(1, 0, 'too-deep', 'Nesting deeper than %d levels is not allowed' % MAX_NESTING_DEPTH)]
    except Exception:  # fail closed: no detail for the uploader
        findings.items = [(1, 0, 'internal-error', 'Validator failed internally; plugin rejected')]


def to_violations(findings, raw):
    seen = set()
    violations = []
    lines = None
    for line, column, rule, message in sorted(findings.items, key=lambda f: (f[0], f[1], f[2])):
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


def source_lines(raw):
    body = raw[3:] if raw.startswith(b'\xef\xbb\xbf') else raw
    return re.split(rb'\r\n|\r|\n', body)


def code_point_column(lines, line, byte_column):
    if 1 <= line <= len(lines):
        return len(lines[line - 1][:byte_column].decode('utf-8', 'replace'))
    return byte_column


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
            answer = {'id': request['id'], 'violations': analyse(base64.b64decode(request['source']), budget_s)}
        out.write(json.dumps(answer) + '\n')
        out.flush()


if __name__ == '__main__':
    serve()
