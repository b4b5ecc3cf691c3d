"""DemoWeather: the `get_weather` tool over a fixed YAML table of cities (seed 000's 上海/北京 example).

Each city has a canonical name and aliases in other scripts (上海 = Shanghai = shang hai), compared after
trimming, NFC and case-folding. An unknown city is `CITY_NOT_FOUND`: with the nearest known name as
`did_you_mean` when one is close (上嗨 → 上海), else — for CJK input — `suggested_action: retry_with_pinyin`.
"""

from __future__ import annotations

import asyncio
import difflib
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from agent.errors import ConfigError, ErrorCode, ToolError
from agent.tools.base import FunctionTool, Tool
from agent.tools.builtin.options import BuiltinOptions, load_data_file

NAME = "get_weather"
DEFAULT_FILE = "weather.yaml"
DEFAULT_TIMEOUT_S = 5.0
SUGGESTION_CUTOFF = 0.5  # difflib ratio: 上嗨 vs 上海 is exactly 0.5
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_GLUE = re.compile(r"[\s'’\-.]+")
_CITY_SUFFIXES = ("市", " city")


@dataclass(frozen=True)
class CityWeather:
    name: str
    aliases: tuple[str, ...]
    temp_c: float
    condition: str
    humidity: int
    wind_kph: float

    def report(self) -> dict[str, Any]:
        return {
            "city": self.name,
            "temp_c": _plain(self.temp_c),
            "condition": self.condition,
            "humidity": self.humidity,
            "wind_kph": _plain(self.wind_kph),
        }


class DemoWeather:
    """A weather provider that knows a fixed table of cities; `latency_s` simulates a slow one."""

    def __init__(self, cities: Sequence[CityWeather], *, latency_s: float = 0.0, slow_calls: int | None = None) -> None:
        self._latency_s = latency_s
        self._slow_left = slow_calls  # how many calls are slow (None: every one), for a timeout that passes
        self._by_name: dict[str, CityWeather] = {}
        self._spelling: dict[str, str] = {}  # canonical form → the name as written, for did_you_mean
        for city in cities:
            for name in (city.name, *city.aliases):
                for key in {canonical_city(name), _compact(canonical_city(name))}:
                    self._by_name.setdefault(key, city)
                self._spelling.setdefault(canonical_city(name), name)

    @classmethod
    def from_data(cls, data: Any, *, origin: str, latency_s: float = 0.0, slow_calls: int | None = None) -> DemoWeather:
        if not isinstance(data, dict) or not isinstance(data.get("cities"), list):
            raise ConfigError(f"{origin}: expected a mapping with `cities:` (a list of cities)")
        cities = []
        for index, spec in enumerate(data["cities"]):
            try:
                cities.append(
                    CityWeather(
                        name=str(spec["name"]),
                        aliases=tuple(str(a) for a in spec.get("aliases") or ()),
                        temp_c=float(spec["temp_c"]),
                        condition=str(spec["condition"]),
                        humidity=int(spec["humidity"]),
                        wind_kph=float(spec["wind_kph"]),
                    )
                )
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise ConfigError(
                    f"{origin}: cities[{index}] needs name, temp_c, condition, humidity and wind_kph ({exc!r})"
                ) from None
        return cls(cities, latency_s=latency_s, slow_calls=slow_calls)

    async def current(self, city: str) -> dict[str, Any]:
        """The current weather of `city`; `ToolError(CITY_NOT_FOUND)` with a suggestion when unknown."""
        if self._latency_s > 0 and self._slow_left != 0:
            if self._slow_left is not None:
                self._slow_left -= 1
            await asyncio.sleep(self._latency_s)
        wanted = canonical_city(city)
        if not wanted:
            raise ToolError(ErrorCode.INVALID_ARGS, "the city name is empty")
        found = self._find(wanted)
        if found is None:
            raise self._not_found(city.strip(), wanted)
        return found.report()

    def _find(self, wanted: str) -> CityWeather | None:
        candidates = [wanted, _compact(wanted)]
        candidates += [wanted.removesuffix(s).strip() for s in _CITY_SUFFIXES if wanted.endswith(s)]
        return next((self._by_name[c] for c in candidates if c in self._by_name), None)

    def _not_found(self, city: str, wanted: str) -> ToolError:
        close = difflib.get_close_matches(wanted, list(self._spelling), n=1, cutoff=SUGGESTION_CUTOFF)
        if close:
            suggestion = self._spelling[close[0]]
            return ToolError(
                ErrorCode.CITY_NOT_FOUND,
                f"no weather for {city!r}: unknown city; did you mean {suggestion}?",
                details={"city": city, "did_you_mean": suggestion},
                suggested_action="retry_with_suggestion",
            )
        if _CJK.search(city):
            return ToolError(
                ErrorCode.CITY_NOT_FOUND,
                f"no weather for {city!r}: unknown city; try its pinyin or English name (e.g. Shanghai)",
                details={"city": city},
                suggested_action="retry_with_pinyin",
            )
        return ToolError(
            ErrorCode.CITY_NOT_FOUND,
            f"no weather for {city!r}: this provider does not know that city",
            details={"city": city},
            suggested_action="change_arguments",
        )


def canonical_city(name: str) -> str:
    """How city names compare: NFC, trimmed, case-folded, inner spaces collapsed."""
    return " ".join(unicodedata.normalize("NFC", name).casefold().split())


def _plain(value: float) -> float | int:
    return int(value) if value.is_integer() else value  # 28, not 28.0


def _compact(name: str) -> str:
    return _GLUE.sub("", name)  # "New York" = "newyork", "Xi'an" = "xian"


class WeatherArgs(BaseModel):
    city: str = Field(
        min_length=1,
        max_length=100,
        description="One city, in Chinese or English/pinyin, e.g. 上海 or Shanghai. One city per call.",
    )


def weather_tool(provider: DemoWeather, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> FunctionTool:
    async def get_weather(args: WeatherArgs) -> dict[str, Any]:
        return await provider.current(args.city)

    return FunctionTool(
        NAME,
        "Current weather for one city: temperature (°C), condition, humidity (%) and wind (km/h).",
        WeatherArgs,
        get_weather,
        timeout_s=timeout_s,
    )


class WeatherOptions(BuiltinOptions):
    file: str = DEFAULT_FILE
    latency_s: float = Field(0.0, ge=0)  # simulate a slow provider
    slow_calls: int | None = Field(None, ge=0)  # only the first N calls are slow (a timeout, then a recovery)


def build_get_weather(options: Mapping[str, Any], data_dir: Path) -> Tool:
    parsed = WeatherOptions.parse(options, builtin=NAME)
    data = load_data_file(data_dir, parsed.file, builtin=NAME)
    provider = DemoWeather.from_data(
        data, origin=f"builtin {NAME!r}: {parsed.file}", latency_s=parsed.latency_s, slow_calls=parsed.slow_calls
    )
    return weather_tool(provider)
