import type { Node } from 'web-tree-sitter';
import { moduleRefusal } from './allowed-modules';
import type { Findings } from './findings';
import { fieldAttributeChains, templateText } from './format-fields';
import { moduleAttributeVerdict } from './module-attributes';
import { FORBIDDEN_MODULES, isForbiddenModule, MODULE_REACHING_NAMES } from './forbidden-modules';
import {
  findCallArgument,
  type ImportBindings,
  identifierName,
  nameCandidates,
  resolveQualifiedNames,
  simpleStrLiteralValue,
} from './python-syntax';
import {
  ALLOWED_DUNDER_METHODS,
  ALLOWED_PLAIN_DUNDER_NAMES,
  BUILTIN_NAMES_ALLOWED_AS_ATTRIBUTES,
  DANGEROUS_ATTRIBUTE_NAMES,
  DANGEROUS_ATTRIBUTE_PREFIXES,
  DANGEROUS_QUALIFIED_NAMES,
  FILE_WRITING_METHODS,
  FILE_WRITING_QUALIFIED_NAMES,
  FORBIDDEN_BUILTIN_NAMES,
  LITERAL_ATTRIBUTE_BUILTINS,
  isDecoderFunction,
  isDunder,
  isPrivateName,
  MODULES_USABLE_ONLY_BY_ATTRIBUTE,
  OPEN_LIKE_QUALIFIED_NAMES,
  OPEN_MODE_SHAPE,
  PUBLIC_UNDERSCORE_ATTRIBUTES,
  READ_ONLY_OPEN_MODES,
  READABLE_DUNDER_ATTRIBUTES,
  Rule,
  YAML_ALWAYS_UNSAFE_LOADERS,
  YAML_LOADERS_NEEDING_SAFE_LOADER,
  YAML_SAFE_LOADER_CLASSES,
} from './rules';
import type { SyntaxContext } from './syntax-context';

/** Attribute names whose rule depends on what they are called on. */
const CONTEXT_DEPENDENT_ATTRIBUTE_NAMES: ReadonlySet<string> = new Set([
  'open',
  'format',
  'format_map',
  'modules',
  'basicConfig',
  ...[...OPEN_LIKE_QUALIFIED_NAMES].map((name) => name.slice(name.lastIndexOf('.') + 1)),
  ...[...DANGEROUS_QUALIFIED_NAMES].map((name) => name.slice(name.lastIndexOf('.') + 1)),
  ...[...FILE_WRITING_QUALIFIED_NAMES].map((name) => name.slice(name.lastIndexOf('.') + 1)),
  ...FILE_WRITING_METHODS,
  ...YAML_ALWAYS_UNSAFE_LOADERS,
  ...YAML_LOADERS_NEEDING_SAFE_LOADER,
]);

const BUILTIN_MODULES: ReadonlySet<string> = new Set(['builtins', '__builtin__']);

/** Last parts of forbidden dotted modules (`config` of logging.config): watched as attributes. */
const FORBIDDEN_MODULE_TAILS: ReadonlySet<string> = new Set(
  FORBIDDEN_MODULES.filter((module) => module.includes('.')).map((module) =>
    module.slice(module.lastIndexOf('.') + 1),
  ),
);

/** Nodes that pass an argument through to a call: `f(k=x)`, `f(*x)`, `f(**x)`. */
const ARGUMENT_WRAPPERS: ReadonlySet<string> = new Set([
  'keyword_argument',
  'list_splat',
  'dictionary_splat',
  'parenthesized_list_splat',
]);

/**
 * Rules about names: forbidden builtins, dunders, dangerous attributes, open(), yaml and
 * decoded payloads. Runs on identifiers found by the walk; resolves aliases through imports.
 */
export class NameRules {
  /** Everything imports bind, to tell `logging.config` (a module) from `settings.config`. */
  private readonly importedNames: ReadonlySet<string>;

  /** Module-level names bound once to a string literal, for `TEMPLATE.format(...)`. */
  private stringConstants?: Map<string, string>;

  constructor(
    private readonly source: string,
    private readonly findings: Findings,
    private readonly bindings: ImportBindings,
    private readonly root: Node,
  ) {
    this.importedNames = new Set([...bindings.values()].flat());
  }

