"""Tooling around the engine: CLI, generators, replays, benchmarks, graphon runs, packaging.

Nothing here is bundled into a code node or needed by the plugin runtime. Third-party libraries are
imported lazily, inside the functions that use them.
"""
