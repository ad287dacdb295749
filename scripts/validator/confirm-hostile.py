#!/usr/bin/env python3
"""Confirms that each third- to sixth-round hostile fixture really runs its payload under CPython.

    python3 scripts/validator/confirm-hostile.py            # every hostile/r3_ to r6_*.py
    python3 scripts/validator/confirm-hostile.py FILE...    # only these

Each file is copied into a fresh temporary directory and imported by a child `python3` whose
working directory, HOME and PYTHONUSERBASE all point into that directory; `run(PluginInfo)` is
called with a stub dict, under a timeout. A stub `owtf` package is on the path. The payloads are
harmless and stay inside the temporary directory; one of these effects counts as "it ran":

- a file or directory whose name starts with `PWNED` appears in the working directory;
- `victim.txt` or `victim_dir/` (created beforehand) disappears, or `victim.txt` changes mode or
  content;
- the canary (in the child's environment and in the caller's globals) shows up in its output,
  which is what a plugin reading the caller's globals or environment does;
- for a `.pth` planted in the user site-packages, PWNED appears when a second interpreter
  starts with the same user base.

A module `r3_probe.py` that creates PWNED when imported stands for "any module on the path"
(for APIs that import a module by name). Prints one line per file and a summary; exits 1 when
a file did not run its payload. Only the r3_ to r6_ fixtures are written for this script.
"""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HOSTILE = Path(__file__).resolve().parents[2] / 'test/fixtures/plugins/hostile'
PREFIXES = ('r3_', 'r4_', 'r5_', 'r6_')
CANARY = 'R3-CANARY-7f3a91'
TIMEOUT_S = 20
VICTIM_TEXT = b'report\n'

# The child: imports the plugin and calls run(); the canary sits in its own globals.
RUNNER = f'''
import traceback
CALLER_SECRET = {CANARY!r}
PluginInfo = {{"title": "Example", "code": "OWTF-T-001", "args": {{}}, "type": "passive"}}
try:
    import plugin_under_test
    result = plugin_under_test.run(PluginInfo)
    print("run returned:", repr(result)[:4000])
except BaseException:
    traceback.print_exc(limit=3)
'''

STUB_OWTF = {
    'owtf/__init__.py': '',
    'owtf/plugin/__init__.py': '',
    # CommandDump runs each (name, command) of its resource list in a shell, as the framework's
    # own helper does (RunCommand -> shell_exec_monitor); the rest only returns text.
    'owtf/plugin/helper.py': (
        'import subprocess\n'
        'class _Helper:\n'
        '    def CommandDump(self, intro, output_intro, resources, plugin_info, previous):\n'
        '        return [subprocess.run(command, shell=True, capture_output=True, text=True).stdout\n'
        '                for _name, command in resources]\n'
        '    def __getattr__(self, name):\n'
        '        return lambda *args, **kwargs: "<%s>" % name\n'
        'plugin_helper = _Helper()\n'
    ),
    'owtf/managers/__init__.py': '',
    'owtf/managers/resource.py': 'def get_resources(name):\n    return [("Example", "https://example.com")]\n',
}

PROBE = "open('PWNED-by-import', 'w').close()\n"


def prepare(tmp: Path, plugin: Path) -> dict:
    shutil.copyfile(plugin, tmp / 'plugin_under_test.py')
    (tmp / 'victim.txt').write_bytes(VICTIM_TEXT)
    (tmp / 'victim_dir').mkdir()
    (tmp / 'r3_probe.py').write_text(PROBE)
    for name, text in STUB_OWTF.items():
        target = tmp / 'stubs' / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    home = tmp / 'home'
    # The user site-packages exists, as on any machine where `pip install --user` was used.
    (home / '.local/lib' / f'python{sys.version_info[0]}.{sys.version_info[1]}' / 'site-packages').mkdir(parents=True)
    return {
        'PATH': '/usr/local/bin:/usr/bin:/bin',
        'HOME': str(home),
        'PYTHONUSERBASE': str(home / '.local'),
        'PYTHONPATH': f'{tmp}{os.pathsep}{tmp / "stubs"}',
        'PYTHONDONTWRITEBYTECODE': '1',
        'LANG': 'C.UTF-8',
        'R3_SECRET': CANARY,
    }


def effects(tmp: Path, output: str, victim_mode: int) -> list:
    found = [f'{p.name} created' for p in tmp.iterdir() if p.name.startswith('PWNED')]
    if not (tmp / 'victim.txt').exists():
        found.append('victim.txt removed')
    elif (tmp / 'victim.txt').stat().st_mode != victim_mode:
        found.append('victim.txt mode changed')
    elif (tmp / 'victim.txt').read_bytes() != VICTIM_TEXT:
        found.append('victim.txt overwritten')
    if not (tmp / 'victim_dir').exists():
        found.append('victim_dir removed')
    if CANARY in output:
        found.append("caller's secret read")
    return found


def confirm(plugin: Path) -> tuple:
    tmp = Path(tempfile.mkdtemp(prefix='r3-confirm-'))
    try:
        env = prepare(tmp, plugin)
        victim_mode = (tmp / 'victim.txt').stat().st_mode
        try:
            child = subprocess.run(
                [sys.executable, '-c', RUNNER], cwd=tmp, env=env, capture_output=True, text=True,
                timeout=TIMEOUT_S, errors='replace',
            )
            output = child.stdout + child.stderr
        except subprocess.TimeoutExpired:
            output = 'timed out'
        found = effects(tmp, output, victim_mode)
        if not found and any((tmp / 'home').rglob('*.pth')):
            # A .pth runs when the next interpreter starts with this user base.
            subprocess.run([sys.executable, '-c', 'pass'], cwd=tmp, env=env, capture_output=True, timeout=TIMEOUT_S)
            found = [f'{e} at next interpreter start (.pth)' for e in effects(tmp, '', victim_mode)]
        last = output.strip().splitlines()[-1] if output.strip() else ''
        return found, last
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list) -> int:
    files = [Path(a) for a in argv] if argv else sorted(p for prefix in PREFIXES for p in HOSTILE.glob(f'{prefix}*.py'))
    failed = []
    for plugin in files:
        found, last = confirm(plugin)
        if found:
            print(f'PAYLOAD   {plugin.name}: {", ".join(found)}')
        else:
            failed.append(plugin.name)
            print(f'NO EFFECT {plugin.name}: {last[:200]}')
    print(f'{len(files) - len(failed)}/{len(files)} hostile files ran their payload under {sys.version.split()[0]}')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
