/** The validator specs' plugin builder: a valid plugin whose run() body is given, and its rules. */
import { validate } from '../../src/plugin-validator/validator';
import type { ValidationResult } from '../../src/plugin-validator/types';

export const HEADER = 'DESCRIPTION = "Test plugin"\n\n';

/** A valid plugin whose run() body is `body`; `prelude` goes before everything. */
export function plugin(body: string, prelude = ''): string {
  const indented = body
    .split('\n')
    .map((line) => (line ? `    ${line}` : line))
    .join('\n');
  return `${prelude}${HEADER}def run(PluginInfo):\n${indented}\n`;
}

export const check = (source: string): Promise<ValidationResult> => validate(Buffer.from(source, 'utf8'));

export async function rulesOf(source: string): Promise<string[]> {
  return (await check(source)).violations.map((violation) => violation.rule);
}
