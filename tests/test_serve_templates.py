"""Voila's page templates compiled once per server (playground/serving/templates.py)."""
from __future__ import annotations

import asyncio
from pathlib import Path

import nbformat
import voila.notebook_renderer
from jinja2 import DictLoader, Environment
from voila.exporter import VoilaExporter
from voila.paths import collect_template_paths

from playground.serving import templates
from playground.serving.templates import CompiledOnceExporter, MemoryBytecodeCache

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "playground.ipynb"


def _exporter(cls: type) -> VoilaExporter:
    return cls(template_paths=collect_template_paths(["voila", "nbconvert"], "lab"), template_name="lab",
               theme="light", base_url="/base/", show_margins=False, mathjax_url="mathjax.js")


def _page(exporter: VoilaExporter, kernel_id: str, output: str) -> str:
    """The page as Voila renders it, with a kernel id and the cell's output standing in for a kernel's."""
    nb = nbformat.read(NOTEBOOK, as_version=4)

    async def kernel_start(nb):
        return kernel_id

    async def notebook_execute(nb, kid):
        return None

    async def cells(nb, kid):
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs = [nbformat.v4.new_output("display_data", data={"text/html": output})]
            yield cell

    async def render() -> str:
        context = {"frontend": "voila", "main_js": "voila.js", "kernel_start": kernel_start,
                   "notebook_execute": notebook_execute, "cell_generator": cells, "progressive_rendering": False}
        resources = {"base_url": "/base/", "theme": "light", "template": "lab", "metadata": {"name": "playground"},
                     "page_config": {}}
        parts = [html async for html, _ in exporter.generate_from_notebook_node(
            nb, resources=resources, extra_context=context, page_config={})]
        return "".join(parts)

    return asyncio.run(render())


def test_a_page_from_compiled_templates_is_the_page_voila_renders_with_its_own_kernel_and_output():
    templates.SHARED_CACHE.clear()
    plain = _page(_exporter(VoilaExporter), "kernel-a", "<b>page a</b>")
    first = _page(_exporter(CompiledOnceExporter), "kernel-a", "<b>page a</b>")
    compiled = templates.SHARED_CACHE.compiled
    second = _page(_exporter(CompiledOnceExporter), "kernel-b", "<b>page b</b>")
    assert first == plain
    assert compiled > 0 and templates.SHARED_CACHE.compiled == compiled  # the second page compiled nothing
    assert second == _page(_exporter(VoilaExporter), "kernel-b", "<b>page b</b>")
    assert "page b" in second and "page a" not in second


def test_a_template_changed_on_disk_is_compiled_again_and_sync_and_async_code_are_kept_apart():
    cache = MemoryBytecodeCache()
    sources = {"t.html": "one {{ x }}"}
    env = Environment(loader=DictLoader(sources), bytecode_cache=cache)
    assert env.get_template("t.html").render(x=1) == "one 1"
    sources["t.html"] = "two {{ x }}"
    env = Environment(loader=DictLoader(sources), bytecode_cache=cache)
    assert env.get_template("t.html").render(x=1) == "two 1"
    both = Environment(loader=DictLoader(sources), bytecode_cache=cache, enable_async=True)
    assert asyncio.run(both.get_template("t.html").render_async(x=2)) == "two 2"
    assert cache.compiled == 3


def test_install_points_voilas_renderer_at_the_exporter(monkeypatch):
    monkeypatch.setattr(voila.notebook_renderer, "VoilaExporter", VoilaExporter)
    templates.install()
    assert voila.notebook_renderer.VoilaExporter is CompiledOnceExporter
