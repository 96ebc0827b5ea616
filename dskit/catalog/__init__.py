"""The catalog: the tasks a user's assistant knows, their slots, and what a catalog may hold.

Holds: reading and checking a task catalog with the limits a Dify variable and a prompt impose
(``catalog``) and the hints a catalog author gets beyond errors (``catalog_lint``).

May import: the base.
"""
