"""The controller's public surface: a deliberate __all__, light imports, renderings."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

import agentloops
import agentloops.controller as controller
from agentloops.controller import STOP_STATUSES, run_scenario


def test_all_is_a_small_public_surface_and_every_resolved_name_loads_from_its_module():
    assert set(controller.__all__) == set(controller.PUBLIC) <= set(controller._EXPORTS)
    assert 18 <= len(controller.__all__) <= 24 and len(set(controller.PUBLIC)) == len(controller.PUBLIC)
    assert controller.__all__ == sorted(controller.__all__, key=lambda n: (not n.isupper(), n))
    for name in controller._EXPORTS:
        value = getattr(controller, name)
        assert type(value).__name__ != "module", name  # no submodule shadows a public name
        if isinstance(value, type) or inspect.isfunction(value):
            assert value.__module__ == f"agentloops.controller.{controller._EXPORTS[name]}", name
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        controller.nope  # noqa: B018
    assert set(controller.__all__) <= set(dir(controller))


def test_importing_the_controller_loads_no_heavy_libraries_and_the_core_does_not_load_it():
    code = ("import sys, agentloops; assert 'agentloops.controller' not in sys.modules; "
            "import agentloops.controller; assert 'agentloops.controller.controller' not in sys.modules; "
            "from agentloops.controller import run_scenario; run_scenario('weather-normal'); "
            "heavy = [m for m in ('pandas', 'matplotlib', 'ipywidgets') if m in sys.modules]; "
            "assert not heavy, heavy")
    subprocess.run([sys.executable, "-c", code], check=True)
    assert "controller" not in agentloops.__all__


def test_results_render_as_text_and_html():
    run = run_scenario("weather-timeout-once")
    assert "weather-timeout-once" in str(run) and "<table>" in run._repr_html_()
    assert "[succeeded]" in str(run.stop) and "<pre" in run.stop._repr_html_()
    assert "<table>" in run.trace._repr_html_() and f"trace {run.trace_id} (weather-timeout-once" in str(run.trace)
    assert repr(run).startswith("<ControllerRun weather-timeout-once")
    table = controller.stop_statuses()
    assert "<table>" in table._repr_html_() and table.to_frame().shape[0] == len(STOP_STATUSES) == 9


def test_every_run_has_its_own_id_and_keeps_the_scenario_name_as_its_label():
    first, second = run_scenario("weather-normal"), run_scenario("weather-normal")
    assert first.trace_id != second.trace_id and first.label == second.label == "weather-normal"
    assert len(first.trace_id) == 12 and int(first.trace_id, 16) >= 0  # uuid-like, not the scenario name
    assert all(c.call_id.startswith(first.trace_id) for c in first.calls)
    seeded = [run_scenario("weather-normal", trace_id=controller.new_trace_id(7)).trace_id for _ in range(2)]
    assert seeded[0] == seeded[1] != controller.new_trace_id(8)  # a seed gives a reproducible id


def test_a_wide_table_wraps_its_long_cells_and_scrolls_inside_its_box():
    from agentloops.controller.teaching.evidence import budget_basis
    from agentloops.controller.vocabulary.render import CELL_MAX_EM

    page = budget_basis("weather_compare")._repr_html_()
    assert page.startswith("<div class='agentloops-wide' style='overflow-x:auto;max-width:100%'>")
    cells = page.split("<td ")[1:]
    assert cells and all(f"white-space:normal;max-width:{CELL_MAX_EM}em'" in cell for cell in cells)
    assert max(len(cell) for cell in cells) > CELL_MAX_EM * 2  # there is a long basis sentence to wrap
