"""The audit trail's hash chain (docs/security.md "Audit trail"; ``governance.integrity`` verifies it).

Every ``projects_auditevent`` row gets, in a trigger and so on every path that inserts one:

- ``seal``, a random value, and ``personal_digest`` = SHA-256 of the seal and the personal fields
  (actor e-mail, target, address, user agent). Erasure pseudonymises those fields and drops the seal
  (``audit_pseudonymise``): the digest then still stands in the chain, but nobody can test a guessed
  address against it any more.
- ``prev_hash``, the ``hash`` of the previous row of its chain (one chain per project, one for
  deployment-wide events), and ``hash`` = SHA-256 of the previous hash and the row's canonical content.

The trigger takes a transaction-long advisory lock on the chain and only then draws the row's id, so ids
within a chain follow commit order and two concurrent inserts never name the same predecessor. It runs
as the owner (SECURITY DEFINER): inside a project scope the web role sees its project's rows only, and
the chain's last row must be read whatever the caller may see.
"""

from django.db import migrations, models

TABLE = "projects_auditevent"
LOCK_SPACE = 7_340_001  # the advisory-lock namespace of audit chains: (LOCK_SPACE, hashtext(chain))

FUNCTIONS = f"""
ALTER TABLE {TABLE} ADD COLUMN seal uuid, ADD COLUMN personal_digest text,
                    ADD COLUMN prev_hash text, ADD COLUMN hash text;
CREATE INDEX auditevent_chain ON {TABLE} (project_id, id);

CREATE FUNCTION audit_personal_digest(seal uuid, actor_email text, target text, ip inet, user_agent text)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT encode(sha256(uuid_send(seal) || convert_to(
        jsonb_build_array(actor_email, target, host(ip), user_agent)::text, 'UTF8')), 'hex')
$$;

-- The canonical content: a JSON array (unambiguous), the time in microseconds (no time zone in it).
CREATE FUNCTION audit_row_hash(prev_hash text, e {TABLE}) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT encode(sha256(convert_to(jsonb_build_array(
        prev_hash, e.project_id, e.project_slug, e.actor_id, e.kind, e.detail, e.via,
        (extract(epoch FROM e.at) * 1000000)::bigint, e.personal_digest)::text, 'UTF8')), 'hex')
$$;

CREATE FUNCTION audit_chain_last(chain_project uuid) RETURNS text
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE last text; BEGIN
    IF chain_project IS NULL THEN
        SELECT hash INTO last FROM {TABLE} WHERE project_id IS NULL ORDER BY id DESC LIMIT 1;
    ELSE
        SELECT hash INTO last FROM {TABLE} WHERE project_id = chain_project ORDER BY id DESC LIMIT 1;
    END IF;
    IF last IS NULL THEN  -- an empty chain, or one whose every row retention removed
        SELECT hash INTO last FROM governance_auditanchor WHERE chain = coalesce(chain_project::text, '');
    END IF;
    RETURN coalesce(last, '');
END $$;

CREATE FUNCTION audit_chain() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    PERFORM pg_advisory_xact_lock({LOCK_SPACE}, hashtext(coalesce(NEW.project_id::text, '')));
    NEW.id := nextval(pg_get_serial_sequence('{TABLE}', 'id'));
    NEW.seal := gen_random_uuid();
    NEW.personal_digest := audit_personal_digest(NEW.seal, NEW.actor_email, NEW.target, NEW.ip, NEW.user_agent);
    NEW.prev_hash := audit_chain_last(NEW.project_id);
    NEW.hash := audit_row_hash(NEW.prev_hash, NEW);
    RETURN NEW;
END $$;

-- Existing rows, chained in id order.
DO $$ DECLARE r {TABLE}%ROWTYPE; last jsonb := '{{}}'; prev text; digest text; BEGIN
    FOR r IN SELECT * FROM {TABLE} ORDER BY id LOOP
        prev := coalesce(last ->> coalesce(r.project_id::text, ''), '');
        r.seal := gen_random_uuid();
        r.personal_digest := audit_personal_digest(r.seal, r.actor_email, r.target, r.ip, r.user_agent);
        digest := audit_row_hash(prev, r);
        UPDATE {TABLE} SET seal = r.seal, personal_digest = r.personal_digest, prev_hash = prev, hash = digest
        WHERE id = r.id;
        last := last || jsonb_build_object(coalesce(r.project_id::text, ''), digest);
    END LOOP;
END $$;

CREATE TRIGGER audit_chain BEFORE INSERT ON {TABLE} FOR EACH ROW EXECUTE FUNCTION audit_chain();

-- Erasure's one change to the trail: the person's rows name a pseudonym, lose address and user agent,
-- and their seal. The pseudonym is made here, so a caller can write nothing of its own into the trail.
CREATE FUNCTION audit_pseudonymise(erased_id bigint, erased_email text) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE pseudonym text := 'erased user #' || erased_id; changed integer; also integer; BEGIN
    UPDATE {TABLE} SET actor_email = pseudonym, ip = NULL, user_agent = '', seal = NULL
    WHERE actor_id = erased_id AND actor_email <> pseudonym;
    GET DIAGNOSTICS changed = ROW_COUNT;
    -- About them with no known actor (a failed sign-in with their address): the address and browser
    -- are most likely theirs. A named actor's (an admin's) stay: they record that actor's action.
    UPDATE {TABLE} SET target = pseudonym, seal = NULL,
        ip = CASE WHEN actor_id IS NULL THEN NULL ELSE ip END,
        user_agent = CASE WHEN actor_id IS NULL THEN '' ELSE user_agent END
    WHERE erased_email <> '' AND lower(target) = lower(erased_email);
    GET DIAGNOSTICS also = ROW_COUNT;
    RETURN changed + also;
END $$;
"""

