"""The fact-checker on answers written the way models write them: every citation style, no citation at all,
numbers in words, names, lists, tables — right ones kept (with the citations Parley attaches), wrong ones
caught. The corpus (`test_grounding_corpus.py`) runs such answers through the loop; these pin each rule."""

from __future__ import annotations

from agent.grounding import check
from agent.grounding.figures import decimal_mark, read_figures
from agent.grounding.units import UNITS
from agent.source import Source


def weather(number: int, city: str, temp_c: float, humidity: int = 70, call: str | None = None) -> Source:
    data = {"city": city, "temp_c": temp_c, "humidity": humidity, "condition": "cloudy"}
    return Source(number, "get_weather", call or f"c{number}", 1, {"city": city}, data)


SHANGHAI, BEIJING, SHENZHEN = weather(1, "上海", 28, 78), weather(2, "北京", 16, 35), weather(3, "深圳", 30, 80)
CITIES = [SHANGHAI, BEIJING, SHENZHEN]


def lookup(number: int, key: str, value: int) -> Source:
    return Source(number, "knowledge_lookup", f"k{number}", number, {"key": key}, {"key": key, "value": value})


ZEPHYR = [
    lookup(1, "satellites_launched", 47),
    lookup(2, "cost_per_satellite_musd", 12),
    Source(3, "calculator", "k3", 3, {"expression": "47 * 12"}, {"expression": "47 * 12", "result": 564}),
]
TICKETS = [Source(1, "get_ticket_stats", "t1", 1, {"team": "support"}, {"opened": 200, "resolved": 150})]
SERVICES = [
    Source(
        1,
        "get_status",
        "s1",
        1,
        {"region": "eu-west"},
        {
            "region": "eu-west",
            "services": [
                {"name": "checkout", "status": "down", "p95_ms": 912.4},
                {"name": "auth", "status": "up", "p95_ms": 133.8},
                {"name": "search", "status": "down", "p95_ms": 487.0},
                {"name": "billing", "status": "up", "p95_ms": 301.2},
                {"name": "ledger", "status": "up", "p95_ms": 255.6},
            ],
        },
    )
]


def ok(answer: str, sources: list[Source], question: str = "q") -> str:
    """The answer passes; returns it as people see it."""
    grounding = check(answer, sources, question)
    assert grounding.ok, grounding.problems
    return grounding.answer


def caught(answer: str, sources: list[Source], question: str = "q") -> list[str]:
    grounding = check(answer, sources, question)
    assert not grounding.ok, f"not caught: {answer}"
    return grounding.problems


# --- citation styles ------------------------------------------------------------------------------------------


def test_styles_untagged_answer_is_cited_by_parley_after_each_figure():
    assert ok("Shanghai is 28°C and Beijing 16°C.", CITIES) == "Shanghai is 28°C [1] and Beijing 16°C [2]."
    assert ok("上海气温28度，北京16度。", CITIES) == "上海气温28度[1]，北京16度[2]。"
    assert ok("- **Shanghai**: **28°C**, 78% humidity", CITIES) == "- **Shanghai**: **28°C**, 78% humidity [1]"


def test_styles_grouped_fullwidth_and_closing_tags_are_read():
    assert ok("Shanghai 28°C, Beijing 16°C [1, 2].", CITIES) == "Shanghai 28°C, Beijing 16°C [1, 2]."
    assert ok("上海28°C【1】，北京16°C【2】。", CITIES) == "上海28°C【1】，北京16°C【2】。"
    closing = "Shanghai is at 28°C. Beijing is much cooler. It is 16°C there. [1][2]"
    assert ok(closing, CITIES) == closing  # one group of tags closes the paragraph: nothing to add
    caught("上海28°C【2】。", CITIES)  # 【2】 is 北京's result


def test_styles_footnotes_are_resolved_by_what_their_lines_say():
    answer = "Beijing is 16°C[^a] and Shanghai 28°C[^b].\n\n[^a]: get_weather, Beijing\n[^b]: get_weather, 上海"
    grounding = check(answer, CITIES, "q")
    assert grounding.ok and grounding.answer == answer
    assert [c.marker for c in grounding.citations] == ["[1]", "[2]"]
    swapped = "Beijing is 28°C[^a] and Shanghai 16°C[^b].\n\n[^a]: get_weather, Beijing\n[^b]: get_weather, 上海"
    caught(swapped, CITIES)


def test_styles_a_tool_named_in_any_language_binds_each_figure_by_its_names():
    for answer in (
        "Shanghai 28°C, Beijing 16°C (source: get_weather).",
        "上海 28°C，北京 16°C（来源：get_weather）。",
        "Shanghai hat 28 °C, Peking... nein: Beijing hat 16 °C (Quelle: get_weather).",
        "Según get_weather, Shanghai está a 28 °C y Beijing a 16 °C.",
        "get_weather によると、上海は28°C、北京は16°Cです。",
    ):
        shown = ok(answer, CITIES)
        assert "[1]" in shown and "[2]" in shown, shown
    caught("Shanghai 16°C, Beijing 28°C (source: get_weather).", CITIES)  # swapped: each figure is the other's
    assert "the answer cites weather_api, which returned nothing usable" in caught(
        "Shanghai 28°C (source: weather_api).", CITIES
    )


def test_styles_a_list_of_sources_after_the_answer_cites_them_for_the_whole_answer():
    answer = "Shanghai is warm at 28°C.\nBeijing is cool at 16°C.\n\nSources: get_weather (上海), get_weather (北京)"
    assert ok(answer, CITIES) == answer.replace("28°C", "28°C [1]").replace("16°C", "16°C [2]")


def test_styles_tags_on_some_figures_only_and_tags_naming_the_other_result():
    # A weak model tags the first figure only: the second is found, not refused.
    assert ok("Shanghai 28°C [1], Beijing 16°C.", CITIES) == "Shanghai 28°C [1], Beijing 16°C [2]."
    caught("Shanghai 28°C [1], Beijing 30°C.", CITIES)  # 30 is Shenzhen's, and the clause names Beijing
    # A tag names the results a figure may be in; the clause's names still say which.
    caught("Shanghai 16°C and Beijing 28°C [1][2].", CITIES)
    caught("Shanghai 16°C [2].", CITIES)  # [2] is Beijing's result: its 16 is not Shanghai's


def test_styles_unknown_tag_is_still_a_problem():
    assert "[9] is not the tag of any successful tool result" in caught("Shanghai 28°C [9].", CITIES)


# --- which result a figure is about -----------------------------------------------------------------------------


def test_attribution_respectively_and_a_carried_subject():
    assert ok("Shanghai and Beijing are at 28°C and 16°C respectively.", CITIES)
    caught("Shanghai and Beijing are at 16°C and 28°C respectively.", CITIES)
    assert ok("Shanghai: 28°C. Humidity is 78%.", CITIES) == "Shanghai: 28°C [1]. Humidity is 78% [1]."


