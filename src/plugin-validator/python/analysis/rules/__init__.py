"""The rule families, each a mixin of the Analyser whose check_<Node> methods judge one node type."""
