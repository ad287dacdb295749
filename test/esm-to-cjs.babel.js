// Jest on Node 20 cannot require() ES modules, and NestJS 12 ships only ES modules.
// Test runs therefore compile the ESM packages in node_modules to CommonJS; the built app
// needs none of this because Node 20.19+ requires ES modules natively.
function importMetaToCommonJs({ types: t }) {
  return {
    visitor: {
      MetaProperty(path) {
        if (path.node.meta.name !== 'import') return;
        const parent = path.parentPath;
        if (parent.isMemberExpression() && t.isIdentifier(parent.node.property, { name: 'url' })) {
          parent.replaceWithSourceString('require("node:url").pathToFileURL(__filename).href');
        } else {
          path.replaceWithSourceString('({ url: require("node:url").pathToFileURL(__filename).href, dirname: __dirname, filename: __filename })');
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