def test_attribution_a_result_about_nothing_the_answer_names_may_back_any_figure():
    assert ok("564 million USD", ZEPHYR) == "564 million USD [3]"
    grounding = check("564 million USD", ZEPHYR, "How much did Zephyr Labs spend on launching satellites?")
    assert [c.marker for c in grounding.citations] == ["[1]", "[2]", "[3]"]  # the calculator used 47 and 12
    assert grounding.grounded[0].cited_by == "parley"
    how = "564 million USD ← 564 (result) in [3] (its call used [1], [2]), cited by Parley"
    assert grounding.grounded[0].how == how


def test_attribution_the_askers_own_figure_is_theirs():
    answer = "Of the twenty regions, Shenzhen is the warmest at 30°C."
    grounding = check(answer, CITIES, "How did our twenty regions do?")
    assert grounding.ok and "twenty [" not in grounding.answer


# --- numbers in words ------------------------------------------------------------------------------------------


def test_words_numbers_and_fractions_in_several_languages_are_checked_like_digits():
    assert ok("Zephyr Labs launched forty-seven satellites.", ZEPHYR, "How many satellites has Zephyr Labs launched?")
    assert ok("Each satellite cost twelve million USD.", ZEPHYR)
    assert ok("Support resolved three quarters of the 200 tickets.", TICKETS)
    assert ok("Der Support hat drei Viertel der 200 Tickets gelöst.", TICKETS)
    assert ok("Le support a résolu les trois quarts des 200 tickets.", TICKETS)
    assert ok("支持团队解决了200张工单中的四分之三。", TICKETS)
    assert ok("Ein Satellit kostete zwölf Millionen USD.", ZEPHYR)
    assert ok("每颗卫星花费十二百万美元。".replace("十二百万", "一千二百万"), ZEPHYR)
    caught("Zephyr Labs launched forty-eight satellites.", ZEPHYR, "How many satellites has Zephyr Labs launched?")
    caught("Support resolved two thirds of the 200 tickets.", TICKETS)
    caught("Le support a résolu les deux tiers des 200 tickets.", TICKETS)
    caught("Ein Satellit kostete elf Millionen USD.", ZEPHYR)
    caught("每颗卫星花费一千一百万美元。", ZEPHYR)


def test_words_that_are_no_quantity_are_not_read():
    assert ok("Shanghai is 28°C, the warmer one of the two.", CITIES)
    assert ok("上海28°C，是两个城市中更热的一个。", CITIES)
    assert ok("Shanghai is 28°C. First, take a light jacket.", CITIES)


# --- names that carry a figure --------------------------------------------------------------------------------


def test_entities_a_figure_given_to_a_name_nothing_named_is_caught():
    question = "How much did Zephyr Labs spend on launching satellites?"
    assert ok("Zephyr Labs spent 564 million USD.", ZEPHYR, question)
    assert ok("Zephyr Labs Inc. spent 564 million USD in November.", ZEPHYR, question)
    problems = caught("Orion Labs spent 564 million USD.", ZEPHYR, question)
    assert "the number 564 million USD is given to Orion Labs, which no question, tool call or result names" in problems
    caught("In total, Orion spent 564 million USD.", ZEPHYR, question)
    contracts = [Source(1, "get_contracts", "c1", 1, {"customer": "星河科技"}, {"contracts": 14})]
    assert ok("星河科技共签约14份合同。", contracts)
    caught("银河科技共签约14份合同。", contracts)
    # German capitalises every noun: "Umsatz" is no company.
    revenue = [Source(1, "get_revenue", "r1", 1, {"region": "DACH"}, {"region": "DACH", "revenue_eur": 1200})]
    assert ok("Der Umsatz in DACH betrug im Oktober 1.200 €.", revenue)


def test_entities_cjk_names_are_told_by_their_marks_and_known_by_what_the_run_saw():
    team = [Source(1, "get_support_sla", "s1", 1, {"team": "客服二组"}, {"team": "客服二组", "tickets": 842})]
    assert ok("上周客服二组全组共处理了842张工单。", team, "客服二组上周处理了多少工单？")
    problems = caught("上周王思远一个人就处理了842张工单。", team, "客服二组上周处理了多少工单？")
    assert "the number 842 is given to 王思远, which no question, tool call or result names" in problems
    assert ok("上周王思远一个人就处理了842张工单。", team, "王思远所在的客服二组上周处理了多少工单？")
    claims = [
        Source(1, "get_claims", "c1", 1, {"insurer": "江南联合保险"}, {"insurer": "江南联合保险", "claims": 3600})
    ]
    assert ok("江南联合保险共3,600件赔案，和其他保险公司相比不算多。", claims)
    assert ok("数据显示江南联合保险共3,600件赔案。", claims)  # the name begins after "数据显示"
    caught("东海联合保险共3,600件赔案。", claims)  # shares "联合保险", not the name
    staff = [Source(1, "get_staff", "t1", 1, {"team": "デザイン"}, {"remote": [{"name": "佐藤"}], "count": 5})]
    assert ok("デザインチームの佐藤さんを含め、5人です。", staff)
    caught("デザインチームは山本さんを含め5人です。", staff)
    orders = [Source(1, "get_orders", "o1", 1, {"owner": "김도윤"}, {"owner": "김도윤", "orders": 3})]
    assert ok("김도윤 님의 주문은 3건입니다.", orders)
    caught("박지훈 님의 주문은 3건입니다.", orders)
    # Across scripts: pinyin tells a Chinese name; a Korean or Japanese one only in its own script.
    latin = [Source(1, "get_orders", "o1", 1, {"id": "X-1"}, {"owner": "Wang Siyuan", "orders": 3})]
    assert ok("王思远一个人下了3单。", latin)
    caught("李婷一个人下了3单。", latin)
    romanised = [Source(1, "get_orders", "o1", 1, {"id": "X-1"}, {"owner": "Kim Doyun", "orders": 3})]
    assert ok("김도윤 님의 주문은 3건입니다.", romanised, "내 주문 상태 알려줘")


# --- lists, tables, derivations ---------------------------------------------------------------------------------


def test_aggregates_counts_by_state_in_any_language_sums_and_superlatives():
    assert ok("2 of the 5 services are down.", SERVICES)
    assert ok("Von den 5 Diensten sind 2 ausgefallen.", SERVICES)
    assert ok("5个服务中有2个宕机。", SERVICES)
    caught("3 of the 5 services are down.", SERVICES)  # three are up, not down
    caught("5个服务中有3个宕机。", SERVICES)
    assert ok("The slowest service, checkout, is at about 912 ms p95.", SERVICES)
    caught("The slowest service is at about 487 ms p95.", SERVICES)
    assert ok("Across the 5 services, p95 averages about 418 ms.", SERVICES)


