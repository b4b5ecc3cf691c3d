"""The fact-checker on superlatives over a derived quantity (a ratio of one item's fields) and on directions
between two results or two figures: wrong ones caught, right ones kept, ranks and denials left alone."""

from __future__ import annotations

from agent.grounding import check
from agent.grounding.comparisons import from_to, periods, said_change
from agent.source import Source


def garage(number: int, name: str, capacity: int, occupied: int) -> Source:
    data = {"facility": name, "capacity": capacity, "occupied": occupied}
    return Source(number, "get_parking_occupancy", f"g{number}", 1, {"facility": name}, data)


GARAGES = [garage(1, "Harbor Street Garage", 620, 571), garage(2, "Elm Row Deck", 410, 402)]


def listing(number: int, name: str, surface_m2: int, price_eur: int) -> Source:
    data = {"listing": name, "surface_m2": surface_m2, "price_eur": price_eur}
    return Source(number, "get_listing", f"l{number}", 1, {"listing": name}, data)


FLATS = [listing(1, "Capucins", 68, 285000), listing(2, "Mercière", 54, 251100)]


def weekly(number: int, week: str, late: int) -> Source:
    data = {"line": "Route 14", "week": week, "late_trips": late}
    return Source(number, "get_line_punctuality", f"w{number}", 1, {"line": "Route 14", "week": week}, data)


WEEKS = [weekly(1, "2026-W14", 189), weekly(2, "2026-W15", 221)]


def problems(answer: str, sources: list[Source]) -> list[str]:
    return [p for s in check(answer, sources, "q").sentences for p in s.problems]


def test_a_superlative_over_a_derived_ratio_compares_it_across_the_items():
    wrong = problems("Harbor Street Garage is the fullest, with 571 of its 620 spaces taken (about 92%).", GARAGES)
    assert any("largest occupied / capacity" in p for p in wrong)
    assert not problems("Elm Row Deck is the fullest, with 402 of its 410 spaces taken (98%).", GARAGES)
    assert problems("Das Elm Row Deck ist am vollsten: 402 von 410 Plätzen (98 %).", GARAGES) == []
    assert problems("Am vollsten ist Harbor Street Garage mit 571 von 620 Plätzen (92 %).", GARAGES)


def test_a_rank_or_a_denial_is_no_extreme_of_a_ratio():
    assert not problems("Harbor Street Garage is the second fullest: 571 of 620 spaces (92%).", GARAGES)
    assert not problems("Harbor Street Garage is not the fullest, with 571 of 620 spaces (92%).", GARAGES)


def test_a_superlative_per_unit_compares_the_amount_per_that_unit():
    assert problems("C'est rue Capucins le plus cher au mètre carré, affiché à 285 000 €.", FLATS)
    assert not problems("C'est rue Mercière le plus cher au mètre carré, affiché à 251 100 €.", FLATS)
    assert problems("Capucins is the most expensive per m², at €285,000.", FLATS)
    # Without "per m²" the price itself is compared: Capucins costs the most.
    assert not problems("Capucins is the most expensive, at €285,000.", FLATS)


def test_a_direction_between_two_periods_follows_their_order():
    caught = problems("Late trips on Route 14 fell to 221 last week.", WEEKS)
    assert any("went down, its sentence says" in p and "rose" in p for p in caught)
    assert not problems("Late trips on Route 14 rose to 221 last week.", WEEKS)
    assert not problems("Late trips on Route 14 did not fall: 221 last week.", WEEKS)
    assert problems("上周14路的晚点班次下降到221次。", WEEKS)
    # Two results of one tool for two things, not two periods, have no order.
    cities = [weekly(1, "2026-W15", 189), weekly(2, "2026-W15", 221)]
    assert not problems("Late trips fell to 221 last week.", cities)


def test_a_change_between_two_figures_goes_their_way():
    caught = problems("Late trips fell from 189 to 221.", WEEKS)
    assert any("went down, its sentence says" in p for p in caught)
    assert not problems("Late trips rose from 189 to 221.", WEEKS)
    assert problems("Die Verspätungen sind von 189 auf 221 gesunken.", WEEKS)
    assert problems("遅延は189便から221便に減りました。", WEEKS)
    assert not problems("遅延は189便から221便に増えました。", WEEKS)


def test_a_wrong_rise_is_told_to_people_as_a_rise():
    """The partial answer says why a figure failed in plain words, for a rise as for a fall."""
    sentences = check("Late trips rose from 221 to 189.", WEEKS, "q").sentences
    assert any("went up, its sentence says" in p for s in sentences for p in s.problems)
    told = [why for s in sentences for _, _, why in s.unbacked]
    assert "a figure is said to have gone up, but its result says it fell" in told


def test_said_change_and_from_to_read_the_words():
    assert said_change("late trips fell to") is False
    assert said_change("ventas subieron") is None  # a verb it does not know says nothing
    assert said_change("sales rose") is True
    assert said_change("sales did not rise") is None
    assert said_change("sales rose and costs fell") is None
    assert from_to("from 189 to 221", 5, 8, 12, 15)
    assert not from_to("189 and 221", 0, 3, 8, 11)
    assert from_to("189から221に", 0, 3, 5, 8)
    assert not from_to("189から22増えた", 0, 3, 5, 7)  # by how much, not to what


def test_a_direction_is_read_next_to_its_figure():
    both = [
        Source(1, "get_line_punctuality", "w1", 1, {"week": "2026-W14"}, {"trips": 1260, "late_trips": 189}),
        Source(2, "get_line_punctuality", "w2", 1, {"week": "2026-W15"}, {"trips": 1274, "late_trips": 170}),
    ]
    # Late trips fell (189 → 170); the trips run rose (1,260 → 1,274), but "fell" speaks of the late trips only.
    assert not problems("Late trips fell to 170 out of 1,274 trips last week.", both)
    assert problems("Late trips rose to 170 out of 1,274 trips last week.", both)


def test_a_superlative_of_a_count_its_words_name_compares_the_count():
    stores = [
        Source(1, "get_returns", "r1", 1, {"store": "Berlin"}, {"store": "Berlin", "orders": 500, "returns": 100}),
        Source(2, "get_returns", "r2", 1, {"store": "Paris"}, {"store": "Paris", "orders": 300, "returns": 90}),
    ]
    # Berlin has the most returns (100), Paris the highest rate of them (30 %).
    assert not problems("Berlin had the most returns: 100 of its 500 orders (20%).", stores)
    assert problems("Paris had the most returns: 90 of its 300 orders (30%).", stores)


def test_a_ratio_written_out_as_two_figures_is_compared_too():
    assert not problems("Elm Row Deck is the fullest, with 402 of its 410 spaces taken.", GARAGES)
    assert not problems("Am vollsten ist das Elm Row Deck: 402 von 410 Plätzen sind belegt.", GARAGES)
    # "vollständig" (complete) and "Leerstand" (vacancy) are no superlatives.
    assert not problems("Die Liste ist vollständig: 402 Plätze im Elm Row Deck sind belegt.", GARAGES)


def test_periods_are_two_calls_of_one_tool_for_two_periods():
    assert periods(WEEKS) == {"get_line_punctuality": (WEEKS[0], WEEKS[1])}
    assert periods(WEEKS[::-1]) == {"get_line_punctuality": (WEEKS[0], WEEKS[1])}  # in time, not in call order
    assert periods(GARAGES) == {}  # two things, not two periods
    assert periods([*WEEKS, weekly(3, "2026-W16", 240)]) == {}  # three periods: which one is "before" is unsaid
