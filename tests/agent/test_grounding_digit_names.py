"""Names made of digits: a version ("5.1.3", "v2.4"), a room ("312"), an order, ticket or flight number
("CMD-7701", 48213, "LH 438"), a week ("2026-W14") names the result or the item it is about, as a city does —
so an untagged answer that swaps two such items' figures is caught, and one that gives each its own is kept.
Such digits are no figure of the answer, and say nothing about how its figures are written."""

from __future__ import annotations

from typing import Any

from agent.grounding import check
from agent.grounding.names import NameIndex, identity_of, names_in
from agent.source import Source


def calls(tool: str, field: str, results: dict[Any, dict[str, Any]]) -> list[Source]:
    """One call per thing, each asked by `field` and returning it with its values."""
    return [
        Source(n, tool, f"c{n}", 1, {field: name}, {field: name, **values})
        for n, (name, values) in enumerate(results.items(), 1)
    ]


def ok(answer: str, sources: list[Source]) -> str:
    grounding = check(answer, sources, "q")
    assert grounding.ok, grounding.problems
    return grounding.answer


def swapped(answer: str, sources: list[Source]) -> None:
    grounding = check(answer, sources, "q")
    assert not grounding.ok, f"not caught: {answer}"
    assert any("but its sentence" in problem for problem in grounding.problems), grounding.problems


VERSIONS = calls("get_crash_stats", "version", {"5.1.3": {"crashes": 4130}, "5.2.0": {"crashes": 2875}})
SHORT_VERSIONS = calls("get_crash_stats", "version", {"2.4": {"crashes": 310}, "2.5": {"crashes": 120}})
ROOMS = calls("get_room", "room", {"312": {"complaints": 4, "price_eur": 189}, "415": {"complaints": 9}})
TICKETS = calls("get_ticket", "ticket_id", {48213: {"replies": 7}, 48290: {"replies": 3}})
FLIGHTS = calls("get_flight", "flight", {"LH 438": {"passengers": 212}, "LH 440": {"passengers": 187}})
WEEKS = calls("get_sales", "week", {"2026-W14": {"orders": 812}, "2026-W15": {"orders": 765}})


def test_digit_names_bind_each_figure_to_the_result_they_name():
    assert ok("5.1.3: 4.130 Abstürze. 5.2.0: 2.875 Abstürze.", VERSIONS) == (
        "5.1.3: 4.130 Abstürze [1]. 5.2.0: 2.875 Abstürze [2]."
    )
    swapped("5.1.3: 2.875 Abstürze. 5.2.0: 4.130 Abstürze.", VERSIONS)
    assert ok("Version 2.4 had 310 crashes and 2.5 had 120.", SHORT_VERSIONS) == (
        "Version 2.4 had 310 crashes [1] and 2.5 had 120 [2]."  # no tag after a version: it is no figure
    )
    swapped("v2.4 had 120 crashes and v2.5 had 310.", SHORT_VERSIONS)
    ok("312号室は苦情4件、415号室は9件です。", ROOMS)
    swapped("La chambre 312 a reçu 9 plaintes, la 415 en a reçu 4.", ROOMS)
    ok("Ticket 48213 has 7 replies and ticket 48290 has 3.", TICKETS)
    swapped("Ticket 48213 has 3 replies and ticket 48290 has 7.", TICKETS)


def test_codes_and_periods_are_named_as_people_write_them():
    # "LH 438" is "LH438" in an answer, "2026-W14" "W14".
    ok("LH438航班载客212人，LH440载客187人。", FLIGHTS)
    swapped("LH438 carried 187 passengers, LH440 212.", FLIGHTS)
    ok("W14: 812 orders. W15: 765 orders.", WEEKS)
    swapped("W14: 765 orders. W15: 812 orders.", WEEKS)


def test_items_of_one_result_named_by_digits():
    report = {
        "app": "FahrPlan+",
        "versions": [{"version": "5.1.3", "crashes": 4130}, {"version": "5.2.0", "crashes": 2875}],
    }
    sources = [Source(1, "get_crash_report", "c1", 1, {"app": "FahrPlan+"}, report)]
    ok("5.1.3: 4,130 crashes. 5.2.0: 2,875 crashes.", sources)  # "5.1.3" says nothing of the decimal mark
    problems = check("5.1.3: 2.875 Abstürze. 5.2.0: 4.130 Abstürze.", sources, "q").problems
    assert any("5.2.0's in get_crash_report [1]" in problem for problem in problems), problems
    rooms = {"hotel": "Seeblick", "rooms": [{"room_no": "312", "complaints": 4}, {"room_no": "415", "complaints": 9}]}
    sources = [Source(1, "list_rooms", "c1", 1, {"hotel": "Seeblick"}, rooms)]
    ok("Room 312 had 4 complaints; room 415 had 9.", sources)
    assert not check("Room 312 had 9 complaints; room 415 had 4.", sources, "q").ok
    by_year = {"2024": {"revenue_eur": 900_000}, "2025": {"revenue_eur": 1_200_000}}
    sources = [Source(1, "get_revenue", "c1", 1, {"company": "Acme"}, {"company": "Acme", "by_year": by_year})]
    ok("In 2025 Acme made €1,200,000, up from €900,000 in 2024.", sources)
    assert not check("In 2025 Acme made €900,000. In 2024 it made €1,200,000.", sources, "q").ok


def test_digits_that_carry_a_unit_are_a_figure_whatever_a_result_is_named():
    assert ok("Room 312 costs €189 a night.", ROOMS) == "Room 312 costs €189 a night [1]."
    assert not check("Room 312 had 7 complaints.", ROOMS, "q").ok  # a figure beside a name is still checked


def test_digits_name_a_thing_only_where_a_field_says_they_do():
    assert list(names_in("5.1.3")) == [] and list(names_in("5.1.3", identifying=True)) == ["5.1.3"]
    assert list(names_in(48213, identifying=True)) == ["48213"]
    for value in ("12", "2026-05-12", "2026-05", "8:15", "1,5", True, -312):
        assert list(names_in(value, identifying=True)) == [], value
    assert list(names_in("2026-W15")) == ["2026-W15", "W15"]
    calculator = Source(1, "calculator", "c1", 1, {"a": "1180000", "b": "4130"}, {"result": 4875.0})
    assert identity_of(calculator) == ()  # operands are no names
    order = Source(1, "get_order", "c1", 1, {"order_number": "2026-0042"}, {"total": 9})
    assert identity_of(order) == ("2026-0042",)


def test_digit_names_stand_apart_from_other_digits_and_from_units():
    def found(name: str, text: str) -> bool:
        return bool(NameIndex(text).spans(name))

    for text in ("Room 312.", "#312:", "312号室", "(312)", "312, 415"):
        assert found("312", text), text
    for text in ("3120", "13120", "1.312", "1,312", "A312", "312,5", "312 km", "€312", "312 %"):
        assert not found("312", text), text
    assert found("2.4", "v2.4 had") and found("2.4", "V2.4") and not found("2.4", "dev2.4")
    assert not found("5.1", "5.1.3") and not found("1.3", "5.1.3") and found("5.1.3", "5.1.3.")