def test_derivations_chained_and_across_results():
    assert ok("50 of the 200 tickets are unresolved: 25%.", TICKETS)
    caught("60 of the 200 tickets are unresolved: 30%.", TICKETS)
    fx = [
        Source(1, "get_revenue", "r1", 1, {"region": "EMEA"}, {"region": "EMEA", "revenue_eur": 1_000_000}),
        Source(2, "get_fx_rate", "r2", 1, {"pair": "EURUSD"}, {"pair": "EURUSD", "usd_per_eur": 1.0832}),
    ]
    assert ok("EMEA made €1,000,000 [1]; at 1.0832 USD per EUR [2] that is about $1.08 million.", fx)
    assert ok("EMEA made €1,000,000; at an exchange rate of 1.0832 that is about $1.08 million.", fx)
    caught("EMEA made €1,000,000 [1]; at 1.0832 USD per EUR [2] that is about $1.12 million.", fx)


def test_figures_whose_words_say_they_went_down_stand_for_negative_values():
    emea = [Source(1, "get_revenue", "r1", 1, {"region": "EMEA"}, {"growth_pct": -3.2, "change_eur": -12000})]
    assert ok("EMEA revenue fell 3.2%.", emea) == "EMEA revenue fell 3.2% [1]."
    assert ok("Der Umsatz in EMEA ist um 12.000 € gesunken.", emea)
    assert ok("EMEA: -3.2% [1]", emea)
    caught("EMEA revenue grew 3.2%.", emea)  # the result says it shrank
    caught("EMEA revenue fell 3.4%.", emea)


def test_tables_read_each_row_with_its_headers_unit():
    table = "| City | Temp (°C) | Humidity (%) |\n|---|---|---|\n| Shanghai | 28 | 78 |\n| Beijing | 16 | 35 |"
    shown = ok(table, CITIES)
    assert "| Shanghai | 28 | 78 [1] |" in shown and "| Beijing | 16 | 35 [2] |" in shown
    caught(table.replace("| 28 |", "| 16 |").replace("| Beijing | 16 |", "| Beijing | 28 |"), CITIES)
    caught(table.replace("Temp (°C)", "Temp (°F)"), CITIES)  # 28 °F is not 28 °C
    revenue = [
        Source(1, "get_revenue", "r1", 1, {"region": "华东"}, {"region": "华东", "revenue_cny": 12_500_000}),
        Source(2, "get_revenue", "r2", 1, {"region": "华南"}, {"region": "华南", "revenue_cny": 9_830_000}),
    ]
    assert ok("| 地区 | 营收（万元） |\n|---|---|\n| 华东 | 1250 |\n| 华南 | 983 |", revenue)


ENDPOINTS = [
    Source(
        1,
        "get_endpoint_latency",
        "e1",
        1,
        {"service": "storefront"},
        {
            "service": "storefront",
            "endpoints": [
                {"endpoint": "/checkout", "p95_ms": 912.4, "rpm": 1840},
                {"endpoint": "/search", "p95_ms": 412.0, "rpm": 9120},
                {"endpoint": "/cart", "p95_ms": 187.5, "rpm": 4410},
            ],
        },
    )
]
BATCH = [
    Source(
        1,
        "get_weather_batch",
        "b1",
        1,
        {"cities": ["Lille", "Nantes"]},
        {
            "Lille": {"temp_c": 6.2, "condition": "bruine"},
            "Nantes": {"temp_c": 11.4, "condition": "éclaircies"},
        },
    )
]


def test_items_of_one_result_a_figure_is_the_item_its_words_name():
    assert ok("/checkout is at about 912 ms p95 and /search at 412 ms.", ENDPOINTS)
    problems = caught("/checkout is at 412 ms p95 and /search at about 912 ms.", ENDPOINTS)
    assert any("/search's in get_endpoint_latency [1]" in p for p in problems)
    caught("El p95 de /checkout es de 412 ms y el de /search de unos 912 ms.", ENDPOINTS)
    caught("The slowest endpoint is /search, at about 912 ms p95.", ENDPOINTS)  # the largest, but /checkout's
    assert ok("À Lille il fait 6,2 °C avec de la bruine, et à Nantes 11,4 °C.", BATCH)
    caught("À Lille il fait 11,4 °C avec de la bruine, et à Nantes 6,2 °C.", BATCH)  # keyed by city
    caught("| Ville | Temp (°C) |\n|---|---|\n| Lille | 11,4 |\n| Nantes | 6,2 |", BATCH)
    # A sentence naming several items may compare them; only a clause says whose a figure is.
    assert ok("/checkout is far slower than /search (912 ms vs 412 ms).", ENDPOINTS)


def test_superlatives_speak_of_their_own_figure_in_the_direction_they_say():
    assert ok(
        "The slowest endpoint is /checkout at about 912 ms, ahead of /search (412 ms) and /cart (188 ms).", ENDPOINTS
    )
    caught("The slowest endpoint right now is /cart, with a p95 of about 188 ms.", ENDPOINTS)  # the fastest
    assert ok("The fastest endpoint is /cart at about 188 ms.", ENDPOINTS)
    assert ok("/search has the most traffic (9,120 rpm); /cart 4,410 rpm.", ENDPOINTS)
    caught("L'endpoint le plus lent est /search, à 412 ms.", ENDPOINTS)
    caught("Il servizio più lento è /cart, con circa 188 ms.", ENDPOINTS)
    caught("De traagste endpoint is /cart met ongeveer 188 ms.", ENDPOINTS)
    caught("가장 느린 엔드포인트는 /cart로, 약 188ms입니다.", ENDPOINTS)
    caught("最慢的是 /cart，188 ms。", ENDPOINTS)
    cold = [weather(1, "Oslo", -2.5), weather(2, "Stockholm", 1.5), weather(3, "Helsinki", -4)]
    assert ok("Helsinki is the coldest at -4 °C, followed by Oslo at -2.5 °C; Stockholm is at 1.5 °C.", cold)
    caught("Stockholm is the coldest at 1.5 °C.", cold)
    caught("Die wärmste Stadt ist Oslo mit -2,5 °C.", cold)
    caught("现在最热的是奥斯陆（Oslo），-2.5°C。", cold)
    # A false superlative is never made right by arithmetic (-2.5 = -4 + 1.5).
    caught("Oslo is the coldest at -2.5 °C; Helsinki is at -4 °C and Stockholm at 1.5 °C.", cold)
    # A comparison is no superlative; a field named for its extreme is one already.
    assert ok("Oslo è più fredda di Stockholm: -2,5 °C contro 1,5 °C.", cold)
    forecast = [
        Source(
            1,
            "get_forecast",
            "f1",
            1,
            {"city": "Denver"},
            {
                "days": [
                    {"date": "2026-12-01", "temp_min_c": 3.1, "temp_max_c": 10.8},
                    {"date": "2026-12-02", "temp_min_c": 1.4, "temp_max_c": 12.5},
                ]
            },
        )
    ]
    assert ok("Tomorrow Denver expects a min of 3 °C and a max of 11 °C.", forecast)
    assert ok("明日の最高気温は10.8°C、最低気温は3.1°Cです。", forecast)