  /** Cheap filter for every identifier in the file: only a few need their context read. */
  isWatched(name: string): boolean {
    return (
      isDunder(name) ||
      isPrivateName(name) ||
      FORBIDDEN_BUILTIN_NAMES.has(name) ||
      isDangerousAttributeName(name) ||
      CONTEXT_DEPENDENT_ATTRIBUTE_NAMES.has(name) ||
      looksLikeDecoderName(name) ||
      MODULES_USABLE_ONLY_BY_ATTRIBUTE.has(name) ||
      MODULE_REACHING_NAMES.has(name) ||
      FORBIDDEN_MODULE_TAILS.has(name) ||
      // Every name an import binds: what it refers to matters, and it must not be rebound.
      this.bindings.has(name)
    );
  }

  /** `from operator import attrgetter` is rejected where it is imported, not only where used. */
  checkImportedName(qualifiedName: string, node: Node): void {
    if (isDangerousQualifiedName(qualifiedName)) {
      this.findings.add(
        Rule.dangerousAttribute,
        `Use of dangerous name '${qualifiedName}'`,
        node.startPosition,
      );
    }
  }

  checkIdentifier(context: SyntaxContext, name: string): void {
    const parentType = context.type(1);
    if (parentType === 'attribute' && context.fieldName(0) === 'attribute') {
      this.checkAttributeName(context, name);
    } else if (parentType === 'keyword_argument' && context.fieldName(0) === 'name') {
      // `f(input=1)` names a parameter; it does not reference the builtin.
      if (isDunder(name)) this.reportDunder(context, name);
    } else if (
      parentType === 'keyword_pattern' &&
      context.node(1)?.firstNamedChild?.id === context.node(0)?.id
    ) {
      this.checkPatternAttribute(context, name);
    } else {
      this.checkNameReference(context, name);
    }
  }

  private checkNameReference(context: SyntaxContext, name: string): void {
    if (this.bindings.has(name)) this.checkNotTampered(context, name);
    if (
      FORBIDDEN_BUILTIN_NAMES.has(name) &&
      !this.isImportedOrdinaryMethod(name) &&
      !this.isLiteralAttributeCall(context, name) &&
      !this.isOwnParameter(context, name)
    ) {
      this.report(context, Rule.forbiddenName, `Use of forbidden name '${name}'`);
      return;
    }
    if (isDunder(name)) {
      const allowed =
        ALLOWED_PLAIN_DUNDER_NAMES.has(name) ||
        // A class may define any special method: what runs inside is checked like any code.
        isMethodDefinitionName(context);
      if (!allowed) this.reportDunder(context, name);
      return;
    }
    const isAttributeObject = context.type(1) === 'attribute' && context.fieldName(0) === 'object';
    if (isAttributeObject && this.bindings.has(name)) this.checkModuleAttribute(context, name);
    for (const qualifiedName of nameCandidates(name, this.bindings)) {
      const rule = MODULES_USABLE_ONLY_BY_ATTRIBUTE.get(qualifiedName);
      if (rule !== undefined && !isAttributeObject) {
        this.report(context, rule, `Module '${qualifiedName}' may only be used as ${qualifiedName}.<name>`);
      }
      this.checkQualifiedUse(context, 0, qualifiedName);
    }
  }

  /**
   * `module.name` where the module has a generated API table: the name must be in it, or be
   * an allowed submodule. (Private names have their own rule.)
   */
  private checkModuleAttribute(context: SyntaxContext, name: string): void {
    for (const imported of this.bindings.get(name) ?? []) {
      // Down the chain `a.b.c.d` while it names allowed modules; the first other name is checked.
      let module = imported;
      for (let level = 1; context.type(level) === 'attribute'; level++) {
        if (level > 1 && context.fieldName(level - 1) !== 'object') break;
        const attributeNode = context.node(level)?.childForFieldName('attribute');
        if (!attributeNode || attributeNode.type !== 'identifier') break;
        const attribute = identifierName(this.source, attributeNode);
        if (isPrivateName(attribute) || isDunder(attribute)) break;
        if (moduleRefusal(`${module}.${attribute}`) === null) {
          module = `${module}.${attribute}`;
          continue;
        }
        if (moduleAttributeVerdict(module, attribute) === 'unknown-attribute') {
          this.report(
            context,
            Rule.moduleAttribute,
            `'${attribute}' is not part of the allowed API of module '${module}'`,
          );
        }
        break;
      }
    }
  }

