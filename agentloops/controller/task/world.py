"""The stub world the controller scenarios run in: data, and the tools over it.

Nothing here touches a network or a real system; write actions (a refund, a
database row) only change nothing but a returned dict. Handlers raise
:class:`~agentloops.controller.vocabulary.tools.ToolFailure` for classified failures and
plain exceptions only for bugs, exactly like a real backend would.
"""

from __future__ import annotations

from typing import Any

from agentloops.controller.vocabulary.readback import readable
from agentloops.controller.vocabulary.tools import Param, ToolFailure, ToolSpec
from agentloops.i18n import N_, Phrase

WEATHER: dict[str, dict[str, Any]] = {
    "Shanghai": {"temp_c": 24, "conditions": N_("sunny")},
    "Beijing": {"temp_c": 18, "conditions": N_("cloudy")},
    "Guangzhou": {"temp_c": 29, "conditions": N_("showers")},
    "Shenzhen": {"temp_c": 28, "conditions": N_("humid")},
    "Chengdu": {"temp_c": 21, "conditions": N_("overcast")},
    "Hangzhou": {"temp_c": 23, "conditions": N_("light rain")},
    "Wuhan": {"temp_c": 26, "conditions": N_("sunny")},
    "Xi'an": {"temp_c": 17, "conditions": N_("windy")},
}
"""Today's weather per city (°C)."""
for _weather in WEATHER.values():
    readable(_weather["conditions"])  # a fact's summary in a trace line is read back with its conditions

ORDERS: dict[str, dict[str, Any]] = {
    "A-1042": {"status": N_("shipped"), "eta": "2024-06-03", "total": 59.0},
    "B-2001": {"status": N_("processing"), "eta": "2024-06-07", "total": 120.0},
}
for _order in ORDERS.values():
    readable(_order["status"])  # so is an order's status
DOCUMENTS: dict[str, dict[str, Any]] = {
    "A": {"title": "Loop design notes", "published": "2024-03-01", "version": "1.2"},
    "C": {"title": "Retry budget memo", "published": "2024-05-20", "version": "2.0"},
}
RECALLS: dict[str, list[dict[str, Any]]] = {
    "kettle-k2": [{"notice": "R-77", "issued": "2024-02-11", "issue": "lid latch may open"}],
}

_PARAGRAPH = (
    "{title}. This source discusses why agent loops fail to stop: missing completion conditions, "
    "tool results without meaning, state that the model cannot see, and error policies that only retry. "
    "It recommends budgets per task type, action fingerprints and stop statuses that tell the user what "
    "is done and what is missing. "
)
SOURCES: dict[str, dict[str, Any]] = {
    sid: {"source_id": sid, "title": title, "published": year, "text": (_PARAGRAPH.format(title=title) * 6).strip()}
    for sid, title, year in (
        ("s1", N_("Stopping conditions for ReAct agents"), 2024),
        ("s2", N_("Budgets and fuses in production agents"), 2023),
        ("s3", N_("Tracing tool-calling loops"), 2024),
        ("s4", N_("Parallel tool calls and late results"), 2024),
        ("s5", N_("Compaction without amnesia"), 2023),
        ("s6", N_("Error routing for tool failures"), 2024),
        ("s7", N_("Human handoff in agent systems"), 2023),
        ("s8", N_("Replay-based regression tests"), 2024),
    )
}
"""Research sources with long texts (about 400 tokens each), to exercise out-of-context storage."""


def _get_weather(args: dict[str, Any]) -> Any:
    city = _city(args["city"])
    return {"city": city, **WEATHER[city]}


def _weather_backup(args: dict[str, Any]) -> Any:
    city = _city(args["city"])
    data = WEATHER[city]
    return {"city": city, "temp_f": round(data["temp_c"] * 9 / 5 + 32, 1), "sky": data["conditions"]}