def test_reading_units_scales_and_windows_as_people_write_them():
    phoenix = [weather(1, "Phoenix", 28, call="p1")]
    assert ok("Phoenix is at 28 °C, about 82 degrees Fahrenheit.", phoenix)
    assert ok("In Phoenix sind es 28 °C, also etwa 82 Grad Fahrenheit.", phoenix)
    caught("Phoenix is at 28 °C, about 90 degrees Fahrenheit.", phoenix)
    latency = [
        Source(
            1,
            "get_latency",
            "l1",
            1,
            {"service": "payments"},
            {"service": "payments", "window": "7d", "p50_ms": 87.2349, "p99_ms": 1530.77},
        )
    ]
    for answer in (
        "Il p99 di payments è di circa 1,5 secondi.",
        "De p99 van payments is ongeveer 1,5 seconden.",
        "payments의 p99는 약 1.5초입니다.",
        "**payments (last 7 days)**: p50 ~87 ms, p99 ~1.5 s",
    ):
        assert ok(answer, latency)
    caught("**payments (last 30 days)**: p50 ~87 ms", latency)
    revenue = [
        Source(
            1,
            "get_revenue",
            "r1",
            1,
            {"region": "Benelux"},
            {"region": "Benelux", "revenue_eur": 1_851_200, "budget_left_eur": 850_000},
        )
    ]
    assert ok("La région Benelux a réalisé 1,85 M€ de chiffre d'affaires ; il reste 850 k€.", revenue)
    assert ok("Benelux ha chiuso con 1,85 mln di euro di fatturato.", revenue)
    caught("La région Benelux a réalisé 1,95 M€ de chiffre d'affaires.", revenue)
    table = "| Region | Revenue (€M) |\n|---|---|\n| Benelux | 1.85 |"
    assert ok(table, revenue)
    assert ok(table.replace("(€M)", "(EUR millions)"), revenue)
    assert ok("| Región | Ventas (miles de €) |\n|---|---|\n| Benelux | 1.851,2 |", revenue)
    assert ok(
        "Volgens get_metrics was auth 99,95 procent van de tijd beschikbaar.",
        [Source(1, "get_metrics", "m1", 1, {"service": "auth"}, {"service": "auth", "availability": 0.9995})],
    )
    # A Dutch text's "1.234" is a thousand and more, not a decimal, though Dutch writes "in" and "is".
    orders = [Source(1, "get_orders", "o1", 1, {"city": "Amsterdam"}, {"city": "Amsterdam", "orders": 1234})]
    assert ok("Gisteren zijn er in Amsterdam 1.234 bestellingen geplaatst.", orders)
    # A unit's letter before an apostrophe opens an elided word: "3 s'y ajoutent" is three, not three seconds.
    assert [f.unit for f in read_figures("Les 3 m'ont plu, 12 s'y ajoutent, 5 s’il le faut.")] == [None, None, None]
    assert [f.unit for f in read_figures("3 m, 12 s.")] == [UNITS["m"], UNITS["s"]]
    # "5.1.3" or "10.0.0.1" groups no thousands: it says nothing of the decimal mark ("1.200.000" does).
    assert decimal_mark("5.1.3 and 5.2.0: 4,130 and 2,875") == "."
    assert decimal_mark("10.0.0.1 answered 1,250 requests") is None  # undecided: 1,250 keeps both readings
    assert decimal_mark("1.200.000 Sitzungen") == "," and decimal_mark("12.345.678,5") == ","


def test_reading_dates_times_and_ranges_as_people_write_them():
    release = [
        Source(
            1, "get_release", "v1", 1, {"version": "2.4.0"}, {"version": "2.4.0", "released_at": "2026-11-30T08:15:00Z"}
        )
    ]
    for answer in (
        "Parley 2.4.0 is uitgebracht op 30 november 2026 om 09.15 uur (CET).",
        "O Parley 2.4.0 foi lançado em 30 de novembro de 2026, às 8h15 (UTC).",
        "Parley 2.4.0은 2026년 11월 30일 오후 5시 15분(한국 시간)에 출시되었습니다.",
        "Parley 2.4.0은 2026년 11월 30일 17:15 KST에 출시되었습니다.",
        "Parley 2.4.0: 30.11.2026, 08:15 UTC.",
    ):
        assert ok(answer, release)
    caught("Parley 2.4.0은 2026년 11월 30일 오후 6시 15분(한국 시간)에 출시되었습니다.", release)
    caught("O Parley 2.4.0 foi lançado em 30 de novembro de 2026, às 9h15 (UTC).", release)
    window = [
        Source(
            1,
            "get_maintenance",
            "w1",
            1,
            {"system": "billing"},
            {"system": "billing", "starts_at": "2026-12-02T08:00:00Z", "duration_min": 90},
        )
    ]
    assert ok("Das Wartungsfenster beginnt am 2. Dezember 2026 um 9 Uhr MEZ und dauert 90 Minuten.", window)
    caught("Das Wartungsfenster beginnt am 2. Dezember 2026 um 10 Uhr MEZ.", window)
    incidents = [
        Source(
            1,
            "get_incidents",
            "i1",
            1,
            {"team": "sre"},
            {"period_start": "2026-11-23", "period_end": "2026-11-29", "incidents": 4},
        )
    ]
    for answer in (
        "From November 23 to 29, 2026 there were 4 incidents.",
        "Vom 23. bis 29. November 2026 gab es 4 Incidents.",
        "Del 23 al 29 de noviembre hubo 4 incidentes.",
        "11月23日至29日共发生4起事故。",
    ):
        assert ok(answer, incidents)
    caught("From November 23 to 30, 2026 there were 4 incidents.", incidents)
    invoice = [Source(1, "get_invoice", "n1", 1, {"id": "INV-7731"}, {"id": "INV-7731", "due": "2026-12-15"})]
    assert ok("La facture INV-7731 est due le 15/12.", invoice)
    caught("La facture INV-7731 est due le 16/12.", invoice)
    deploys = [
        Source(
            1,
            "get_deploys",
            "d1",
            1,
            {"week": "last"},
            {
                "deploys": [
                    {"service": "checkout-api", "status": "failed"},
                    {"service": "checkout-api", "status": "failed"},
                    {"service": "checkout-api", "status": "failed"},
                    {"service": "search-api", "status": "succeeded"},
                    {"service": "search-api", "status": "succeeded"},
                    {"service": "auth", "status": "succeeded"},
                    {"service": "auth", "status": "succeeded"},
                ]
            },
        )
    ]
    assert ok("3 of last week's 7 deploys failed [1].", deploys)  # "3/7" after no date word is no date
    for wrong in (
        "4 of last week's 7 deploys broke.",
        "La settimana scorsa 4 deploy su 7 sono falliti.",
        "Vorige week zijn 4 van de 7 deploys mislukt.",
        "Na semana passada, 4 dos 7 deploys falharam.",
    ):
        caught(wrong, deploys)


