"""The schema: models and migrations agree, migrations run both ways, and the database itself enforces the rules
(check constraints on every closed vocabulary, an append-only audit log) whatever client writes to it."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import get_args

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import CheckConstraint, Enum, insert, inspect, select, text
from sqlalchemy.exc import DBAPIError, IntegrityError

from agent import CritiqueVerdictMade, DecisionKind, Escalation, FinalRejected, RunStatus, TerminationReason
from bot.store import (
    AuditAction,
    Database,
    Decision,
    EscalationKind,
    EscalationStatus,
    RunSource,
    VerdictKind,
    VerdictStage,
    connect,
)
from bot.store.migrate import current_revision, downgrade, head_revision, upgrade
from bot.store.models import AuditEvent, Base, EscalationRecord, Run, Step, ToolCallRecord, Verdict
from tests.bot.store.postgres import MakeDatabase, pg_url_of
from tests.bot.store.recording import fetch

NOW = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
STORE_TABLES = {table.name for table in Base.metadata.sorted_tables}
CRASH_SAFE = {"run_checkpoints", "call_intents"}  # revision 0008
ADDED_AFTER_0007 = CRASH_SAFE | {"mcp_tool_pins", "stop_requests"}  # the tables later revisions add (0008, 0009, 0011)
TABLES_0007 = STORE_TABLES - ADDED_AFTER_0007  # the tables at revisions 0006 and 0007
TABLES_0010 = STORE_TABLES - {"stop_requests"}
TABLES_0004 = TABLES_0007 - {"run_owners", "feedback"}  # the tables at revisions 0003 and 0004
TABLES_0005 = TABLES_0007 - {"feedback"}
TRIGGERS = {"postgresql": {"audit_events_append_only"}, "sqlite": {"audit_events_no_update", "audit_events_no_delete"}}


def a_run(run_id: str = "run-1", **values) -> Run:
    values = {"source": "cli", "asker": "cli:tester", "question": "q?", "status": "running", **values}
    return Run(id=run_id, created_at=NOW, **values)


async def seed(db: Database) -> None:
    """One run with a row in every child table, written through the ORM as the recorder writes (the run's
    row names only the columns it sets, so an older schema without the newer columns takes it too)."""
    async with db.sessions() as session, session.begin():
        run = a_run()
        await session.execute(
            insert(Run).values({c.key: getattr(run, c.key) for c in Run.__table__.columns if c.key in run.__dict__})
        )
        session.add_all(
            [
                Step(run_id="run-1", step=1, decision="tool_calls", at=NOW),
                ToolCallRecord(
                    run_id="run-1", step=1, tool_call_id="c1", tool="calculator", ok=True, observation="{}", at=NOW
                ),
                Verdict(run_id="run-1", step=1, kind="critique", at=NOW),
                EscalationRecord(run_id="run-1", reason="policy_violation", level="L4", created_at=NOW),
                AuditEvent(run_id="run-1", at=NOW, actor="engine", action="run_started", to_status="running"),
            ]
        )


async def table_names(db: Database) -> set[str]:
    async with db.engine.connect() as conn:
        return set(await conn.run_sync(lambda sync: inspect(sync).get_table_names()))


async def trigger_names(db: Database) -> set[str]:
    if db.is_sqlite:
        rows = await fetch(db, "SELECT name FROM sqlite_master WHERE type = 'trigger'")
    else:
        rows = await fetch(db, "SELECT tgname AS name FROM pg_trigger WHERE NOT tgisinternal")
        rows += await fetch(db, "SELECT proname AS name FROM pg_proc WHERE proname = 'audit_events_append_only'")
    return {row["name"] for row in rows}


# --- models ⇔ migrations ------------------------------------------------------------------------------------


async def test_schema_autogenerate_finds_no_difference_between_models_and_migrations(db: Database) -> None:
    async with db.engine.connect() as conn:
        diff = await conn.run_sync(
            lambda sync: compare_metadata(MigrationContext.configure(sync, opts={"compare_type": True}), Base.metadata)
        )

    assert diff == []


async def test_schema_has_every_check_constraint_and_trigger_autogenerate_cannot_see(db: Database) -> None:
    expected = {
        table.name: sorted(str(c.name) for c in table.constraints if isinstance(c, CheckConstraint))
        for table in Base.metadata.sorted_tables
    }
    async with db.engine.connect() as conn:
        found = await conn.run_sync(
            lambda sync: {
                name: sorted(c["name"] for c in inspect(sync).get_check_constraints(name)) for name in expected
            }
        )

    assert found == expected
    assert TRIGGERS["sqlite" if db.is_sqlite else "postgresql"] <= await trigger_names(db)


@pytest.mark.parametrize("backend", ["postgresql", "sqlite"])
async def test_schema_upgrade_downgrade_upgrade_round_trips(
    backend: str, make_pg_database: MakeDatabase, tmp_path: Path
) -> None:
    url = pg_url_of(await make_pg_database()) if backend == "postgresql" else f"sqlite:///{tmp_path / 'trip.db'}"
    db = connect(url)
    try:
        assert await current_revision(db) is None
        await upgrade(db)
        assert await current_revision(db) == head_revision()
        assert await table_names(db) == STORE_TABLES | {"alembic_version"}

        await downgrade(db, "base")
        assert await current_revision(db) is None
        assert await table_names(db) == {"alembic_version"}
        assert await trigger_names(db) == set()  # the trigger function goes too

        await upgrade(db)
        assert await current_revision(db) == head_revision()
        assert await table_names(db) == STORE_TABLES | {"alembic_version"}
        await seed(db)  # the re-created schema takes a whole run, and the audit log is append-only again
        with pytest.raises(DBAPIError, match="append-only"):
            async with db.engine.begin() as conn:
                await conn.execute(text("DELETE FROM audit_events"))
    finally:
        await db.aclose()


# --- the database enforces the rules ------------------------------------------------------------------------


@pytest.mark.parametrize("statement", ["UPDATE audit_events SET actor = 'mallory'", "DELETE FROM audit_events"])
async def test_audit_events_refuse_update_and_delete(db: Database, statement: str) -> None:
    await seed(db)

    verb = statement.split()[0]
    with pytest.raises(DBAPIError, match=rf"audit_events is append-only \({verb} refused\)"):
        async with db.engine.begin() as conn:
            await conn.execute(text(statement))

    [event] = await fetch(db, "SELECT actor, action FROM audit_events")
    assert event == {"actor": "engine", "action": "run_started"}


async def test_audit_events_keep_their_run_from_being_deleted(db: Database) -> None:
    await seed(db)

    with pytest.raises(IntegrityError):
        async with db.engine.begin() as conn:
            await conn.execute(text("DELETE FROM runs"))

    assert len(await fetch(db, "SELECT id FROM runs")) == 1


@pytest.mark.parametrize(
    ("statement", "constraint"),
    [
        ("UPDATE runs SET status = 'bogus'", "ck_runs_status"),
        ("UPDATE runs SET source = 'email'", "ck_runs_source"),
        ("UPDATE runs SET termination_reason = 'bored'", "ck_runs_termination_reason"),
        ("UPDATE runs SET steps = -1", "ck_runs_counters"),
        ("UPDATE steps SET decision = 'dance'", "ck_steps_decision"),
        ("UPDATE steps SET step = 0", "ck_steps_step_positive"),
        ("UPDATE tool_calls SET error_level = 'L9', error_code = 'X'", "ck_tool_calls_error_level"),
        ("UPDATE tool_calls SET ok = :no, error_code = NULL", "ck_tool_calls_failure_has_code"),
        ("UPDATE verdicts SET kind = 'vibe'", "ck_verdicts_kind"),
        ("UPDATE verdicts SET decision = 'shrugged'", "ck_verdicts_decision"),
        (
            "INSERT INTO audit_events (run_id, at, actor, action, detail) "
            "VALUES ('run-1', CURRENT_TIMESTAMP, 'engine', 'run_vanished', '{}')",
            "ck_audit_events_action",
        ),  # an INSERT: the append-only trigger refuses any UPDATE before the check is reached
        ("UPDATE escalations SET status = 'maybe', decided_at = created_at", "ck_escalations_status"),
        ("UPDATE escalations SET kind = 'whim'", "ck_escalations_kind"),
        ("UPDATE escalations SET status = 'approved', decided_at = NULL", "ck_escalations_decided_has_time"),
        ("UPDATE escalations SET level = 'L5'", "ck_escalations_level"),
    ],
)
async def test_check_constraints_refuse_values_outside_the_vocabulary(
    db: Database, statement: str, constraint: str
) -> None:
    await seed(db)

    with pytest.raises(IntegrityError, match=constraint):
        async with db.engine.begin() as conn:
            await conn.execute(text(statement), {"no": False} if ":no" in statement else {})


async def test_check_constraints_refuse_a_bogus_status_from_the_orm(db: Database) -> None:
    with pytest.raises(IntegrityError, match="ck_runs_status"):
        async with db.sessions() as session, session.begin():
            session.add(a_run(status="finished-ish"))

    assert await fetch(db, "SELECT id FROM runs") == []


async def test_check_constraints_accept_every_status_and_reason_the_engine_has(db: Database) -> None:
    """The vocabularies in the migration are copies: a member added to the enums needs a migration too."""
    async with db.sessions() as session, session.begin():
        session.add_all(a_run(f"status-{status.value}", status=status.value) for status in RunStatus)
        session.add_all(
            a_run(f"reason-{reason.value}", status=reason.status.value, termination_reason=reason.value)
            for reason in TerminationReason
        )

    assert len(await fetch(db, "SELECT id FROM runs")) == len(RunStatus) + len(TerminationReason)


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO audit_events (run_id, at, actor, action, to_status, detail) "
        "VALUES ('run-1', CURRENT_TIMESTAMP, 'engine', 'run_finished', 'finished-ish', '{}')",
        "INSERT INTO verdicts (run_id, kind, stage, gaps, at) VALUES ('run-1', 'critique', 'whenever', '[]', "
        "CURRENT_TIMESTAMP)",
    ],
    ids=["audit_events.to_status", "verdicts.stage"],
)
async def test_check_constraints_cover_every_closed_vocabulary(db: Database, statement: str) -> None:
    await seed(db)

    with pytest.raises(IntegrityError):
        async with db.engine.begin() as conn:
            await conn.execute(text(statement))


# --- closed vocabularies: enums in Python, CHECK constraints in the database ------------------------------


def vocabulary_columns() -> list[tuple[str, str, type[StrEnum]]]:
    return [
        (table.name, column.name, column.type.enum_class)
        for table in Base.metadata.sorted_tables
        for column in table.columns
        if isinstance(column.type, Enum)
    ]


def test_every_vocabulary_column_is_checked_by_the_database_under_its_own_name() -> None:
    columns = vocabulary_columns()
    checks = {(table.name, str(c.name)) for table in Base.metadata.sorted_tables for c in table.constraints if c.name}

    assert {(table, column) for table, column, _ in columns} >= {
        ("runs", "status"),
        ("runs", "source"),
        ("escalations", "status"),
        ("escalations", "kind"),
        ("verdicts", "kind"),
        ("verdicts", "decision"),
        ("audit_events", "action"),
    }
    for table, column, _ in columns:
        assert (table, f"ck_{table}_{column}") in checks
        enum_type = Base.metadata.tables[table].c[column].type
        assert not enum_type.native_enum  # VARCHAR and a CHECK: the same schema on both back-ends


def test_store_vocabularies_cover_every_value_the_engine_writes() -> None:
    stages = set(get_args(CritiqueVerdictMade.model_fields["stage"].annotation))
    stages |= set(get_args(FinalRejected.model_fields["by"].annotation))

    assert Escalation.model_fields["kind"].annotation is EscalationKind  # one vocabulary: the engine's
    assert {stage.value for stage in VerdictStage} == stages
    assert {decision.status for decision in Decision} == set(EscalationStatus) - {EscalationStatus.PENDING}
    assert {decision.action for decision in Decision} <= set(AuditAction)


async def test_check_constraints_accept_every_member_of_every_vocabulary(db: Database) -> None:
    """The vocabularies in the migrations are copies: a member added to an enum needs a migration too."""
    runs = [a_run(f"source-{source}", source=source) for source in RunSource]
    escalations = []
    for status in EscalationStatus:  # one run each: at most one pending escalation per run
        decided = None if status is EscalationStatus.PENDING else NOW
        for kind in EscalationKind:
            run = a_run(f"esc-{status}-{kind}")
            runs.append(run)
            escalations.append(
                EscalationRecord(
                    run_id=run.id,
                    kind=kind,
                    status=status,
                    reason="r",
                    level="L4",
                    created_at=NOW,
                    decided_at=decided,
                )
            )
    async with db.sessions() as session, session.begin():
        session.add_all([a_run(), *runs])
        await session.flush()
        session.add_all(escalations)
        session.add_all(Step(run_id="run-1", step=n, decision=kind, at=NOW) for n, kind in enumerate(DecisionKind, 1))
        session.add_all(Verdict(run_id="run-1", kind=kind, at=NOW) for kind in VerdictKind)
        session.add_all(
            Verdict(run_id="run-1", kind=VerdictKind.CRITIQUE, stage=stage, at=NOW) for stage in VerdictStage
        )
        session.add_all(Verdict(run_id="run-1", kind=VerdictKind.REVIEW, decision=d, at=NOW) for d in Decision)
        session.add_all(AuditEvent(run_id="run-1", at=NOW, actor="t", action=action) for action in AuditAction)
        session.add_all(
            AuditEvent(run_id="run-1", at=NOW, actor="t", action=AuditAction.RUN_FINISHED, from_status=s, to_status=s)
            for s in RunStatus
        )

    counted = await fetch(
        db, "SELECT (SELECT COUNT(*) FROM verdicts) AS verdicts, (SELECT COUNT(*) FROM audit_events) AS audit"
    )
    assert counted == [
        {"verdicts": len(VerdictKind) + len(VerdictStage) + len(Decision), "audit": len(AuditAction) + len(RunStatus)}
    ]


async def test_vocabularies_read_back_as_enum_members_and_are_stored_as_their_values(db: Database) -> None:
    await seed(db)
    async with db.sessions() as session, session.begin():
        session.add(Verdict(run_id="run-1", kind=VerdictKind.REVIEW, decision=Decision.RETRIED, at=NOW))

    async with db.sessions() as session:
        run = await session.get(Run, "run-1")
        escalation = await session.scalar(select(EscalationRecord))
        review = await session.scalar(select(Verdict).where(Verdict.kind == VerdictKind.REVIEW))
        event = await session.scalar(select(AuditEvent))
    stored = await fetch(
        db,
        "SELECT r.status, r.source, e.status AS escalation, e.kind, v.decision, a.action FROM runs r "
        "JOIN escalations e ON e.run_id = r.id JOIN verdicts v ON v.run_id = r.id AND v.kind = 'review' "
        "JOIN audit_events a ON a.run_id = r.id",
    )

    assert run is not None and escalation is not None and review is not None and event is not None
    assert (run.status, run.source) == (RunStatus.RUNNING, RunSource.CLI)
    assert (escalation.status, escalation.kind) == (EscalationStatus.PENDING, EscalationKind.POLICY)  # the defaults
    assert (review.decision, event.action, event.to_status) == (
        Decision.RETRIED,
        AuditAction.RUN_STARTED,
        RunStatus.RUNNING,
    )
    assert type(run.status) is RunStatus and type(escalation.status) is EscalationStatus
    assert stored == [
        {
            "status": "running",
            "source": "cli",
            "escalation": "pending",
            "kind": "policy",
            "decision": "retried",
            "action": "run_started",
        }
    ]
    assert all(type(value) is str for value in stored[0].values())


@pytest.mark.parametrize("backend", ["postgresql", "sqlite"])
async def test_schema_0004_keeps_the_rows_it_finds_and_checks_decisions_and_actions(
    backend: str, make_pg_database: MakeDatabase, tmp_path: Path
) -> None:
    url = pg_url_of(await make_pg_database()) if backend == "postgresql" else f"sqlite:///{tmp_path / 'old.db'}"
    unknown_action = (
        "INSERT INTO audit_events (run_id, at, actor, action, detail) "
        "VALUES ('run-1', CURRENT_TIMESTAMP, 'engine', 'run_vanished', '{}')"
    )
    db = connect(url)
    try:
        await upgrade(db, "0003")
        await seed(db)  # what 0003 held: a run with a row in every child table, the audit log among them
        async with db.engine.begin() as conn:
            await conn.execute(
                text(
                    "INSERT INTO verdicts (run_id, kind, decision, gaps, at) "
                    "VALUES ('run-1', 'review', 'retried', '[]', CURRENT_TIMESTAMP)"
                )
            )
        before = {table: await fetch(db, f"SELECT * FROM {table} ORDER BY 1") for table in TABLES_0004}

        await upgrade(db, "0004")
        after = {table: await fetch(db, f"SELECT * FROM {table} ORDER BY 1") for table in TABLES_0004}
        with pytest.raises(IntegrityError, match="ck_audit_events_action"):
            async with db.engine.begin() as conn:
                await conn.execute(text(unknown_action))
        with pytest.raises(DBAPIError, match="append-only"):  # the triggers survived the table's rebuild
            async with db.engine.begin() as conn:
                await conn.execute(text("DELETE FROM audit_events"))

        await downgrade(db, "0003")
        async with db.engine.begin() as conn:  # 0003 did not check actions
            await conn.execute(text(unknown_action))
        with pytest.raises(DBAPIError, match="append-only"):
            async with db.engine.begin() as conn:
                await conn.execute(text("UPDATE audit_events SET actor = 'mallory'"))
    finally:
        await db.aclose()

    assert after == before


@pytest.mark.parametrize("backend", ["postgresql", "sqlite"])
async def test_schema_0005_adds_run_ownership_and_keeps_the_runs_it_finds(
    backend: str, make_pg_database: MakeDatabase, tmp_path: Path
) -> None:
    url = pg_url_of(await make_pg_database()) if backend == "postgresql" else f"sqlite:///{tmp_path / 'old.db'}"
    db = connect(url)
    try:
        await upgrade(db, "0004")
        await seed(db)  # a run left `running` by the version before: it has no owner
        before = {table: await fetch(db, f"SELECT * FROM {table} ORDER BY 1") for table in TABLES_0004}

        await upgrade(db, "0005")
        [run] = await fetch(db, "SELECT id, status, owner FROM runs")
        assert run == {"id": "run-1", "status": "running", "owner": None}
        assert await fetch(db, "SELECT * FROM run_owners") == []
        async with db.engine.begin() as conn:
            await conn.execute(
                text(
                    "INSERT INTO run_owners (id, host, pid, started_at, beat_at, expires_at) "
                    "VALUES ('host:1:ab', 'host', 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                )
            )
            await conn.execute(text("UPDATE runs SET owner = 'host:1:ab'"))

        await downgrade(db, "0004")
        assert "run_owners" not in await table_names(db)
        after = {table: await fetch(db, f"SELECT * FROM {table} ORDER BY 1") for table in TABLES_0004}
    finally:
        await db.aclose()

    assert after == before


@pytest.mark.parametrize("backend", ["postgresql", "sqlite"])
async def test_schema_0006_adds_feedback_one_verdict_per_person_per_run(
    backend: str, make_pg_database: MakeDatabase, tmp_path: Path
) -> None:
    url = pg_url_of(await make_pg_database()) if backend == "postgresql" else f"sqlite:///{tmp_path / 'old.db'}"
    verdict = (
        'INSERT INTO feedback (run_id, "user", verdict, by_asker, created_at, updated_at) '
        "VALUES ('run-1', 'U1', :verdict, true, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
    )
    db = connect(url)
    try:
        await upgrade(db, "0005")
        await seed(db)
        before = {table: await fetch(db, f"SELECT * FROM {table} ORDER BY 1") for table in TABLES_0005}

        await upgrade(db, "0006")
        async with db.engine.begin() as conn:
            await conn.execute(text(verdict), {"verdict": "up"})
        with pytest.raises(IntegrityError, match=r"uq_feedback_run_user|UNIQUE"):  # a change, never a second row
            async with db.engine.begin() as conn:
                await conn.execute(text(verdict), {"verdict": "down"})
        with pytest.raises(IntegrityError, match="ck_feedback_verdict"):
            async with db.engine.begin() as conn:
                await conn.execute(text(verdict.replace("'U1'", "'U2'")), {"verdict": "meh"})

        await downgrade(db, "0005")
        assert "feedback" not in await table_names(db)
        after = {table: await fetch(db, f"SELECT * FROM {table} ORDER BY 1") for table in TABLES_0005}
    finally:
        await db.aclose()

    assert after == before


@pytest.mark.parametrize("backend", ["postgresql", "sqlite"])
async def test_schema_0007_gives_feedback_escalations_their_own_kind_and_keeps_everything_else(
    backend: str, make_pg_database: MakeDatabase, tmp_path: Path
) -> None:
    """A 👎's escalation written before 0007 (`exhausted`, reason `feedback`) becomes `feedback`; a downgrade
    turns it back; the other escalations, the audit log (append-only still) and the pending-run index stay."""
    url = pg_url_of(await make_pg_database()) if backend == "postgresql" else f"sqlite:///{tmp_path / 'old.db'}"
    feedback = (
        "INSERT INTO escalations (run_id, kind, reason, level, status, message, held_calls, created_at, decided_at) "
        "VALUES ('run-1', 'exhausted', 'feedback', 'L4', 'expired', '👎', '[]', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
    )
    failed = "INSERT INTO audit_events (run_id, at, actor, action, detail) VALUES ('run-1', CURRENT_TIMESTAMP, 'x', "
    db = connect(url)
    try:
        await upgrade(db, "0006")
        await seed(db)
        async with db.engine.begin() as conn:
            await conn.execute(text(feedback))
        with pytest.raises(IntegrityError, match="ck_audit_events_action"):
            async with db.engine.begin() as conn:
                await conn.execute(text(failed + "'run_failed', '{}')"))
        before = {table: await fetch(db, f"SELECT * FROM {table} ORDER BY 1") for table in TABLES_0007}

        await upgrade(db, "0007")
        kinds = await fetch(db, "SELECT reason, kind FROM escalations ORDER BY id")
        assert kinds == [{"reason": "policy_violation", "kind": "policy"}, {"reason": "feedback", "kind": "feedback"}]
        async with db.engine.begin() as conn:
            await conn.execute(text(failed + "'run_failed', '{}')"))  # a vocabulary of 0007
        with pytest.raises(IntegrityError, match=r"uq_escalations_pending_run|UNIQUE"):  # still one pending per run
            async with db.engine.begin() as conn:
                for _ in range(2):
                    pending = feedback.replace("'expired'", "'pending'").replace("'exhausted'", "'feedback'")
                    pending = pending.replace(", decided_at)", ")").replace(", CURRENT_TIMESTAMP)", ")")
                    await conn.execute(text(pending))
        with pytest.raises(DBAPIError, match="append-only"):
            async with db.engine.begin() as conn:
                await conn.execute(text("DELETE FROM audit_events"))

        await downgrade(db, "0006")
        after = {table: await fetch(db, f"SELECT * FROM {table} ORDER BY 1") for table in TABLES_0007}
    finally:
        await db.aclose()

    # Back at 0006, as it was — but for the audit event 0007 allowed: kept, as the nearest action 0006 knows.
    [kept] = [event for event in after["audit_events"] if event["actor"] == "x"]
    assert kept["action"] == "run_cancelled"
    after["audit_events"] = [event for event in after["audit_events"] if event["actor"] != "x"]
    assert after == before


@pytest.mark.parametrize("backend", ["postgresql", "sqlite"])
async def test_schema_0011_adds_stop_requests_and_the_reason_and_keeps_every_row(
    backend: str, make_pg_database: MakeDatabase, tmp_path: Path
) -> None:
    """0011 takes `stopped_by_user` and the stop actions, and a stop request per run, keeping every row it finds
    (on SQLite too, where `runs` is not recreated); a downgrade gives the nearest 0010 values back."""
    url = pg_url_of(await make_pg_database()) if backend == "postgresql" else f"sqlite:///{tmp_path / 'old.db'}"
    stopped = "UPDATE runs SET termination_reason = 'stopped_by_user' WHERE id = 'run-1'"
    requested = "INSERT INTO audit_events (run_id, at, actor, action, detail) VALUES ('run-1', CURRENT_TIMESTAMP, 'x', "
    db = connect(url)
    try:
        await upgrade(db, "0010")
        await seed(db)
        with pytest.raises(IntegrityError, match="ck_runs_termination_reason"):
            async with db.engine.begin() as conn:
                await conn.execute(text(stopped))
        before = {table: await fetch(db, f"SELECT * FROM {table} ORDER BY 1") for table in TABLES_0010}

        await upgrade(db, "0011")
        kept = {table: await fetch(db, f"SELECT * FROM {table} ORDER BY 1") for table in TABLES_0010}
        async with db.engine.begin() as conn:
            await conn.execute(text(stopped))
            await conn.execute(text(requested + "'stop_requested', '{}')"))
            await conn.execute(
                text(
                    "INSERT INTO stop_requests (run_id, actor, shown_as, at) "
                    "VALUES ('run-1', 'x', 'x', CURRENT_TIMESTAMP)"
                )
            )
        with pytest.raises(IntegrityError, match="ck_runs_termination_reason"):  # still a closed vocabulary
            async with db.engine.begin() as conn:
                await conn.execute(text("UPDATE runs SET termination_reason = 'bored' WHERE id = 'run-1'"))
        with pytest.raises(DBAPIError, match="append-only"):
            async with db.engine.begin() as conn:
                await conn.execute(text("DELETE FROM audit_events"))

        await downgrade(db, "0010")
        after = {table: await fetch(db, f"SELECT * FROM {table} ORDER BY 1") for table in TABLES_0010}
        assert await table_names(db) == TABLES_0010 | {"alembic_version"}
    finally:
        await db.aclose()

    assert kept == before
    [run] = [run for run in after["runs"] if run["id"] == "run-1"]
    assert run["termination_reason"] == "cancelled"
    [event] = [event for event in after["audit_events"] if event["actor"] == "x"]
    assert event["action"] == "run_cancelled"