def _city(name: str) -> str:
    for city in WEATHER:
        if city.casefold() == name.strip().casefold():
            return city
    raise ToolFailure("not_found", Phrase(N_("no weather station for {name!r}"), name=name))


def _lookup_order(args: dict[str, Any]) -> Any:
    order = ORDERS.get(args["order_id"])
    if order is None:
        raise ToolFailure("not_found", Phrase(N_("no order {order_id}"), order_id=args["order_id"]))
    return {"order_id": args["order_id"], "status": order["status"], "eta": order["eta"]}


def _issue_refund(args: dict[str, Any]) -> Any:
    return {"refund_id": f"RF-{args['order_id']}", "order_id": args["order_id"], "amount": args["amount"]}


def _db_write(args: dict[str, Any]) -> Any:
    return {"written": True, "table": args["table"], "row": dict(args["values"])}


def _read_metadata(args: dict[str, Any]) -> Any:
    document = DOCUMENTS.get(args["document_id"])
    if document is None:
        raise ToolFailure("not_found", Phrase(N_("no document {document_id!r} in the archive"),
                                              document_id=args["document_id"]))
    return {"document_id": args["document_id"], **document}


def _search_recalls(args: dict[str, Any]) -> Any:
    return list(RECALLS.get(args["product"], []))


def _fetch(args: dict[str, Any]) -> Any:
    source = SOURCES.get(args["source_id"])
    if source is None:
        raise ToolFailure("not_found", Phrase(N_("no source {source_id!r}"), source_id=args["source_id"]))
    return dict(source)


_CITY = Param("string", description="city name, e.g. Beijing", normalize="casefold")

TOOLS: dict[str, ToolSpec] = {spec.name: spec for spec in (
    ToolSpec("get_weather", "today's weather for a city (°C)", {"city": _CITY}, _get_weather,
             latency_s=0.4, timeout_s=5.0, backend="met-service", fallback="weather_backup", source="met-service",
             output_fields=("city", "temp_c", "conditions")),
    ToolSpec("weather_backup", "today's weather from an independent provider (°F)", {"city": _CITY}, _weather_backup,
             latency_s=0.6, timeout_s=5.0, backend="open-weather", source="open-weather",
             output_fields=("city", "temp_f", "sky")),
    ToolSpec("lookup_order", "status and delivery date of one order",
             {"order_id": Param("string", pattern=r"[A-Z]-\d{4}",
                                ask_user=N_("Which order do you mean? Please send its order id "
                                            "(it looks like A-1042)."))},
             _lookup_order, latency_s=0.3, backend="orders-db", source="orders-db",
             output_fields=("order_id", "status", "eta")),
    ToolSpec("issue_refund", "refund an amount on an order",
             {"order_id": Param("string", pattern=r"[A-Z]-\d{4}"), "amount": Param("number")}, _issue_refund,
             side_effects=True, capability="payments:refund", checks_permission=True, risk="high",
             latency_s=0.8, backend="payments", source="payments"),
    ToolSpec("db_write", "write a row into an internal table (admin)",
             {"table": Param("string"), "values": Param("object")}, _db_write,
             side_effects=True, capability="db:admin", checks_permission=False, latency_s=0.2, backend="orders-db",
             source="orders-db"),
    ToolSpec("read_metadata", "title, version and publication date of an archived document",
             {"document_id": Param("string")}, _read_metadata, latency_s=0.3, backend="archive", source="archive"),
    ToolSpec("search_recalls", "recall notices for a product (an empty list means none)",
             {"product": Param("string", normalize="casefold")}, _search_recalls, latency_s=0.5,
             backend="recall-registry", source="recall-registry"),
    ToolSpec("fetch", "the full text of a research source", {"source_id": Param("string")}, _fetch,
             latency_s=1.0, timeout_s=15.0, backend="library", source="library",
             output_fields=("source_id", "title", "published", "text")),
)}
"""Every stub tool, by name; a task type picks the ones it offers."""
