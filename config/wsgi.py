import os

from django.core.wsgi import get_wsgi_application

from config.database import bound_statements_of_new_connections

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()
bound_statements_of_new_connections()  # the web service only: migrations and the worker may run longer
