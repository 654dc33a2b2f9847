from typing import Any

from django.apps import AppConfig


class FrontendConfig(AppConfig):
    name = "frontend"

    def ready(self) -> None:
        from config.warmup import worker_starting
        from sessions_app.signals import session_processed

        session_processed.connect(_warm_session_page, dispatch_uid="frontend-warm-session-page")
        worker_starting.connect(_warm_worker, dispatch_uid="frontend-warm-worker")


def _warm_session_page(sender: Any, *, session: Any, document: dict[str, Any], **_: Any) -> None:
    """The worker has just processed ``session``: render its first page, and the first page of the
    whole conversation it belongs to, for the first reader."""
    from frontend.session_page import page_cache
    from frontend.views import conversation_page

    page_cache.warm(session, document)
    conversation_page.warm(session)


def _warm_worker(**_: Any) -> None:
    """A new web worker: compile the pages' and the markup's templates and build Pygments' lexer
    lookups now, not in its first reader's request."""
    from frontend.session_page import markdown
    from frontend.templating import compile_all

    compile_all()
    markdown.warm_lexers()