def test_a_change_said_to_go_down_must_be_negative():
    emea = [Source(1, "get_revenue", "r1", 1, {"region": "EMEA"}, {"region": "EMEA", "change_pct_qoq": 3.2})]
    assert ok("EMEA revenue grew 3.2% on the previous quarter.", emea)
    problems = caught("EMEA revenue was down 3.2% on the previous quarter.", emea)
    assert any("went down, its sentence says" in p for p in problems)
    caught("Il fatturato EMEA è calato del 3,2% rispetto al trimestre precedente.", emea)


def test_fractions_compounds_and_glued_units_as_people_write_them():
    tickets = [Source(1, "get_ticket_stats", "t1", 1, {"team": "support"}, {"opened": 200, "resolved": 150})]
    assert ok("サポートは新規チケット200件のうち4分の3にあたる150件を解決しました。", tickets)
    assert ok("サポートは新規チケット200件のうち四分の三を解決しました。", tickets)
    caught("サポートは新規チケット200件のうち三分の二を解決しました。", tickets)
    assert ok("Support heeft driekwart van de 200 tickets opgelost.", tickets)
    caught("Support heeft tweederde van de 200 tickets opgelost.", tickets)
    korea = [Source(1, "get_revenue", "k1", 1, {"country": "KR"}, {"country": "KR", "revenue_krw": 1_234_567_890})]
    assert ok("한국 매출은 약 12억 3,457만 원입니다.", korea)
    caught("한국 매출은 약 12억 4,457만 원입니다.", korea)
    window = [Source(1, "get_maintenance", "w1", 1, {"system": "billing"}, {"system": "billing", "duration_min": 90})]
    for answer in ("It lasts 1 hour 30 minutes.", "Es dauert 1 Stunde und 30 Minuten.", "所要時間は1時間30分です。"):
        assert ok(answer, window)
    caught("It lasts 1 hour 45 minutes.", window)
    lisbon = [weather(1, "Lisbon", 24, 62)]
    assert ok("Lisbon: 24C, humidity 62%.", lisbon)
    caught("Lisbon: 31C, humidity 62%.", lisbon)


def test_a_sum_of_named_things_uses_their_values_only():
    stores = [
        Source(n, "get_orders", f"o{n}", 1, {"store": city}, {"store": city, "orders": orders})
        for n, city, orders in ((1, "Berlin", 412), (2, "Paris", 377), (3, "Rome", 289))
    ]
    text = "Yesterday Berlin took 412 orders, Paris 377 and Rome 289. Berlin and Paris together took {}."
    shown = ok(text.format(789), stores)
    assert "Rome 289 [3].\nBerlin" in shown.replace(". Berlin", ".\nBerlin")  # the tag stays in its sentence
    caught(text.format(701), stores)  # 412 + 289 is Berlin and Rome
    assert ok("Berlin took 412 orders, Paris 377 and Rome 289; all three together took 1,078.", stores)


def test_quarters_are_dates_in_any_writing():
    emea = [
        Source(
            1,
            "get_revenue",
            "r1",
            1,
            {"region": "EMEA", "quarter": "2026-Q3"},
            {"region": "EMEA", "quarter": "2026-Q3", "revenue_usd": 4_518_760},
        )
    ]
    for answer in (
        "EMEA brought in $4.52M in Q3 2026.",
        "EMEA brought in $4.52M in 3Q26.",
        "EMEA brought in $4.52M in the third quarter of 2026.",
        "EMEA hat im 3. Quartal 2026 4,52 Mio. $ umgesetzt.",
        "EMEA a réalisé 4,52 M$ au T3 2026.",
        "EMEAの2026年第3四半期の売上は4.52M USDでした。",
        "EMEA의 2026년 3분기 매출은 452만 달러입니다.",
    ):
        assert ok(answer, emea)
    caught("EMEA brought in $4.52M in Q4 2026.", emea)  # today's quarter, but not the result's
    caught("EMEA hat im 2. Quartal 2026 4,52 Mio. $ umgesetzt.", emea)
    numbers = [
        Source(
            1,
            "get_revenue",
            "r1",
            1,
            {"region": "EMEA"},
            {"region": "EMEA", "year": 2026, "quarter": 3, "revenue_usd": 4_518_760},
        )
    ]
    assert ok("EMEA brought in $4.52M in Q3 2026.", numbers)
    caught("EMEA brought in $4.52M in Q2 2026.", numbers)


def test_figures_set_against_each_other_follow_their_names():
    stores = [
        Source(n, "get_orders", f"o{n}", 1, {"store": city}, {"store": city, "orders": orders})
        for n, city, orders in ((1, "Berlin", 412), (2, "Paris", 377))
    ]
    assert ok("Berlin took more orders than Paris (412 vs 377).", stores)
    caught("Paris took more orders than Berlin (412 vs 377).", stores)
    assert ok("Both the Berlin and the Paris store were busy. They took 412 and 377 orders respectively.", stores)
    caught("Both the Berlin and the Paris store were busy. They took 377 and 412 orders respectively.", stores)
    text = "Berlin took 412 orders and Paris 377, 789 in all. Berlin accounts for {} of them."
    assert ok(text.format("52.2%"), stores)
    caught(text.format("47.8%"), stores)  # Paris's share
    assert ok("Paris took 377 orders, 35 fewer than Berlin (412).", stores)


def test_a_duration_is_the_time_between_two_moments():
    flight = [
        Source(
            1,
            "get_flight",
            "f1",
            1,
            {"flight": "LH 718"},
            {"flight": "LH 718", "departs": "2026-03-05T22:40:00", "arrives": "2026-03-06T06:10:00"},
        )
    ]
    assert ok("LH 718 leaves at 22:40 and lands at 06:10 the next morning: 7 hours 30 minutes in the air.", flight)
    assert ok("LH 718 braucht 7 Stunden 30 Minuten.", flight)
    assert ok("LH 718 : 7 h 30 de vol.", flight)
    assert ok("LH 718の所要時間は7時間30分です。", flight)
    assert ok("LH 718 dura circa 7 ore e mezza, cioè 450 minuti.", flight)
    caught("LH 718 leaves at 22:40 and lands at 06:10: 8 hours 30 minutes in the air.", flight)
    caught("LH 718의 비행 시간은 7시간 20분입니다.", flight)
    # Between two times the answer states and a result backs, or two days: "from 6 to 30 April, 24 days".
    sprint = [Source(1, "get_sprint", "s1", 1, {"team": "web"}, {"starts": "2026-04-06", "ends": "2026-04-30"})]
    assert ok("Le sprint web va du 6 au 30 avril 2026 : il reste 24 jours.", sprint)
    caught("Le sprint web va du 6 au 30 avril 2026 : il reste 26 jours.", sprint)
    # A rate over that duration, in its own units: 982 km in 9 h 30 is 103 km/h.
    truck = {"departed": "2026-03-02T08:15:00", "eta": "2026-03-02T17:45:00", "distance_km": 982}
    trip = [Source(1, "get_shipment", "t1", 1, {"id": "TRK-4471"}, truck)]
    assert ok("TRK-4471 drives 982 km from 08:15 to 17:45, 9 hours 30 minutes: about 103 km/h.", trip)
    caught("TRK-4471 drives 982 km from 08:15 to 17:45, 9 hours 30 minutes: about 113 km/h.", trip)