  /**
   * What an import binds stays what it was: rebinding the name (`SafeLoader = yaml.Loader`)
   * or assigning into the module (`yaml.SafeLoader = yaml.Loader`) would turn the rules that
   * trust it into doors.
   */
  private checkNotTampered(context: SyntaxContext, name: string): void {
    if (isAssignmentTarget(context, 0)) {
      this.report(
        context,
        Rule.moduleTampering,
        `Assigning to '${name}', a name bound by an import, is not allowed`,
      );
    } else if (
      context.type(1) === 'attribute' &&
      context.fieldName(0) === 'object' &&
      isAssignmentTarget(context, 1)
    ) {
      this.report(
        context,
        Rule.moduleTampering,
        `Assigning to attributes of '${name}', an imported name, is not allowed`,
      );
    }
  }

  /**
   * `case C(name=capture)` reads the attribute `name` of the subject: the same doors as
   * `subject.name`, so the same rules, except that a pattern has no object to be `self`.
   */
  private checkPatternAttribute(context: SyntaxContext, name: string): void {
    const problem = attributeProblem(name, undefined);
    if (problem) {
      this.report(context, problem.rule, problem.message);
    } else if (FORBIDDEN_BUILTIN_NAMES.has(name) && !BUILTIN_NAMES_ALLOWED_AS_ATTRIBUTES.has(name)) {
      this.report(context, Rule.forbiddenName, `Use of forbidden name '${name}'`);
    }
  }

  /** `name` is the attribute part of the `attribute` node one level up. */
  private checkAttributeName(context: SyntaxContext, name: string): void {
    const attribute = context.node(1);
    const object = attribute?.childForFieldName('object') ?? null;
    if (FORBIDDEN_BUILTIN_NAMES.has(name) && !BUILTIN_NAMES_ALLOWED_AS_ATTRIBUTES.has(name)) {
      this.report(context, Rule.forbiddenName, `Use of forbidden name '${name}'`);
      return;
    }
    if (isDunder(name)) {
      const allowed =
        (ALLOWED_DUNDER_METHODS.has(name) &&
          object !== null &&
          this.isSelfOrSuper(object) &&
          context.callLevelOf(1) >= 0) ||
        (READABLE_DUNDER_ATTRIBUTES.has(name) && !isAssignmentTarget(context, 1)) ||
        (name === '__class__' && this.isClassNameRead(context));
      if (!allowed) this.reportDunder(context, name);
      return;
    }
    if (name === 'attrgetter' && object && this.isLiteralAttrgetter(context, 1, object)) return;
    if (isDangerousAttributeName(name)) {
      this.report(context, Rule.dangerousAttribute, `Use of dangerous attribute '${name}'`);
      return;
    }
    if (MODULE_REACHING_NAMES.has(name)) {
      this.report(context, Rule.dangerousAttribute, `Attribute '${name}' reaches a forbidden module`);
      return;
    }
    if (name === 'format' || name === 'format_map') {
      if (object) this.checkFormatCall(context, object, name);
      return;
    }
    if (FILE_WRITING_METHODS.has(name)) {
      this.report(context, Rule.openWrite, `Writing files with .${name}() is not allowed`);
      return;
    }
    if (isPrivateName(name) && !PUBLIC_UNDERSCORE_ATTRIBUTES.has(name)) {
      // A module's or an object's private helpers are where the doors are
      // (`uuid._get_command_stdout`, a loop's `_make_subprocess_transport`).
      if (!object || !this.isOwnObject(object)) {
        this.report(context, Rule.privateAccess, `Access to private attribute '${name}' is not allowed`);
      }
      return;
    }
    const objectNames = object ? resolveQualifiedNames(this.source, object, this.bindings) : [];
    if (BUILTIN_NAMES_ALLOWED_AS_ATTRIBUTES.has(name)) {
      if (objectNames.some((objectName) => BUILTIN_MODULES.has(objectName))) {
        this.report(context, Rule.forbiddenName, `Use of forbidden name '${name}'`);
      }
      return;
    }
    if (
      name === 'open' &&
      !objectNames.some((objectName) => OPEN_LIKE_QUALIFIED_NAMES.has(`${objectName}.open`))
    ) {
      this.checkMethodOpen(context);
    }
    for (const objectName of objectNames) {
      const qualifiedName = `${objectName}.${name}`;
      if (isForbiddenModule(qualifiedName) && this.isImportedModulePath(objectName)) {
        // `import logging` then `logging.config`: the submodule, reached without importing it.
        this.report(context, Rule.forbiddenImport, `Use of forbidden module '${qualifiedName}'`);
      }
      this.checkQualifiedUse(context, 1, qualifiedName);
    }
  }

