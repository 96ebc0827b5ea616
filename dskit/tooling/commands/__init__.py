"""One module per ``dskit`` sub-command; each defines ``register(subparsers)``.

The CLI discovers the modules here, so adding a command never touches a shared file.
"""
