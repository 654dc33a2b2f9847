"""Sign-in, SCIM and offboarding tests spend the same budgets (allauth's mail limits, login rates) as
the projects app's: each starts with full ones."""

from tests.projects.conftest import full_budgets  # noqa: F401  (an autouse fixture, shared)