  /** The expression `level` steps up refers to `qualifiedName`. */
  private checkQualifiedUse(context: SyntaxContext, level: number, qualifiedName: string): void {
    if (qualifiedName === 'operator.attrgetter') {
      if (!this.hasLiteralAttributeArguments(context, level)) {
        this.report(
          context,
          Rule.dangerousAttribute,
          'operator.attrgetter needs literal attribute names that pass the attribute rules',
        );
      }
    } else if (isDangerousQualifiedName(qualifiedName)) {
      this.report(context, Rule.dangerousAttribute, `Use of dangerous name '${qualifiedName}'`);
    } else if (qualifiedName.startsWith('yaml.')) {
      this.checkYamlUse(context, level, qualifiedName);
    } else if (isDecoderFunction(qualifiedName)) {
      const callLevel = context.callLevelOf(level);
      if (callLevel < 0) {
        // `d = base64.b64decode` would let `f(d(s))` through.
        this.report(context, Rule.decodedCall, `${qualifiedName} may only be called directly`);
      } else if (flowsIntoCall(context, callLevel) && !this.flowsIntoDataSink(context, callLevel)) {
        this.report(
          context,
          Rule.decodedCall,
          `The result of ${qualifiedName}() must not be passed straight to a call`,
        );
      }
    } else if (OPEN_LIKE_QUALIFIED_NAMES.has(qualifiedName)) {
      this.checkOpenUse(context, level, qualifiedName);
    } else if (FILE_WRITING_QUALIFIED_NAMES.has(qualifiedName)) {
      this.report(context, Rule.openWrite, `${qualifiedName} writes files, which is not allowed`);
    } else if (qualifiedName === 'logging.basicConfig') {
      const callLevel = context.callLevelOf(level);
      const call = callLevel >= 0 ? context.node(callLevel) : null;
      if (call === null || findCallArgument(this.source, call, Infinity, 'filename').kind !== 'absent') {
        this.report(context, Rule.openWrite, 'logging.basicConfig may not log to a file');
      }
    }
  }

  /**
   * `.open()` of any other object (`Path.open(mode)`, `gzip.open(path, mode)`, an opener's
   * `open(url)`): the signature is unknown, so every argument shaped like a mode, and any
   * `mode=`, must be a literal read mode.
   */
  private checkMethodOpen(context: SyntaxContext): void {
    const callLevel = context.callLevelOf(1);
    const call = callLevel >= 0 ? context.node(callLevel) : null;
    const refuse = () =>
      this.report(
        context,
        Rule.openWrite,
        ".open() must be called directly, with a literal read mode ('r', 'rb' or 'rt')",
      );
    if (call === null) return refuse();
    const mode = findCallArgument(this.source, call, Infinity, 'mode');
    if (mode.kind === 'unknown') return refuse();
    const candidates = [
      mode,
      findCallArgument(this.source, call, 0, ''),
      findCallArgument(this.source, call, 1, ''),
    ];
    for (const candidate of candidates) {
      if (candidate.kind !== 'found') continue;
      const literal = simpleStrLiteralValue(this.source, candidate.node);
      const isModeKeyword = candidate === mode;
      if (
        literal === null ? isModeKeyword : OPEN_MODE_SHAPE.test(literal) && !READ_ONLY_OPEN_MODES.has(literal)
      ) {
        return refuse();
      }
    }
  }

