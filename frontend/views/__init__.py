"""The browser UI's views (thin: reads go through ``sessions_app.selectors``, writes through services)."""

from frontend.views.pages import dashboard, invitation_accept, not_found

__all__ = ["dashboard", "invitation_accept", "not_found"]
