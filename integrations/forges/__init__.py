"""The forge adapters, by name."""

from __future__ import annotations

from integrations.forges.base import ForgeAdapter
from integrations.forges.github import GitHub
from integrations.forges.gitlab import GitLab

ADAPTERS: dict[str, ForgeAdapter] = {"github": GitHub(), "gitlab": GitLab()}
