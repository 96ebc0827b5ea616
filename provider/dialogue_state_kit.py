"""The tool provider: no credentials (everything runs on the workspace's own models and storage)."""

from typing import Any

from dify_plugin import ToolProvider


class DialogueStateKitProvider(ToolProvider):
    """Nothing to validate: the plugin needs no API key."""

    def _validate_credentials(self, credentials: dict[str, Any]) -> None:
        return None
