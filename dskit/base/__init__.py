"""The base: what every part of the engine reads and writes with.

Holds: text and JSON reading that never raises (``text``, ``jsonish``, ``kvdoc``), Dify's size limits
and token counts (``limits``, ``tokens``), the regular-expression safety check (``redos``), the message
tables in Chinese and English (``messages``) and the number grammar (``numerals``: Arabic, Chinese and
English numbers read whole), which the catalog's values and every reader share.

May import: the standard library and other modules of the base, nothing else of the engine.
"""