def test_an_amount_times_a_rate_written_per_one():
    rate = [Source(1, "get_fx_rate", "x1", 1, {"base": "USD", "quote": "EUR"}, {"rate": 0.922})]
    question = "What is our 12,400 USD invoice in euros?"
    for answer in (
        "1 USD = 0.922 EUR today, so the 12,400 USD invoice is 11,432.80 EUR.",
        "D'après get_fx_rate, 1 USD vaut 0,922 € : la facture de 12 400 USD fait 11 432,80 €.",
        "Laut get_fx_rate entspricht 1 USD 0,922 €, die Rechnung über 12.400 USD also 11.432,80 €.",
    ):
        assert ok(answer, rate, question)
    caught("1 USD = 0.922 EUR today, so the 12,400 USD invoice is 11,532.80 EUR.", rate, question)
    won = [Source(1, "get_fx_rate", "x1", 1, {"base": "USD", "quote": "KRW"}, {"rate": 1385})]
    assert ok("오늘 환율이 달러당 1,385원이라 구독료 1,800달러는 2,493,000원입니다.", won, "구독료 1,800달러는 원화로?")
    caught("오늘 환율이 달러당 1,385원이라 구독료 1,800달러는 2,593,000원입니다.", won, "구독료 1,800달러는 원화로?")
    yen = [Source(1, "get_fx_rate", "x1", 1, {"base": "USD", "quote": "JPY"}, {"rate": 149.5})]
    assert ok("1ドル＝149.5円なので、3,200ドルは478,400円です。", yen, "3,200ドルは何円？")
    # "R$" is a dollar of its own: no US dollar amount is there to be wrong about.
    [real] = read_figures("R$ 3,00 por quilo", mark=",")
    assert real.unit is None and read_figures("US$ 3")[0].unit == UNITS["USD"]


def test_korean_and_japanese_amounts_with_thousands_inside():
    revenue = [Source(1, "get_revenue", "r1", 1, {"team": "서울"}, {"team": "서울", "revenue_krw": 5_720_000_000})]
    assert ok("서울 팀의 매출은 57억 2천만 원입니다.", revenue)
    caught("서울 팀의 매출은 57억 3천만 원입니다.", revenue)
    budget = [Source(1, "get_budget", "b1", 1, {"dept": "大阪"}, {"dept": "大阪", "budget_jpy": 35_000_000})]
    assert ok("大阪の予算は3千5百万円です。", budget)
    caught("大阪の予算は3千6百万円です。", budget)


def test_korean_says_the_superlative_after_its_figure():
    zones = [
        Source(n, "get_latency", f"l{n}", 1, {"zone": zone}, {"zone": zone, "p50_ms": ms})
        for n, zone, ms in ((1, "2a", 125), (2, "2b", 130), (3, "2c", 150), (4, "2d", 115))
    ]
    assert ok("2c가 150ms로 가장 느리고 2d가 115ms로 가장 빠릅니다.", zones)
    caught("2c가 115ms로 가장 느리고 2d가 150ms로 가장 빠릅니다.", zones)
    assert ok("2dは115msで最も速いです。", zones)


def test_the_day_of_the_week_a_date_is_given_must_be_its_own():
    delivery = [Source(1, "get_delivery", "d1", 1, {"order": "A-17"}, {"order": "A-17", "eta": "2026-03-10"})]
    for answer in (
        "Die Lieferung A-17 kommt am Dienstag, den 10. März 2026.",
        "A-17 arrives on Tuesday, March 10, 2026.",
        "A-17 llega el martes 10 de marzo de 2026.",
        "A-17预计2026年3月10日（星期二）送达。",
        "A-17は2026年3月10日(火)に届きます。",
    ):
        assert ok(answer, delivery)
    for answer in (
        "Die Lieferung A-17 kommt am Montag, den 10. März 2026.",
        "A-17 arrives on Wednesday, March 10, 2026.",
        "A-17预计2026年3月10日（星期三）送达。",
        "A-17은 2026년 3월 10일(목)에 도착합니다.",
    ):
        assert any("not the day of the week" in p for p in caught(answer, delivery)), answer


def test_words_and_numbers_that_are_part_of_something_else():
    # "in media" is "on average", not a half; "412 Go" is a unit nobody listed, not a name.
    months = [{"month": f"2026-0{n}", "eur": eur} for n, eur in ((1, 200_000), (2, 220_100), (3, 221_000))]
    sales = [Source(1, "get_sales", "s1", 1, {"site": "Torino"}, {"site": "Torino", "months": months})]
    assert ok("Torino ha fatturato 641.100 € nel trimestre, in media 213.700 € al mese.", sales)
    disk = [Source(1, "get_disk", "d1", 1, {"host": "db-02"}, {"host": "db-02", "used_gb": 412, "size_gb": 500})]
    assert ok("db-02 utilise 412 Go sur 500 Go, soit 82,4 %. Il reste 88 Go.", disk)
    caught("Le serveur Orion utilise 412 Go sur 500 Go.", disk)
    # A number in a name the result gives ("Chargeur 65 W") is no figure, and no other item's 65.
    items = [
        {"item": "Câble USB-C", "stock": 14, "reorder_point": 50},
        {"item": "Chargeur 65 W", "stock": 8, "reorder_point": 20},
        {"item": "Clavier AZERTY", "stock": 65, "reorder_point": 30},
        {"item": "Hub USB", "stock": 41, "reorder_point": 25},
    ]
    stock = [Source(1, "get_inventory", "i1", 1, {"warehouse": "Lille"}, {"warehouse": "Lille", "items": items})]
    below = "Deux articles sont sous leur seuil : le câble USB-C (14 pour 50) et le chargeur 65 W (8 pour 20)."
    assert ok(below, stock)
    caught("3 articles sur 4 sont sous leur seuil à Lille.", stock)  # 2 are: no item's 20 / 4 rounds to it


def test_a_total_after_a_list_and_a_count_next_to_the_items_it_counts():
    regions = [
        Source(n, "get_sales", f"s{n}", 1, {"region": region}, {"region": region, "sales_eur": sales})
        for n, region, sales in ((1, "Norte", 1_840_000), (2, "Sur", 1_160_000))
    ]
    listed = "**Ventas**\n\n- **Norte:** 1.840.000 €\n- **Sur:** 1.160.000 €\n\nEntre las dos suman {} €."
    assert ok(listed.format("3.000.000"), regions)
    caught(listed.format("3.100.000"), regions)
    shipments = [
        {"id": "ENV-301", "status": "delayed", "delay_h": 6},
        {"id": "ENV-305", "status": "delayed", "delay_h": 12},
        {"id": "ENV-306", "status": "on_time", "delay_h": 0},
        {"id": "ENV-307", "status": "delayed", "delay_h": 3},
    ]
    late = [Source(1, "list_shipments", "l1", 1, {"to": "Valencia"}, {"shipments": shipments})]
    assert ok("De los 4 envíos, 3 van con retraso: ENV-301 (6 h), ENV-305 (12 h) y ENV-307 (3 h).", late)
    caught("De los 4 envíos, 2 van con retraso.", late)
    headcount = [
        Source(1, "get_headcount", "h1", 1, {"team": "Sales"}, {"team": "Sales", "q1": 87, "q2": 81}),
    ]
    table = "| Team | Q1 | Q2 | Change |\n|---|---|---|---|\n| Sales | 87 | 81 | {} |"
    assert ok(table.format("−6"), headcount)
    caught(table.format("−5"), headcount)


