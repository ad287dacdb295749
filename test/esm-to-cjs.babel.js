// Jest on Node 20 cannot require() ES modules, and NestJS 12 ships only ES modules.
// Test runs therefore compile the ESM packages in node_modules to CommonJS; the built app
// needs none of this because Node 20.19+ requires ES modules natively.
function importMetaToCommonJs({ types: t }) {
  return {
    visitor: {
      // `const require = createRequire(import.meta.url)` would shadow CommonJS's own require.
      VariableDeclarator(path) {
        const { id, init } = path.node;
        if (
          t.isIdentifier(id, { name: 'require' }) &&
          t.isCallExpression(init) &&
          t.isIdentifier(init.callee, { name: 'createRequire' })
        ) {
          path.remove();
        }
      },
      // Jest's CommonJS runtime has no import(); require() gives the same module.
      CallExpression(path) {
        if (path.node.callee.type !== 'Import') return;
        path.replaceWith(
          t.callExpression(
            t.memberExpression(
              t.callExpression(t.memberExpression(t.identifier('Promise'), t.identifier('resolve')), []),
              t.identifier('then'),
            ),
            [t.arrowFunctionExpression([], t.callExpression(t.identifier('require'), path.node.arguments))],
          ),
        );
      },
      MetaProperty(path) {
        if (path.node.meta.name !== 'import') return;
        const parent = path.parentPath;
        if (parent.isMemberExpression() && t.isIdentifier(parent.node.property, { name: 'url' })) {
          parent.replaceWithSourceString('require("node:url").pathToFileURL(__filename).href');
        } else {
          path.replaceWithSourceString(
            '({ url: require("node:url").pathToFileURL(__filename).href, dirname: __dirname, filename: __filename, ' +
              'resolve: (specifier) => require("node:url").pathToFileURL(require.resolve(specifier)).href })',
          );
        }
      },
    },
  };
}

module.exports = require('babel-jest').createTransformer({
  babelrc: false,
  configFile: false,
  plugins: [importMetaToCommonJs, '@babel/plugin-transform-modules-commonjs'],
});
