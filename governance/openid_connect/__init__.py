"""The URLs of governance/oidc.py's provider: allauth's, with a callback that keeps the raw ID token."""