def test_a_name_that_tells_results_apart_outweighs_one_they_share():
    quarters = [
        Source(n, "get_revenue", f"r{n}", 1, {"channel": "webshop", "quarter": q}, {"quarter": q, "revenue_eur": eur})
        for n, q, eur in ((1, "2025-Q4", 2_400_000), (2, "2026-Q1", 2_280_000))
    ]
    question = "How did the webshop do in Q1 against Q4?"
    assert ok("In Q1 the webshop made €2,280,000, against €2,400,000 in Q4.", quarters, question)
    assert ok("De webshop zette in Q1 € 2.280.000 om, tegen € 2.400.000 in Q4.", quarters, question)
    caught("In Q1 the webshop made €2,400,000.", quarters, question)
    caught("The webshop made €2,280,000 in Q4.", quarters, question)
    # A currency code a call was given ("base": "NOK") is a figure's unit, not what the figure is about.
    invoices = {"customer": "Halvorsen AS", "currency": "NOK", "open_amount": 184_500, "invoices": 3}
    fx = [
        Source(1, "get_open_invoices", "i1", 1, {"customer": "Halvorsen AS"}, invoices),
        Source(2, "get_fx_rate", "x2", 2, {"base": "NOK", "quote": "USD"}, {"base": "NOK", "rate": 0.0932}),
    ]
    assert ok("Halvorsen AS has 3 open invoices totalling NOK 184,500, about $17,195 at 0.0932 USD per NOK.", fx)


def test_imperial_and_data_units_convert_and_three_figure_differences():
    route = {"route": "A", "distance_km": 20, "weight_kg": 1.5, "disk_used_mb": 2048, "duration_min": 340}
    routes = [Source(1, "get_route", "r1", 1, {"route": "A"}, route)]
    for answer in ("Route A is 12.4 miles long.", "The parcel weighs 3.3 lb.", "Disk use is about 2 GB.",
                   "It takes 340 minutes, about 5.7 hours."):  # fmt: skip
        assert ok(answer, routes)
    for answer in ("Route A is 13.4 miles long.", "The parcel weighs 3.6 lb.", "Disk use is about 3 GB."):
        caught(answer, routes)
    budget = {"team": "web", "budget_keur": 30, "spent_keur": 21.5, "committed_keur": 4}
    budgets = [Source(1, "get_budget", "b1", 1, {"team": "web"}, budget)]
    text = "Web hat 30 k€ Budget, 21,5 k€ ausgegeben und 4 k€ gebunden: {} k€ sind noch frei."
    assert ok(text.format("4,5"), budgets)
    caught(text.format("5,5"), budgets)


def test_german_compound_superlatives_and_min_as_a_unit():
    branches = [
        Source(n, "get_branch", f"b{n}", 1, {"branch": city}, {"branch": city, "revenue_eur": eur, "wait_min": wait})
        for n, city, eur, wait in ((1, "Köln", 812_000, 12), (2, "Bonn", 455_000, 7), (3, "Essen", 630_000, 9))
    ]
    assert ok("Die umsatzstärkste Filiale ist Köln mit 812.000 €.", branches)
    caught("Die umsatzstärkste Filiale ist Essen mit 630.000 €.", branches)
    caught("Die umsatzschwächste Filiale ist Essen mit 630.000 €.", branches)
    assert ok("In Essen wartet man 9 min, in Bonn 7 min.", branches)


def test_a_change_said_to_rise_or_fall_goes_that_way():
    scores = [
        Source(1, "get_score", "s1", 1, {"exam": "spring"}, {"exam": "spring", "math": 128}),
        Source(2, "get_score", "s2", 1, {"exam": "autumn"}, {"exam": "autumn", "math": 134}),
    ]
    for answer in (
        "数学从上次的134分变成了这次的128分，下降了6分。",
        "Math went from 134 to 128, down 6 points.",
        "Die Punkte sind von 134 auf 128 gesunken, um 6.",
        "Math: 134 before, 128 now, 6 points lower.",
    ):
        assert ok(answer, scores)
    for answer in (
        "数学从上次的134分变成了这次的128分，提高了6分。",
        "Math went from 134 to 128, up 6 points.",
        "Die Punkte sind von 134 auf 128 gestiegen, um 6.",
        "De 128 à 134 : en baisse de 6 points.",
    ):
        caught(answer, scores)


def test_the_askers_own_figure_converted_and_rates_per_night_or_per_one():
    bags = [Source(1, "get_bags", "b1", 1, {"flight": "DL 161"}, {"flight": "DL 161", "max_weight_lb": 50})]
    question = "Mijn koffer weegt 21,5 kg, mag hij mee op DL 161?"
    assert ok("Je koffer van 21,5 kg is ongeveer 47,4 lb; de limiet is 50 lb.", bags, question)
    caught("Je koffer van 21,5 kg is ongeveer 42 lb; de limiet is 50 lb.", bags, question)
    stay = {"hotel": "Seeblick", "check_in": "2026-06-12", "check_out": "2026-06-16", "total_eur": 716}
    hotel = [Source(1, "get_booking", "h1", 1, {"hotel": "Seeblick"}, stay)]
    assert ok("Vom 12. bis 16. Juni 2026 sind es vier Nächte, für 716 € also 179 € pro Nacht.", hotel)
    caught("Vom 12. bis 16. Juni 2026 sind es fünf Nächte, für 716 € also 143 € pro Nacht.", hotel)
    quote = [Source(1, "get_hotel_quote", "q1", 1, {"city": "Milano"}, {"city": "Milano", "night_eur": 142})]
    assert ok("L'Hotel costa 142 € a notte, quindi 426 € per tre notti.", quote, "Tre notti a Milano?")
    caught("L'Hotel costa 142 € a notte, quindi 436 € per tre notti.", quote, "Tre notti a Milano?")
    invoice = [
        Source(1, "get_invoice", "i1", 1, {"month": "2026-03"}, {"month": "2026-03", "amount_usd": 12860.40}),
        Source(2, "get_fx_rate", "x2", 1, {"base": "USD", "quote": "EUR"}, {"rate": 0.918}),
    ]
    assert ok("La facture est de 12 860,40 USD ; à 0,918 € pour 1 USD, cela fait environ 11 806 €.", invoice)
    caught("La facture est de 12 860,40 USD ; à 0,918 € pour 1 USD, cela fait environ 11 086 €.", invoice)