  private checkYamlUse(context: SyntaxContext, level: number, qualifiedName: string): void {
    const loader = qualifiedName.slice('yaml.'.length);
    let unsafe = YAML_ALWAYS_UNSAFE_LOADERS.has(loader);
    if (YAML_LOADERS_NEEDING_SAFE_LOADER.has(loader)) {
      const callLevel = context.callLevelOf(level);
      const call = callLevel >= 0 ? context.node(callLevel) : null;
      unsafe = call === null || !this.hasSafeYamlLoader(call);
    }
    if (unsafe) {
      this.report(
        context,
        Rule.unsafeYamlLoad,
        `${qualifiedName} without Loader=yaml.SafeLoader is not allowed; use yaml.safe_load`,
      );
    }
  }

  /** Safe only if every name the Loader argument may refer to is a yaml safe loader. */
  private hasSafeYamlLoader(call: Node): boolean {
    const loader = findCallArgument(this.source, call, 1, 'Loader');
    if (loader.kind !== 'found') return false;
    const loaderNames = resolveQualifiedNames(this.source, loader.node, this.bindings);
    return loaderNames.length > 0 && loaderNames.every(isSafeYamlLoaderName);
  }

  private checkOpenUse(context: SyntaxContext, level: number, qualifiedName: string): void {
    const callLevel = context.callLevelOf(level);
    const call = callLevel >= 0 ? context.node(callLevel) : null;
    if (call === null) {
      this.report(
        context,
        Rule.openWrite,
        `${qualifiedName} may only be called directly, with a literal read mode`,
      );
      return;
    }
    const mode = findCallArgument(this.source, call, 1, 'mode');
    if (mode.kind === 'absent') return;
    const literal = mode.kind === 'found' ? simpleStrLiteralValue(this.source, mode.node) : null;
    if (literal !== null && READ_ONLY_OPEN_MODES.has(literal)) return;
    this.report(
      context,
      Rule.openWrite,
      `${qualifiedName}() must use a literal read mode ('r', 'rb' or 'rt')`,
    );
  }

  /** `logging` or `logging.handlers` after `import logging`; not a local variable `code`. */
  private isImportedModulePath(qualifiedName: string): boolean {
    for (let end = qualifiedName.length; end > 0; end = qualifiedName.lastIndexOf('.', end - 1)) {
      if (this.importedNames.has(qualifiedName.slice(0, end))) return true;
    }
    return false;
  }

  /**
   * A str.format template reads attributes through its fields (`'{0.gi_frame}'.format(x)`),
   * so its fields pass the attribute rules; that needs the template, so it must be a literal
   * (or a module constant bound once to one). A literal never formatted is just text.
   */
  private checkFormatCall(context: SyntaxContext, object: Node, method: string): void {
    let template: Node | null = object;
    const callLevel = context.callLevelOf(1);
    if (object.type === 'identifier' && identifierName(this.source, object) === 'str') {
      // str.format(template, ...)
      const call = callLevel >= 0 ? context.node(callLevel) : null;
      const first = call ? findCallArgument(this.source, call, 0, '') : null;
      template = first?.kind === 'found' ? first.node : null;
    }
    const text = template ? (templateText(this.source, template) ?? this.constantTemplate(template)) : null;
    if (text === null) {
      if (this.isSelfOrSuper(object)) return;
      this.report(
        context,
        Rule.formatString,
        `.${method}() is only allowed on a string literal, whose fields are checked`,
      );
      return;
    }
    for (const chain of fieldAttributeChains(text)) {
      chain.forEach((attribute, index) => {
        const problem = attributeProblem(attribute, chain[index + 1]);
        if (problem) this.report(context, problem.rule, `Format field: ${problem.message}`);
      });
    }
  }

  private constantTemplate(node: Node): string | null {
    if (node.type !== 'identifier') return null;
    this.stringConstants ??= moduleStringConstants(this.source, this.root);
    return this.stringConstants.get(identifierName(this.source, node)) ?? null;
  }

