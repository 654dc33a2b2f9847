"""Inline SVG icon bodies (24×24, stroked): no icon font, no emoji, no external request."""

from markupsafe import Markup

ICON_PATHS = {
    "dot": Markup('<circle cx="12" cy="12" r="3"/>'),
    "user": Markup('<circle cx="12" cy="8" r="4"/><path d="M4 21c0-4 4-6 8-6s8 2 8 6"/>'),
    "assistant": Markup('<path d="M12 3l2.2 5.8L20 11l-5.8 2.2L12 19l-2.2-5.8L4 11l5.8-2.2z"/>'),
    "thinking": Markup(
        '<path d="M9 18h6M10 21h4"/>'
        '<path d="M12 3a6 6 0 0 0-4 10.5c.7.7 1 1.5 1 2.5h6c0-1 .3-1.8 1-2.5A6 6 0 0 0 12 3z"/>'
    ),
    "terminal": Markup('<path d="M4 17l6-5-6-5M12 19h8"/>'),
    "file": Markup('<path d="M14 3H6v18h12V7z"/><path d="M14 3v4h4"/>'),
    "edit": Markup('<path d="M4 20h4L19 9l-4-4L4 16z"/><path d="M13 7l4 4"/>'),
    "search": Markup('<circle cx="11" cy="11" r="6"/><path d="M20 20l-4.5-4.5"/>'),
    "globe": Markup('<circle cx="12" cy="12" r="9"/><path d="M3 12h18M12 3c3 3 3 15 0 18M12 3c-3 3-3 15 0 18"/>'),
    "agent": Markup('<rect x="5" y="8" width="14" height="11" rx="2"/><path d="M12 4v4M9 13h.01M15 13h.01"/>'),
    "list": Markup('<path d="M9 6h11M9 12h11M9 18h11M4 6h.01M4 12h.01M4 18h.01"/>'),
    "tool": Markup(
        '<path d="M14.7 6.3a4 4 0 0 0-5.4 5.2L4 16.8 7.2 20l5.3-5.3a4 4 0 0 0 5.2-5.4l-2.5 2.5-2.5-.5-.5-2.5z"/>'
    ),
    "plug": Markup('<path d="M9 3v5M15 3v5M6 8h12v3a6 6 0 0 1-12 0zM12 17v4"/>'),
    "system": Markup('<circle cx="12" cy="12" r="9"/><path d="M12 8v5M12 16h.01"/>'),
    "link": Markup(
        '<path d="M10 14a4 4 0 0 0 5.7 0l3-3a4 4 0 0 0-5.7-5.7l-1 1"/>'
        '<path d="M14 10a4 4 0 0 0-5.7 0l-3 3a4 4 0 0 0 5.7 5.7l1-1"/>'
    ),
    "copy": Markup('<rect x="8" y="8" width="12" height="12" rx="2"/><path d="M16 8V4H4v12h4"/>'),
    "download": Markup('<path d="M12 4v11M7 10l5 5 5-5M5 20h14"/>'),
    "branch": Markup(
        '<circle cx="6" cy="5" r="2"/><circle cx="6" cy="19" r="2"/><circle cx="18" cy="7" r="2"/>'
        '<path d="M6 7v10M18 9c0 5-6 4-10 8"/>'
    ),
    "commit": Markup('<circle cx="12" cy="12" r="3.5"/><path d="M3 12h5.5M15.5 12H21"/>'),
    "task": Markup('<rect x="4" y="4" width="16" height="16" rx="2"/><path d="M8 12l3 3 5-6"/>'),
    "clock": Markup('<circle cx="12" cy="12" r="9"/><path d="M12 7v5l3 2"/>'),
    "compact": Markup('<path d="M4 9h16M4 15h16M9 4l3 3 3-3M9 20l3-3 3 3"/>'),
    "alert": Markup('<path d="M12 3l10 18H2z"/><path d="M12 10v4M12 18h.01"/>'),
    "chevron": Markup('<path d="M9 6l6 6-6 6"/>'),
    "arrow-left": Markup('<path d="M15 6l-6 6 6 6"/>'),
    "arrow-right": Markup('<path d="M9 6l6 6-6 6"/>'),
    "settings": Markup(
        '<circle cx="12" cy="12" r="3"/><path d="M12 2v3M12 19v3M2 12h3M19 12h3M4.9 4.9l2.1 2.1'
        'M17 17l2.1 2.1M4.9 19.1L7 17M17 7l2.1-2.1"/>'
    ),
    "key": Markup('<circle cx="8" cy="15" r="4"/><path d="M11 12l9-9M16 7l3 3"/>'),
    "mail": Markup('<rect x="3" y="5" width="18" height="14" rx="2"/><path d="M3 7l9 6 9-6"/>'),
    "subagent": Markup('<path d="M6 3v10a4 4 0 0 0 4 4h8"/><path d="M15 14l3 3-3 3"/>'),
}
