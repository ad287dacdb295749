"""Bytes and encoding: what CPython would read must be the UTF-8 text an admin reads (size, BOMs,
the PEP 263 coding declaration, bidi controls), and identifiers must not be look-alikes."""

import ast
import re
import unicodedata

from .table import MAX_SOURCE_BYTES, MAX_SOURCE_LINES


# U+202A-U+202E and U+2066-U+2069 in UTF-8 ("Trojan Source": embeddings, overrides, isolates).
BIDI_CONTROLS = re.compile(rb'\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]')
CODING = re.compile(rb'^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)')


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


def source_lines(raw):
    body = raw[3:] if raw.startswith(b'\xef\xbb\xbf') else raw
    return re.split(rb'\r\n|\r|\n', body)