  /**
   * `getattr(obj, 'score', 0)`: the attribute is a plain literal that passes the attribute
   * rules, so it is `obj.score`. set/delattr must not aim at an imported module.
   */
  private isLiteralAttributeCall(context: SyntaxContext, name: string): boolean {
    if (!LITERAL_ATTRIBUTE_BUILTINS.has(name) || this.bindings.has(name)) return false;
    const callLevel = context.callLevelOf(0);
    const call = callLevel >= 0 ? context.node(callLevel) : null;
    if (!call) return false;
    const attribute = findCallArgument(this.source, call, 1, '');
    const literal = attribute.kind === 'found' ? simpleStrLiteralValue(this.source, attribute.node) : null;
    if (literal === null || !IDENTIFIER.test(literal) || attributeProblem(literal, undefined)) return false;
    if (name === 'getattr') return true;
    const target = findCallArgument(this.source, call, 0, '');
    return (
      target.kind === 'found' &&
      !(target.node.type === 'identifier' && this.bindings.has(identifierName(this.source, target.node)))
    );
  }

  /** `operator.attrgetter('score', 'host.name')` with every name passing the attribute rules. */
  private isLiteralAttrgetter(context: SyntaxContext, level: number, object: Node): boolean {
    const objectNames = resolveQualifiedNames(this.source, object, this.bindings);
    return (
      objectNames.length > 0 &&
      objectNames.every((objectName) => objectName === 'operator') &&
      this.hasLiteralAttributeArguments(context, level)
    );
  }

  private hasLiteralAttributeArguments(context: SyntaxContext, level: number): boolean {
    const callLevel = context.callLevelOf(level);
    const call = callLevel >= 0 ? context.node(callLevel) : null;
    const argumentList = call?.childForFieldName('arguments');
    if (!argumentList || argumentList.type !== 'argument_list' || argumentList.namedChildCount === 0)
      return false;
    return argumentList.namedChildren.every((argument) => {
      const literal = argument ? simpleStrLiteralValue(this.source, argument) : null;
      if (literal === null) return false;
      const chain = literal.split('.');
      return chain.every((part, index) => IDENTIFIER.test(part) && !attributeProblem(part, chain[index + 1]));
    });
  }

  /**
   * Decoded bytes passed straight to something that only reads them as data (a hash, len,
   * str): `hashlib.sha256(base64.b64decode(token))` runs nothing the bytes say.
   */
  private flowsIntoDataSink(context: SyntaxContext, callLevel: number): boolean {
    let level = callLevel + 1;
    while (context.type(level) === 'parenthesized_expression') level++;
    if (context.type(level) !== 'argument_list' || context.type(level + 1) !== 'call') return false;
    const callee = context.node(level + 1)?.childForFieldName('function');
    if (!callee) return false;
    if (callee.type === 'identifier') {
      const name = identifierName(this.source, callee);
      if (!this.bindings.has(name)) return DATA_SINK_BUILTINS.has(name);
    }
    const names = resolveQualifiedNames(this.source, callee, this.bindings);
    return names.length > 0 && names.every((name) => /^(hashlib|hmac)\.[a-z0-9_]+$/.test(name));
  }

  /**
   * `def show(help=False):` and its uses inside: a parameter that shares the name of a
   * harmless-as-a-method builtin (help, input, compile) is the parameter, not the builtin.
   */
  private isOwnParameter(context: SyntaxContext, name: string): boolean {
    if (!BUILTIN_NAMES_ALLOWED_AS_ATTRIBUTES.has(name)) return false;
    // The declaration itself: `help`, `help=...`, `help: bool`, not a default value.
    const holder = context.type(1);
    if (holder === 'parameters' || holder === 'lambda_parameters') return true;
    if (
      (holder === 'default_parameter' || holder === 'typed_default_parameter') &&
      context.fieldName(0) === 'name'
    )
      return true;
    if (holder === 'typed_parameter' && context.node(1)?.firstNamedChild?.id === context.node(0)?.id)
      return true;
    // A use inside a function that declares it. (Default values are outside the function's
    // scope, but they hang under its parameters, below the function_definition: skipped.)
    for (let level = 1; context.type(level) !== undefined; level++) {
      const type = context.type(level);
      if (type === 'parameters' || type === 'lambda_parameters') return false;
      if (type !== 'function_definition' && type !== 'lambda') continue;
      const parameters = context.node(level)?.childForFieldName('parameters');
      if (parameters && this.declaresParameter(parameters, name)) return true;
    }
    return false;
  }