def test_dates_in_two_fields_lowercase_months_and_elided_articles():
    booking = {"restaurant": "El Candil", "date": "2026-05-15", "time": "21:30", "guests": 4}
    table = [Source(1, "get_booking", "b1", 1, {"id": "CND-3318"}, booking)]
    assert ok("Mesa para 4 en El Candil el viernes 15 de mayo de 2026 a las 21:30.", table)
    caught("Mesa para 4 en El Candil el jueves 15 de mayo de 2026 a las 21:30.", table)
    caught("Mesa para 4 en El Candil el viernes 15 de mayo de 2026 a las 22:30.", table)
    flight = {"flight": "TO 4021", "departure": "2026-05-03T05:45:00Z", "gate": "B12"}
    orly = [Source(1, "get_flight", "f1", 1, {"flight": "TO 4021"}, flight)]
    assert ok("Votre vol TO 4021 du dimanche 3 mai part à 05:45 UTC, porte B12.", orly)
    caught("Votre vol TO 4021 du samedi 3 mai part à 05:45 UTC, porte B12.", orly)
    hotels = [Source(1, "get_hotel", "h1", 1, {"city": "Milano"}, {"hotel": "Hotel Navigli Suites", "night_eur": 142})]
    assert ok("L'Hotel Navigli Suites costa 142 € a notte.", hotels)
    caught("L'Hotel Brera Suites costa 142 € a notte.", hotels)


def test_an_amount_summed_over_the_items_in_one_state():
    orders = [
        {"id": "XM-5501", "status": "已完成", "amount_cny": 168},
        {"id": "XM-5502", "status": "已退货", "amount_cny": 89},
        {"id": "XM-5503", "status": "已完成", "amount_cny": 256},
        {"id": "XM-5504", "status": "已完成", "amount_cny": 45},
        {"id": "XM-5505", "status": "已退货", "amount_cny": 132},
        {"id": "XM-5506", "status": "已完成", "amount_cny": 310},
    ]
    shop = [Source(1, "list_orders", "o1", 1, {"shop": "小满茶铺"}, {"shop": "小满茶铺", "orders": orders})]
    assert ok("小满茶铺一共有6笔订单，其中2笔已退货，其余4笔已完成，实收金额合计779元。", shop)
    assert ok("Of the 6 orders, 2 were returned (221 CNY); the other 4 came to 779 CNY.", shop)
    caught("小满茶铺一共有6笔订单，其中2笔已退货，其余4笔已完成，实收金额合计799元。", shop)


def test_a_mapping_of_labelled_numbers_and_a_list_of_words_are_lists_too():
    bill = {"account": "huaxing", "categories": {"计算": 58300, "存储": 12450, "网络": 9250}}
    cloud = [Source(1, "get_bill", "b1", 1, {"account": "huaxing"}, bill)]
    assert ok("花得最多的是计算，58,300元；三类合计80,000元。", cloud)
    caught("花得最多的是存储，12,450元。", cloud)
    caught("三类合计78,000元。", cloud)
    reasons = {"orders": 1600, "reasons": {"kapot": 14, "te klein": 38, "te groot": 22, "anders": 26}}
    returns = [Source(1, "get_returns", "r1", 1, {"shop": "Fietskleding"}, reasons)]
    assert ok("In maart kwamen er 100 retouren binnen op 1.600 bestellingen, ruim 6 %.", returns)
    caught("In maart kwamen er 110 retouren binnen op 1.600 bestellingen.", returns)
    form = {"team": "SV Dijkhuizen", "results": ["W", "W", "V", "W", "G", "W", "W", "V", "W", "W"]}
    games = [Source(1, "get_results", "g1", 1, {"team": "SV Dijkhuizen"}, form)]
    assert ok("SV Dijkhuizen won zeven van de laatste tien wedstrijden.", games)
    caught("SV Dijkhuizen won acht van de laatste tien wedstrijden.", games)
    table = [{"team": "Olympique Ruthénois", "played": 24, "won": 16}, {"team": "FC Sablais", "played": 24, "won": 13}]
    league = [Source(1, "get_table", "t1", 1, {"league": "N3"}, {"table": table})]
    assert ok("L'Olympique Ruthénois est en tête. L'équipe a gagné seize de ses vingt-quatre matchs.", league)


def test_names_a_comma_away_shortened_names_and_rain():
    festival = [
        Source(1, "get_sales", "f1", 1, {"festival": "Marea Sonora"}, {"festival": "Marea Sonora", "sold": 8450})
    ]
    assert ok("El Festival Marea Sonora lleva 8.450 abonos vendidos.", festival)
    caught("El Marea Sonora lleva 8.450 abonos, y el Costa Brava Sound, 8.450 entradas.", festival)
    caught("Chez Assurances Rivoli, 8 450 abonnements ont été vendus.", festival)
    farms = [
        Source(n, "get_harvest", f"h{n}", 1, {"farm": farm}, {"farm": farm, "soy_t": tons})
        for n, farm, tons in ((1, "Fazenda Boa Esperança", 3960), (2, "Fazenda Santa Luzia", 2870))
    ]
    assert ok("A Boa Esperança colheu 3.960 toneladas e a Santa Luzia, 2.870 toneladas.", farms)
    caught("A Boa Esperança colheu 2.870 toneladas e a Santa Luzia, 3.960 toneladas.", farms)
    rain = [
        Source(n, "get_rain", f"r{n}", 1, {"city": city}, {"city": city, "total_mm": mm})
        for n, city, mm in ((1, "Londrina", 181), (2, "Maringá", 214), (3, "Cascavel", 167))
    ]
    assert ok("Maringá foi a mais chuvosa, com 214 mm em janeiro.", rain)
    caught("Cascavel foi a mais chuvosa, com 167 mm em janeiro.", rain)
    caught("Cascavel was the wettest city, with 167 mm.", rain)
    air = [
        Source(n, "get_air", f"a{n}", 1, {"city": city}, {"city": city, "pm25": pm})
        for n, city, pm in ((1, "Denver", 18.2), (2, "Portland", 9.1))
    ]
    assert ok("Portland's PM2.5 is 9.1, about half of Denver's 18.2. Half of Denver's.", air)


def test_french_clock_times_and_a_weekday_said_after_its_date():
    slots = {
        "date": "2026-06-09",
        "slots": [{"who": "Dr Morel", "time": "09:00"}, {"who": "Dr Haddad", "time": "14:30"}],
    }
    clinic = [Source(1, "get_slots", "s1", 1, {"clinic": "Saint-Exupéry"}, slots)]
    assert ok("Le 9 juin 2026 tombe un mardi ; le Dr Morel est libre à 9 h 00 et le Dr Haddad à 14 h 30.", clinic)
    caught("Le 9 juin 2026 tombe un mercredi ; le Dr Morel est libre à 9 h 00.", clinic)
    caught("Le 9 juin 2026, le Dr Morel est libre à 9 h 30.", clinic)
