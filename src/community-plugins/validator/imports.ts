import type { Node } from 'web-tree-sitter';
import type { Findings } from './findings';
import { isSubmodule, moduleRefusal } from './allowed-modules';
import { moduleAttributeVerdict } from './module-attributes';
import { isForbiddenModule, MODULE_REACHING_NAMES } from './forbidden-modules';
import { dottedName, identifierName } from './python-syntax';
import {
  BUILTIN_NAMES_ALLOWED_AS_ATTRIBUTES,
  FORBIDDEN_BUILTIN_NAMES,
  isDunder,
  isPrivateName,
  Rule,
} from './rules';

export const IMPORT_NODE_TYPES: readonly string[] = [
  'import_statement',
  'import_from_statement',
  'future_import_statement',
];

/** A name brought in by an import, for rules that care about what it refers to. */
export interface ImportedName {
  qualifiedName: string;
  node: Node;
}

/**
 * Checks every import and returns the names they bind (local name -> qualified name).
 * Bindings are flow-insensitive: an import anywhere in the file counts everywhere, which can
 * only make the validator stricter.
 */
export function checkImports(
  source: string,
  importNodes: readonly Node[],
  findings: Findings,
): { bindings: Map<string, string[]>; importedNames: ImportedName[] } {
  const bindings = new Map<string, string[]>();
  const bind = (localName: string, qualifiedName: string): void => {
    const existing = bindings.get(localName);
    if (!existing) bindings.set(localName, [qualifiedName]);
    else if (!existing.includes(qualifiedName)) existing.push(qualifiedName);
  };
  const importedNames: ImportedName[] = [];

  const checkModulePath = (module: string, node: Node): void => {
    const refusal = moduleRefusal(module);
    if (refusal) findings.add(Rule.forbiddenImport, refusal, node.startPosition);
    const dunderSegment = module.split('.').find(isDunder);
    if (dunderSegment) {
      findings.add(
        Rule.dunderAccess,
        `Access to dunder name '${dunderSegment}' is not allowed`,
        node.startPosition,
      );
    }
  };

  /** A name an import binds locally: it must not shadow or smuggle a forbidden name. */
  const checkBoundName = (name: string, node: Node): void => {
    if (FORBIDDEN_BUILTIN_NAMES.has(name)) {
      findings.add(Rule.forbiddenName, `Use of forbidden name '${name}'`, node.startPosition);
    } else if (isDunder(name)) {
      findings.add(Rule.dunderAccess, `Access to dunder name '${name}' is not allowed`, node.startPosition);
    }
  };

  for (const statement of importNodes) {
    if (statement.type === 'future_import_statement') continue;

    if (statement.type === 'import_statement') {
      for (const imported of statement.childrenForFieldName('name')) {
        const moduleNode = aliasedTarget(imported);
        const module = dottedName(source, moduleNode);
        checkModulePath(module, moduleNode);
        const alias = imported.childForFieldName('alias');
        if (alias) {
          const aliasName = identifierName(source, alias);
          checkBoundName(aliasName, alias);
          bind(aliasName, module);
        } else {
          // `import a.b` binds only `a`.
          const [topLevel] = module.split('.');
          bind(topLevel, topLevel);
        }
      }
      continue;
    }

    // import_from_statement
    const moduleNode = statement.childForFieldName('module_name');
    let module: string | null = null;
    if (!moduleNode || moduleNode.type === 'relative_import') {
      findings.add(
        Rule.relativeImport,
        'Relative imports are not allowed: a plugin is a single file',
        statement.startPosition,
      );
    } else {
      module = dottedName(source, moduleNode);
      checkModulePath(module, moduleNode);
    }
    if (statement.children.some((child) => child.type === 'wildcard_import')) {
      findings.add(
        Rule.starImport,
        `Star import from '${module ?? 'a relative module'}' is not allowed`,
        statement.startPosition,
      );
    }
    for (const imported of statement.childrenForFieldName('name')) {
      const nameNode = aliasedTarget(imported);
      const name = dottedName(source, nameNode);
      const alias = imported.childForFieldName('alias');
      // `from m import eval as e` smuggles eval in under another name: check both. But
      // `from re import compile` is re.compile, an ordinary function of an allowed module.
      const ordinaryMethod =
        module !== null && moduleRefusal(module) === null && BUILTIN_NAMES_ALLOWED_AS_ATTRIBUTES.has(name);
      if (!ordinaryMethod) checkBoundName(name, nameNode);
      const boundName = alias ? identifierName(source, alias) : name;
      if (alias) checkBoundName(boundName, alias);
      if (module === null) continue;
      const qualifiedName = `${module}.${name}`;
      if (isPrivateName(name)) {
        findings.add(
          Rule.privateAccess,
          `Import of private name '${qualifiedName}' is not allowed`,
          nameNode.startPosition,
        );
      }
      // `from asyncio import subprocess` imports the forbidden module asyncio.subprocess;
      // `from pathlib import os` gets os out of a module that imported it.
      const reachesModule = isForbiddenModule(qualifiedName) || MODULE_REACHING_NAMES.has(name);
      if (moduleRefusal(module) === null) {
        if (reachesModule) {
          findings.add(
            Rule.forbiddenImport,
            `Import of forbidden module '${qualifiedName}'`,
            nameNode.startPosition,
          );
        } else if (isSubmodule(module, name) && moduleRefusal(qualifiedName)) {
          findings.add(Rule.forbiddenImport, moduleRefusal(qualifiedName)!, nameNode.startPosition);
        } else if (
          !isPrivateName(name) &&
          !isDunder(name) &&
          moduleAttributeVerdict(module, name) === 'unknown-attribute' &&
          moduleRefusal(qualifiedName) !== null
        ) {
          findings.add(
            Rule.moduleAttribute,
            `'${name}' is not part of the allowed API of module '${module}'`,
            nameNode.startPosition,
          );
        }
      }
      bind(boundName, qualifiedName);
      importedNames.push({ qualifiedName, node: nameNode });
    }
  }
  return { bindings, importedNames };
}

/** `a.b as c` -> the `a.b` part; a plain dotted name is its own target. */
function aliasedTarget(imported: Node): Node {
  return imported.type === 'aliased_import' ? (imported.childForFieldName('name') ?? imported) : imported;
}