  private declaresParameter(parameters: Node, name: string): boolean {
    return parameters.namedChildren.some((parameter) => {
      if (!parameter) return false;
      const identifier =
        parameter.type === 'identifier'
          ? parameter
          : (parameter.childForFieldName('name') ?? parameter.firstNamedChild);
      return identifier?.type === 'identifier' && identifierName(this.source, identifier) === name;
    });
  }

  /** `compile` after `from re import compile`: re.compile, not the builtin. */
  private isImportedOrdinaryMethod(name: string): boolean {
    const qualifiedNames = this.bindings.get(name);
    return (
      BUILTIN_NAMES_ALLOWED_AS_ATTRIBUTES.has(name) &&
      qualifiedNames !== undefined &&
      qualifiedNames.every(
        (qualifiedName) =>
          qualifiedName.endsWith(`.${name}`) &&
          !BUILTIN_MODULES.has(qualifiedName.slice(0, -name.length - 1)),
      )
    );
  }

  /** `x.__class__.__name__`, read: the one use of __class__ that reaches nothing. */
  private isClassNameRead(context: SyntaxContext): boolean {
    if (context.type(2) !== 'attribute' || context.fieldName(1) !== 'object') return false;
    const outer = context.node(2)?.childForFieldName('attribute');
    return (
      outer !== null &&
      outer !== undefined &&
      this.source.slice(outer.startIndex, outer.endIndex) === '__name__' &&
      !isAssignmentTarget(context, 2)
    );
  }

  /** `self`, `cls` or `super()`: the objects a plugin's own class may use privately. */
  private isOwnObject(object: Node): boolean {
    if (object.type === 'identifier' && identifierName(this.source, object) === 'cls') return true;
    return this.isSelfOrSuper(object);
  }

  private isSelfOrSuper(object: Node): boolean {
    if (object.type === 'identifier') return identifierName(this.source, object) === 'self';
    if (object.type !== 'call') return false;
    const callee = object.childForFieldName('function');
    return callee?.type === 'identifier' && identifierName(this.source, callee) === 'super';
  }

  private reportDunder(context: SyntaxContext, name: string): void {
    this.report(context, Rule.dunderAccess, `Access to dunder name '${name}' is not allowed`);
  }

  /** Findings point at the offending identifier itself, so chained findings stay distinct. */
  private report(context: SyntaxContext, rule: string, message: string): void {
    this.findings.add(rule, message, context.node(0)?.startPosition ?? { row: 0, column: 0 });
  }
}

