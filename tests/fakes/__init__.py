"""Test doubles for the Dify plugin daemon (the reverse-call boundary of the plugin SDK)."""
