"""GET /metrics read as Prometheus reads it (its own text parser), and the same figures counted in the store."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import func, select

from agent import ErrorCode
from bot.store import Database
from bot.store.models import EscalationRecord, Run, Step, ToolCallRecord
from bot.store.vocabulary import EscalationStatus

Labels = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Scrape:
    """Every sample of one page: sample name → {its labels, sorted → value}."""

    samples: dict[str, dict[Labels, float]]

    @classmethod
    def parse(cls, text: str) -> Scrape:
        samples: dict[str, dict[Labels, float]] = {}
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                samples.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
        return cls(samples)

    def value(self, name: str, **labels: str) -> float:
        return self.samples.get(name, {}).get(tuple(sorted(labels.items())), 0.0)

    def by(self, name: str, *keys: str) -> Counter[tuple[str, ...]]:
        """The sample's values summed by these labels (zeros left out), comparable with `StoreCounts`."""
        counted: Counter[tuple[str, ...]] = Counter()
        for labels, value in self.samples.get(name, {}).items():
            named = dict(labels)
            counted[tuple(named[key] for key in keys)] += int(value)
        return +counted

    def total(self, name: str) -> float:
        return sum(self.samples.get(name, {}).values())

    def label_values(self) -> set[tuple[str, str]]:
        """Every (label, value) pair on the page, whatever the metric."""
        return {pair for samples in self.samples.values() for labels in samples for pair in labels}


@dataclass(frozen=True)
class StoreCounts:
    runs: Counter[tuple[str, ...]]  # (status, termination reason)
    # (tool, code, level): a success is ("ok", "ok"); a tool not configured, a code not an ErrorCode: "other"
    tool_calls: Counter[tuple[str, ...]]
    tool_retries: int
    llm_calls: int
    tokens: int
    decisions: int
    pending_escalations: int


async def store_counts(db: Database, tools: Collection[str]) -> StoreCounts:
    """What the store holds, in the metrics' terms (`tools`: the configured tool set)."""
    async with db.sessions() as session:
        runs = (await session.execute(select(Run.status, Run.termination_reason))).all()
        calls = (
            await session.execute(select(ToolCallRecord.tool, ToolCallRecord.error_code, ToolCallRecord.error_level))
        ).all()
        retries = await session.scalar(select(func.coalesce(func.sum(ToolCallRecord.retries), 0)))
        llm_calls, tokens = (await session.execute(select(func.sum(Run.llm_calls), func.sum(Run.tokens)))).one()
        decisions = await session.scalar(select(func.count()).select_from(Step))
        pending = await session.scalar(
            select(func.count())
            .select_from(EscalationRecord)
            .where(EscalationRecord.status == EscalationStatus.PENDING)
        )
    return StoreCounts(
        runs=Counter((str(status), str(reason)) for status, reason in runs),
        tool_calls=Counter(
            (tool if tool in tools else "other", _code(code), level or "ok") for tool, code, level in calls
        ),
        tool_retries=int(retries or 0),
        llm_calls=int(llm_calls or 0),
        tokens=int(tokens or 0),
        decisions=int(decisions or 0),
        pending_escalations=int(pending or 0),
    )


def _code(code: str | None) -> str:
    if code is None:
        return "ok"
    return code if code in set(ErrorCode) else "other"


def assert_counters_match_the_store(scrape: Scrape, store: StoreCounts) -> None:
    """Every counter of GET /metrics equals what the store recorded."""
    assert scrape.by("parley_runs_finished_total", "status", "reason") == store.runs
    assert scrape.by("parley_tool_calls_total", "tool", "code", "level") == store.tool_calls
    assert scrape.total("parley_tool_retries_total") == store.tool_retries
    requests = scrape.by("parley_llm_request_duration_seconds_count", "purpose", "outcome")
    answered = sum(count for (_, outcome), count in requests.items() if outcome == "ok")
    # The store counts every answered request, and a decision request that failed (the run ended on it).
    assert answered + requests[("decide", "failed")] == store.llm_calls
    assert scrape.total("parley_llm_tokens_total") == store.tokens
    assert scrape.value("parley_llm_request_duration_seconds_count", purpose="decide", outcome="ok") == store.decisions
    assert scrape.value("parley_escalations_pending") == store.pending_escalations
    assert scrape.value("parley_store_up") == 1
