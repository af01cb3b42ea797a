"""plugin_bench: a tiny benchmark outside `harness/`, wired in only through the public
interfaces (its own adapter, contracts and, in the tests, an entry point)."""

__version__ = "0.1.0"
