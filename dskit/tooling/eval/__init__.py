"""``dskit eval``: measure a model (and a layout) on conversations with known right answers.

- :mod:`.suite`: the suite format (examples/eval/*.yaml);
- :mod:`.engine_target`, :mod:`.flow_target`, :mod:`.dify_target`: the three ways to run a conversation;
- :mod:`.metrics`: per-turn scoring and the summary figures (definitions in docs/eval.md);
- :mod:`.runner`: conversations in parallel, errors contained;
- :mod:`.report`: the table, ``--json``, the JSONL trace, the HTML page and its chart.
"""
