"""The plugin daemon's declaration rules, which are stricter than the SDK's pydantic models.

Taken from langgenius/dify-plugin-daemon: pkg/entities/plugin_entities/plugin_declaration.go
(author, name, storage size, arch, runner), tool_declaration.go (tool and provider names,
parameter types and forms, ``human_description`` required, ``scope`` only on selector types),
basic_type.go (I18n texts: en_US required, under 1024 characters), manifest_entities/version.go
and tags.go, and pkg/plugin_packager/decoder/helper.go (README.md at the root, readme/README_xx_YY.md,
icons present in _assets/). :func:`declaration_problems` returns every violation as a sentence.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

AUTHOR_RE = re.compile(r"^[a-z0-9_-]{1,64}$")
PLUGIN_NAME_RE = re.compile(r"^[a-z0-9_-]{1,128}$")
VERSION_RE = re.compile(r"^\d{1,4}(\.\d{1,4}){2}(-\w{1,16})?$")
TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]+$")
README_I18N_RE = re.compile(r"^README_([a-z]{2}_[A-Za-z]{2,})\.md$")
PLUGIN_TAGS = {"search", "image", "videos", "weather", "finance", "design", "travel", "social", "news",
               "medical", "productivity", "education", "business", "entertainment", "utilities", "agent",
               "rag", "other", "trigger"}
PARAM_TYPES = {"string", "number", "boolean", "select", "secret-input", "file", "files", "app-selector",
               "model-selector", "any", "dynamic-select", "array", "object", "checkbox", "date", "date-range"}
PARAM_FORMS = {"schema", "form", "llm"}
MODEL_SCOPES = {"llm", "text-embedding", "rerank", "tts", "speech2text", "moderation", "vision", "document",
                "tool-call"}


def _i18n(where: str, obj: Any, problems: list[str]) -> None:
    if not isinstance(obj, dict) or not isinstance(obj.get("en_US"), str) or not obj["en_US"]:
        problems.append(f"{where}: en_US text is required")
        return
    for key, value in obj.items():
        if isinstance(value, str) and len(value) >= 1024:
            problems.append(f"{where}.{key}: must be shorter than 1024 characters")


def _scope_ok(param: dict) -> bool:
    scope = param.get("scope")
    if scope is None:
        return True
    if param.get("type") == "model-selector":
        return any(s.strip() in MODEL_SCOPES for s in str(scope).split("&"))
    if param.get("type") == "app-selector":
        return any(s.strip() in {"all", "chat", "workflow", "completion"} for s in str(scope).split("&"))
    return param.get("type") == "any"


def _tool_problems(root: Path, path: str, problems: list[str]) -> None:
    file = root / path
    if not file.is_file():
        problems.append(f"tool file {path} is missing")
        return
    data = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
    identity = data.get("identity") or {}
    if not identity.get("author"):
        problems.append(f"{path}: identity.author is required")
    if not TOOL_NAME_RE.match(str(identity.get("name", ""))):
        problems.append(f"{path}: tool name must match ^[a-zA-Z0-9_-]+$")
    _i18n(f"{path}: identity.label", identity.get("label"), problems)
    description = data.get("description") or {}
    _i18n(f"{path}: description.human", description.get("human"), problems)
    if not description.get("llm"):
        problems.append(f"{path}: description.llm is required")
    for i, param in enumerate(data.get("parameters") or []):
        where = f"{path}: parameters[{i}] {param.get('name')}"
        name = param.get("name")
        if not isinstance(name, str) or not 0 < len(name) < 1024:
            problems.append(f"{where}: name is required")
        _i18n(f"{where}.label", param.get("label"), problems)
        _i18n(f"{where}.human_description", param.get("human_description"), problems)
        if param.get("type") not in PARAM_TYPES:
            problems.append(f"{where}: type {param.get('type')!r} is not a tool parameter type")
        if param.get("form") not in PARAM_FORMS:
            problems.append(f"{where}: form {param.get('form')!r} must be schema, form or llm")
        if not _scope_ok(param):
            problems.append(f"{where}: scope {param.get('scope')!r} is not valid for type {param.get('type')}")
        for j, option in enumerate(param.get("options") or []):
            _i18n(f"{where}.options[{j}].label", option.get("label"), problems)
    source = ((data.get("extra") or {}).get("python") or {}).get("source")
    if not source or not (root / source).is_file():
        problems.append(f"{path}: extra.python.source {source!r} does not exist")


def declaration_problems(root: Path) -> list[str]:
    """Every rule of the daemon that the plugin at ``root`` breaks (empty when it would install)."""
    problems: list[str] = []
    manifest = yaml.safe_load((root / "manifest.yaml").read_text(encoding="utf-8")) or {}
    if not AUTHOR_RE.match(str(manifest.get("author", ""))):
        problems.append("manifest: author must match ^[a-z0-9_-]{1,64}$")
    if not PLUGIN_NAME_RE.match(str(manifest.get("name", ""))):
        problems.append("manifest: name must match ^[a-z0-9_-]{1,128}$")
    if not VERSION_RE.match(str(manifest.get("version", ""))):
        problems.append("manifest: version must look like 1.2.3 or 1.2.3-beta")
    if manifest.get("type") != "plugin":
        problems.append("manifest: type must be plugin")
    _i18n("manifest: label", manifest.get("label"), problems)
    _i18n("manifest: description", manifest.get("description"), problems)
    for tag in manifest.get("tags") or []:
        if tag not in PLUGIN_TAGS:
            problems.append(f"manifest: tag {tag!r} is unknown to the daemon")
    if not manifest.get("created_at"):
        problems.append("manifest: created_at is required")
    resource = manifest.get("resource") or {}
    if not resource.get("memory"):
        problems.append("manifest: resource.memory is required")
    storage = (resource.get("permission") or {}).get("storage")
    if storage is not None and not 1024 <= int(storage.get("size", 0)) <= 1073741824:
        problems.append("manifest: resource.permission.storage.size must be within 1024..1073741824")
    meta = manifest.get("meta") or {}
    if not VERSION_RE.match(str(meta.get("version", ""))):
        problems.append("manifest: meta.version must look like 0.0.1")
    if not meta.get("arch") or any(a not in ("amd64", "arm64") for a in meta["arch"]):
        problems.append("manifest: meta.arch must list amd64 / arm64")
    runner = meta.get("runner") or {}
    if runner.get("language") != "python" or not runner.get("version") or not runner.get("entrypoint"):
        problems.append("manifest: meta.runner needs language python, version and entrypoint")
    elif not (root / f"{runner['entrypoint']}.py").is_file():
        problems.append(f"manifest: entrypoint {runner['entrypoint']}.py is missing")
    if "minimum_dify_version" in manifest:
        problems.append("manifest: minimum_dify_version belongs under meta")
    privacy = manifest.get("privacy")
    if privacy and not (root / privacy).is_file():
        problems.append(f"manifest: privacy file {privacy} is missing")

    assets = {p.name for p in (root / "_assets").iterdir()} if (root / "_assets").is_dir() else set()
    if manifest.get("icon") not in assets:
        problems.append("manifest: plugin icon not found in _assets/")
    if not (root / "README.md").is_file():
        problems.append("README.md (en_US readme) is missing at the plugin root")
    if (root / "readme").is_dir():
        for file in (root / "readme").iterdir():
            if not README_I18N_RE.match(file.name):
                problems.append(f"readme/{file.name}: ignored by the daemon (name it README_xx_YY.md)")
    if not (root / "requirements.txt").is_file():
        problems.append("requirements.txt is missing")

    plugins = manifest.get("plugins") or {}
    for provider_path in plugins.get("tools") or []:
        file = root / provider_path
        if not file.is_file():
            problems.append(f"provider file {provider_path} is missing")
            continue
        provider = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
        identity = provider.get("identity") or {}
        if not TOOL_NAME_RE.match(str(identity.get("name", ""))):
            problems.append(f"{provider_path}: provider name must match ^[a-zA-Z0-9_-]+$")
        for key in ("author", "icon"):
            if not identity.get(key):
                problems.append(f"{provider_path}: identity.{key} is required")
        _i18n(f"{provider_path}: identity.label", identity.get("label"), problems)
        _i18n(f"{provider_path}: identity.description", identity.get("description"), problems)
        if identity.get("icon") and identity["icon"] not in assets:
            problems.append(f"{provider_path}: tool icon not found in _assets/")
        for tag in identity.get("tags") or []:
            if tag not in PLUGIN_TAGS:
                problems.append(f"{provider_path}: tag {tag!r} is unknown to the daemon")
        creds = provider.get("credentials_for_provider")
        if creds is not None and not isinstance(creds, dict):
            problems.append(f"{provider_path}: credentials_for_provider must be a mapping")
        if not provider.get("tools"):
            problems.append(f"{provider_path}: tools list is required")
        for tool_path in provider.get("tools") or []:
            _tool_problems(root, tool_path, problems)
        source = ((provider.get("extra") or {}).get("python") or {}).get("source")
        if not source or not (root / source).is_file():
            problems.append(f"{provider_path}: extra.python.source {source!r} does not exist")
    if not plugins.get("tools"):
        problems.append("manifest: at least one tool provider is required")
    return problems
