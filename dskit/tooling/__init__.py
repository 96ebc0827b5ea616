"""Tooling around the engine: CLI, generators, DSL building and running, replays, benchmarks, packaging.

Nothing here is bundled into a code node or needed by the plugin runtime. Third-party libraries are
imported lazily, inside the functions that use them.

Layout (arrows are imports; there are no cycles)::

    cli.py                 the ``dskit`` entry point only: nothing here imports it
    parser.py, commands/   ``dskit <command>``: the parser (every command's module, each imports what it
                           runs) and running a command in-process, for cli.py and whoever needs the CLI
    generated.py           every generated file (GENERATORS): ``dskit gen`` and ``gen --check``
        |-> docfigures.py  the figures in README*.md and docs/, from bench/context.json, flow.json and
        |                  cassettes.json (``bench context|flow|cassettes --record``; the last replays the
        |                  real model's cassettes), and README's ``dskit --help`` block
        |-> codegen/       code nodes: the engine bundled into pasted scripts
        |     bundle.py      one standard-library file from dskit/*.py for an entry function
        |     lean.py        the bundle's cold-start rewrites (dataclasses written out, lazy regexes)
        |     nodespecs.py   each code node's inputs, outputs, settings and write-backs
        |     code_nodes.py  code_nodes/<name>.py and code_nodes/README*.md
        |     sandbox.py     THE code runner: runs a script as dify-sandbox does (everyone uses it)
        '-> dslbuild/      building Chatflow DSL (never runs one)
              builder.py     Flow: nodes, edges, variables, dependencies -> YAML
              node_data.py   one ``data`` builder per Dify node type
              conversation.py  the conversation variables of all three layouts, declared once
              code_sources.py  a code node's text in a flow = the generated code_nodes/ script
              prompts.py     the LLM nodes' prompts
              flows.py       the fast and classic layouts (code nodes)
              plugin_flow.py the plugin layout (our plugin's tool nodes)
              generate.py    the three dsl/*.yml files, each checked by check.py
              check.py       ``check-dsl``: what Dify's import does not check
              dify_rules.py  ``check-dsl``: what Dify's database, plugin daemon and release refuse
              dify_versions.py  which Dify release accepts what (DSL version, booleans)
              layout.py, render.py  node positions; a PNG/SVG picture of a flow
    dslrun/                running Chatflow DSL in graphon (Dify's engine); imports dslbuild, not back
        graphon.py           the harness: Conversation, scripted/live LLM stand-ins, code via sandbox.py
        scenarios.py         tests/scenarios/*.yml turn by turn with expectations
        demo.py, costs.py    ``dskit demo``; LLM calls and prompt size per layout
        taskapi.py, live.py  a local task API; an OpenAI-compatible responder for ``dskit chat``
        plugin_tools.py      our plugin's tools behind graphon's tool nodes (plugin layout; tests and eval)
        plugin_daemon.py     the stand-in plugin daemon they call back: storage, model, summary
    bench/                 ``dskit bench <name>``: context, tokens, flow, code_nodes (``bench nodes``),
                           cassettes (the real-model figures, replayed from tests/cassettes/)
    replay/                ``dskit replay``: CrossWOZ / RiSAWOZ dialogues through the engine (``--from llm``:
                           through a model first)
    llm/                   the model client of chat, eval and replay: deadline, retries, JSON mode, cache;
                           nothing.py, a model that answers nothing (the baseline, ``eval --answers-nothing``)
    eval/                  ``dskit eval``: suites (examples/eval), engine/flow/dify targets, metrics, reports
    plugin_package.py      ``dskit build``: the .difypkg, packed as Dify's packager does
    design_figure.py       docs/design.png: the engine's modules (read from the source) and one turn

Build vs run: ``dslbuild`` produces YAML and checks it statically (nothing in a checked file runs;
``check-dsl --run-code`` alone runs a code node's ``main`` once on empty inputs, through
``codegen.sandbox`` with Dify's restrictions); ``dslrun`` loads YAML and executes it. ``codegen`` imports neither, so building code nodes never depends on DSL.
"""