/** `SafeLoader` (spelled bare, as the rule allows) or `yaml.SafeLoader`, `yaml.loader.SafeLoader`. */
function isSafeYamlLoaderName(qualifiedName: string): boolean {
  const className = qualifiedName.slice(qualifiedName.lastIndexOf('.') + 1);
  const fromYaml = qualifiedName === className || qualifiedName.startsWith('yaml.');
  return fromYaml && YAML_SAFE_LOADER_CLASSES.has(className);
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Builtins that only read their argument as data. */
const DATA_SINK_BUILTINS: ReadonlySet<string> = new Set([
  'len',
  'bytes',
  'bytearray',
  'str',
  'print',
  'repr',
]);

/** What is wrong with reading `attribute` (followed by `next` in a chain), by the attribute rules. */
function attributeProblem(
  attribute: string,
  next: string | undefined,
): { rule: string; message: string } | null {
  if (isDunder(attribute)) {
    if (READABLE_DUNDER_ATTRIBUTES.has(attribute) || (attribute === '__class__' && next === '__name__'))
      return null;
    return { rule: Rule.dunderAccess, message: `Access to dunder name '${attribute}' is not allowed` };
  }
  if (isPrivateName(attribute) && !PUBLIC_UNDERSCORE_ATTRIBUTES.has(attribute)) {
    return { rule: Rule.privateAccess, message: `Access to private attribute '${attribute}' is not allowed` };
  }
  if (isDangerousAttributeName(attribute) || MODULE_REACHING_NAMES.has(attribute)) {
    return { rule: Rule.dangerousAttribute, message: `Use of dangerous attribute '${attribute}'` };
  }
  return null;
}

/**
 * Module-level `NAME = "literal"` whose name is assigned nowhere else in the file (no other
 * assignment, augmented assignment, walrus or for target): its value is known everywhere.
 */
function moduleStringConstants(source: string, root: Node): Map<string, string> {
  const candidates = new Map<string, string>();
  for (const statement of root.namedChildren) {
    const assignment = statement?.type === 'expression_statement' ? statement.firstNamedChild : null;
    if (assignment?.type !== 'assignment') continue;
    const left = assignment.childForFieldName('left');
    const right = assignment.childForFieldName('right');
    const text = right ? templateText(source, right) : null;
    if (left?.type === 'identifier' && text !== null) candidates.set(identifierName(source, left), text);
  }
  if (candidates.size === 0) return candidates;
  const assignedTimes = new Map<string, number>();
  const targetTypes = [
    'assignment',
    'augmented_assignment',
    'named_expression',
    'for_statement',
    'for_in_clause',
  ];
  for (const node of root.descendantsOfType(targetTypes)) {
    const target = node?.childForFieldName(node.type === 'named_expression' ? 'name' : 'left');
    if (target?.type !== 'identifier') continue;
    const name = identifierName(source, target);
    if (candidates.has(name)) assignedTimes.set(name, (assignedTimes.get(name) ?? 0) + 1);
  }
  for (const name of [...candidates.keys()]) if (assignedTimes.get(name) !== 1) candidates.delete(name);
  return candidates;
}

/** Node types that hold several assignment targets: `a, b = ...`, `[a, b] = ...`. */
const TARGET_LISTS: ReadonlySet<string> = new Set(['pattern_list', 'tuple_pattern', 'list_pattern']);

/** The expression `level` steps up is assigned to (also within `a, b = ...`, `a += 1`, `for a in`). */
function isAssignmentTarget(context: SyntaxContext, level: number): boolean {
  let target = level;
  while (TARGET_LISTS.has(context.type(target + 1) ?? '')) target++;
  const holder = context.type(target + 1);
  const field = context.fieldName(target);
  if (holder === 'assignment' || holder === 'augmented_assignment') return field === 'left';
  if (holder === 'for_statement' || holder === 'for_in_clause') return field === 'left';
  return false;
}

function isDangerousAttributeName(name: string): boolean {
  return (
    DANGEROUS_ATTRIBUTE_NAMES.has(name) ||
    DANGEROUS_ATTRIBUTE_PREFIXES.some((prefix) => name.startsWith(prefix))
  );
}

function isDangerousQualifiedName(qualifiedName: string): boolean {
  return (
    DANGEROUS_QUALIFIED_NAMES.has(qualifiedName) || qualifiedName.startsWith('asyncio.create_subprocess')
  );
}

/** Superset of the attribute names isDecoderFunction accepts, decided without the object. */
function looksLikeDecoderName(name: string): boolean {
  return (
    name.includes('decode') ||
    name.startsWith('a2b_') ||
    name === 'unhexlify' ||
    name === 'fromhex' ||
    name === 'decompress'
  );
}

/** A `def` directly in a class body (possibly decorated): `class A: def __init__(self): ...`. */
function isMethodDefinitionName(context: SyntaxContext): boolean {
  if (context.type(1) !== 'function_definition' || context.fieldName(0) !== 'name') return false;
  const bodyLevel = context.type(2) === 'decorated_definition' ? 3 : 2;
  return context.type(bodyLevel) === 'block' && context.type(bodyLevel + 1) === 'class_definition';
}

/**
 * Whether a call's result goes straight into another call: `f(decode(s))`, `f(k=decode(s))`,
 * `decode(s)()` or `@decode(s)`. Parentheses are looked through; an attribute access or
 * subscript on the result (`decode(s).hex()`) is not "straight".
 */
function flowsIntoCall(context: SyntaxContext, callLevel: number): boolean {
  let level = callLevel + 1;
  while (context.type(level) === 'parenthesized_expression') level++;
  const parentType = context.type(level);
  if (parentType === 'call') return context.fieldName(level - 1) === 'function';
  if (parentType === 'decorator') return true;
  if (parentType === 'generator_expression') return context.type(level + 1) === 'call';
  if (parentType !== undefined && ARGUMENT_WRAPPERS.has(parentType)) level++;
  return context.type(level) === 'argument_list';
}
