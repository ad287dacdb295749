/**
 * Runs every plugin of an owtf checkout through the plugin validator: the framework's own
 * plugins are ordinary code, so each refusal is a false positive to look at.
 *
 *   # once: fetch github:owtf/owtf (never commit it), then extract its plugins
 *   mkdir -p /tmp/owtf && git --git-dir=/work/.mirror/owtf+owtf/repo archive HEAD owtf/plugins | tar -x -C /tmp/owtf
 *   npx tsx scripts/validator/check-owtf-plugins.ts /tmp/owtf
 *   npx tsx scripts/validator/check-owtf-plugins.ts /tmp/owtf --validator /path/to/src/plugin-validator
 *
 * Prints the accepted and refused counts, every refusal with its findings and every warning of an
 * accepted plugin (unbound-name: two of the 145 read names they never bind); exits 1 on any
 * refusal (2 on bad usage). `base.py` and `__init__.py` are package plumbing, not plugins.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** Where `validate` lives; the one line to change when the validator moves. */
const VALIDATOR_MODULE = path.resolve(__dirname, '../../src/plugin-validator');

interface Finding {
  rule: string;
  message: string;
  line: number;
  column: number;
}

interface ValidatorModule {
  validate(source: Buffer): Promise<{ ok: boolean; violations: Finding[]; warnings?: Finding[] }>;
  /** The CPython-backed validator keeps a worker pool that must be closed for the process to exit. */
  closeSharedValidator?: () => Promise<void>;
}

const NOT_PLUGINS = new Set(['base.py', '__init__.py']);

function pluginFiles(root: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    const full = path.join(root, entry.name);
    if (entry.isDirectory()) found.push(...pluginFiles(full));
    else if (entry.name.endsWith('.py') && !NOT_PLUGINS.has(entry.name)) found.push(full);
  }
  return found.sort();
}

function parseArguments(argv: string[]): { checkout: string; validator: string } | null {
  let validator = VALIDATOR_MODULE;
  const positional: string[] = [];
  for (let index = 0; index < argv.length; index += 1) {
    if (argv[index] === '--validator' && argv[index + 1]) validator = path.resolve(argv[(index += 1)]);
    else positional.push(argv[index]);
  }
  return positional.length === 1 ? { checkout: positional[0], validator } : null;
}

async function main(): Promise<number> {
  const options = parseArguments(process.argv.slice(2));
  if (!options) {
    console.error('usage: check-owtf-plugins.ts <owtf checkout> [--validator <module dir>]');
    return 2;
  }
  // An extracted archive has owtf/plugins; accept the plugins folder itself too.
  const nested = path.join(options.checkout, 'owtf', 'plugins');
  const root = statSync(nested, { throwIfNoEntry: false })?.isDirectory() ? nested : options.checkout;
  const files = pluginFiles(root);
  if (files.length === 0) {
    console.error(`no plugin files under ${root}`);
    return 2;
  }

  const validator = (await import(options.validator)) as ValidatorModule;
  let refused = 0;
  try {
    for (const file of files) {
      const result = await validator.validate(readFileSync(file));
      for (const warning of result.warnings ?? []) {
        console.log(
          `WARNING ${path.relative(root, file)}: line ${warning.line}: ${warning.message} (${warning.rule})`,
        );
      }
      if (result.ok) continue;
      refused += 1;
      console.log(`REFUSED ${path.relative(root, file)}`);
      for (const finding of result.violations) {
        console.log(`  line ${finding.line}, column ${finding.column}: ${finding.message} (${finding.rule})`);
      }
    }
  } finally {
    await validator.closeSharedValidator?.();
  }
  console.log(
    `${files.length - refused} accepted, ${refused} refused, of ${files.length} plugins under ${root}`,
  );
  return refused === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