UNDO = f"""
DROP TRIGGER IF EXISTS audit_chain ON {TABLE};
DROP FUNCTION IF EXISTS audit_pseudonymise(bigint, text);
DROP FUNCTION IF EXISTS audit_chain();
DROP FUNCTION IF EXISTS audit_chain_last(uuid);
DROP FUNCTION IF EXISTS audit_row_hash(text, {TABLE});
DROP FUNCTION IF EXISTS audit_personal_digest(uuid, text, text, inet, text);
DROP INDEX IF EXISTS auditevent_chain;
ALTER TABLE {TABLE} DROP COLUMN seal, DROP COLUMN personal_digest, DROP COLUMN prev_hash, DROP COLUMN hash;
"""


class Migration(migrations.Migration):
    initial = True
    dependencies = [
        ("projects", "0006_audit_event_project_archived"),
        ("sessions_app", "0021_tenant_session_view"),
    ]

    operations = [
        migrations.CreateModel(
            name="AuditAnchor",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("chain", models.CharField(max_length=36, unique=True)),
                ("hash", models.CharField(max_length=64)),
                ("up_to_id", models.BigIntegerField()),
                ("at", models.DateTimeField(auto_now=True)),
            ],
        ),
        migrations.CreateModel(
            name="AuditDelivery",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "chain",
                    models.CharField(
                        help_text="project id, or empty: deployment-wide", max_length=36, unique=True
                    ),
                ),
                ("delivered_id", models.BigIntegerField(default=0)),
                ("delivered_at", models.DateTimeField(blank=True, null=True)),
                (
                    "attempts",
                    models.PositiveIntegerField(default=0, help_text="failures since the last delivery"),
                ),
                ("next_attempt_at", models.DateTimeField(blank=True, null=True)),
                ("last_error", models.CharField(blank=True, default="", max_length=500)),
                ("last_error_at", models.DateTimeField(blank=True, null=True)),
            ],
        ),
        migrations.RunSQL(FUNCTIONS, reverse_sql=UNDO),
    ]
