"""Counts a sentence gives to a set of items ("4 of the 6 students passed", "Quattro treni su cinque", "창가
테이블은 세 개가 비어 있어요"), and Korean numerals in words: a count is one of the counts of a list in its result —
by a state its clause names, a true or false field, a threshold the question, the sentence or the result gives —
never an unrelated value that happens to equal it (an item's 4 minutes, an average of 5.9, a pass mark of 5)."""

from __future__ import annotations

from decimal import Decimal

from agent.grounding.figures import Figure, Reading, read_figures
from agent.grounding.tally import CountClaim, count_claims, tallies
from agent.grounding.words import read_number_words
from agent.source import Source
from tests.agent.test_grounding_styles import caught, ok

EXAM = {
    "group": "3ºB",
    "pass_mark": 5.0,
    "students": [
        {"name": "Lucía Ortega", "score": 7.5},
        {"name": "Mateo Ruiz", "score": 4.2},
        {"name": "Carla Méndez", "score": 8.9},
        {"name": "Diego Paredes", "score": 5.0},
        {"name": "Sofía Lara", "score": 3.8},
        {"name": "Hugo Serrano", "score": 6.1},
    ],
}
TABLES = {
    "restaurant": "온기식당",
    "tables": [
        {"table": "W1", "area": "창가", "seats": 2, "available": False},
        {"table": "W2", "area": "창가", "seats": 2, "available": True},
        {"table": "W3", "area": "창가", "seats": 4, "available": False},
        {"table": "W4", "area": "창가", "seats": 4, "available": True},
        {"table": "W5", "area": "창가", "seats": 2, "available": True},
        {"table": "H1", "area": "홀", "seats": 4, "available": False},
        {"table": "H3", "area": "홀", "seats": 6, "available": True},
    ],
}
TRAINS = {
    "route": "Milano Centrale–Bergamo",
    "trains": [
        {"train": "R 2645", "delay_min": 4},
        {"train": "R 2647", "delay_min": 12},
        {"train": "R 2649", "delay_min": 0},
        {"train": "R 2651", "delay_min": 7},
        {"train": "R 2653", "delay_min": 22},
    ],
}


def result(tool: str, data: dict[str, object]) -> list[Source]:
    return [Source(1, tool, "c1", 1, {}, data)]


def figures_of(text: str, languages: list[str]) -> list[Figure]:
    found = read_figures(text)
    found += read_number_words(text, languages, [(f.start, f.end) for f in found])
    return sorted(found, key=lambda f: f.start)


def claims_of(text: str, languages: list[str] = ["en"]) -> dict[str, Decimal | None]:  # noqa: B006
    figures = figures_of(text, languages)
    by_start = {f.start: f.text for f in figures}
    return {
        by_start[at]: claim.whole.value if claim.whole is not None else None
        for at, claim in count_claims(text, figures).items()
    }


def test_tally_a_figure_is_a_count_against_its_whole_or_with_a_counter():
    assert claims_of("3 of the 5 services are down.") == {"3": 5}
    assert claims_of("Quattro treni su cinque hanno superato i 5 minuti.", ["it"]) == {"Quattro": 5}
    assert claims_of("Aprobaron cinco de los seis alumnos.", ["es"]) == {"cinco": 6}
    assert claims_of("五个服务中有三个宕机。") == {"五": None, "三": 5}
    assert claims_of("6人のうち4人が合格。") == {"6": None, "4": 6}
    assert claims_of("다섯 명 중 세 명이 출근했어요.") == {"다섯 명": None, "세 명": 5}
    assert claims_of("Revenue of about €1.1 million on 3,017 orders, up 1.87%.") == {}
    assert claims_of("R 2653 was 22 minutes late; 4 trains ran on time.") == {}


def test_tally_counts_those_in_the_state_its_clause_names_by_its_thresholds():
    claim = CountClaim(Reading(Decimal(4), Decimal(1), None), None)
    (window,) = tallies(TABLES, "창가 테이블은 네 개가 비어 있어요", claim, ())
    assert set(window.counts) == {7, 5, 3, 2}  # all, the window ones, those free and not
    assert list(tallies(TABLES, "테이블 네 개가 비어 있어요", claim, ())) == []  # no state named: no list counted
    six = CountClaim(Reading(Decimal(5), Decimal(1), None), Reading(Decimal(6), Decimal(1), None))
    (students,) = tallies(
        EXAM, "aprobaron cinco de los seis alumnos", six, (Reading(Decimal("5.0"), Decimal(1), None),)
    )
    assert students.counts[Decimal(4)] == "the number of students whose score is at least 5.0"
    assert Decimal(5) not in students.counts
    seven = CountClaim(Reading(Decimal(3), Decimal(1), None), Reading(Decimal(7), Decimal(1), None))
    assert list(tallies(EXAM, "3 of the 7", seven, ())) == []  # no list of seven: not this result's count


def test_tally_a_wrong_count_is_caught_whatever_value_equals_it():
    exam, trains = result("get_exam_results", EXAM), result("get_train_delays", TRAINS)
    tables = result("get_table_availability", TABLES)
    assert ok("Aprobaron cuatro de los seis alumnos; suspendieron Mateo Ruiz y Sofía Lara.", exam)
    problems = caught("Aprobaron cinco de los seis alumnos.", exam)  # not the average 5.9, nor the pass mark
    assert problems == ["the number cinco is not how many of the students in [1] its sentence counts"]
    question = "Quanti treni hanno superato i 5 minuti di ritardo?"
    assert ok("Tre treni su cinque hanno superato i 5 minuti di ritardo.", trains, question)
    caught("Quattro treni su cinque hanno superato i 5 minuti di ritardo.", trains, question)  # not R 2645's 4
    assert ok("창가 테이블이 세 개(W2, W4, W5) 비어 있습니다.", tables)
    caught("창가 테이블은 네 개가 비어 있어요.", tables)  # not W4's 4 seats, nor all 4 free tables
    assert ok("H3 테이블은 여섯 명까지 앉을 수 있어요.", tables)  # an item's own value, named
    caught("36,000kg 수확에 여섯 명이 투입됐어요.", result("get_harvest", {"harvest_kg": 36000, "workers": 5}))
