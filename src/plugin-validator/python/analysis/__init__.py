"""The plugin analyser, one module per concern (docs/plugin-validator.md, "Where the code is")."""
