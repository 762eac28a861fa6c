"""Built-in replay strategies, one module each; every module here registers itself when loaded."""
