"""Running Chatflow DSL files in graphon (Dify's engine): harness, scenarios, demo, costs, live model.

Builds nothing itself: it loads YAML that :mod:`dskit.tooling.dslbuild` produced (demo and costs ask it
for the layouts) or any user's file. Depends on dslbuild, never the other way round.
"""
