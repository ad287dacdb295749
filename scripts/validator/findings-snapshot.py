#!/usr/bin/env python3
"""Records the analyser's exact answers, to show that a change to its code changes no finding.

    python3 scripts/validator/findings-snapshot.py OUT.json [ANALYSER] [DIR...]

Runs ANALYSER (default src/plugin-validator/python/analyser.py) as the pool runs it (a worker,
`python3 -I -S -B`, one JSON line per plugin) on every .py file under the DIRs (default
test/fixtures/plugins), then asks it for the differential test's view of all of them, and writes
everything to OUT.json. A refactoring is behaviour-preserving on those files when the snapshot
taken before and the one taken after are byte-identical (`cmp before.json after.json`): the same
rules, messages, lines and columns, in the same order, warnings included. The budget is raised to 60 s so that a
loaded machine does not turn a finding into `analysis-too-slow`.
"""
import base64
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(out, analyser=None, *dirs):
    analyser = analyser or os.path.join(ROOT, 'src/plugin-validator/python/analyser.py')
    files = sorted(os.path.join(d, n) for root in (dirs or [os.path.join(ROOT, 'test/fixtures/plugins')])
                   for d, _, names in os.walk(root) for n in names if n.endswith('.py'))
    worker = subprocess.Popen(['python3', '-I', '-S', '-B', analyser], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    result = {'hello': json.loads(worker.stdout.readline()), 'files': {}}
    sources = []
    for index, path in enumerate(files):
        with open(path, 'rb') as handle:
            sources.append(base64.b64encode(handle.read()).decode())
        worker.stdin.write(json.dumps({'id': index, 'source': sources[-1], 'budget_ms': 60_000}) + '\n')
        worker.stdin.flush()
        answer = json.loads(worker.stdout.readline())
        result['files'][os.path.relpath(path, ROOT)] = answer['violations']
        if answer.get('warnings'):
            result.setdefault('warnings', {})[os.path.relpath(path, ROOT)] = answer['warnings']
    worker.stdin.write(json.dumps({'id': -1, 'view': sources}) + '\n')
    worker.stdin.flush()
    result['views'] = json.loads(worker.stdout.readline())['views']
    worker.stdin.close()
    worker.wait()
    with open(out, 'w') as handle:
        json.dump(result, handle, sort_keys=True, indent=0)
    print('%d files -> %s' % (len(files), out))


if __name__ == '__main__':
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(*sys.argv[1:])
