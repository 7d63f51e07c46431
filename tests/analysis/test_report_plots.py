"""Plots that read well (issue 19 item 6): probability scales bounded by 0 and 1, a colour-blind-safe
palette, a caption and alt text for every figure, cautions for random effects on few levels and
for R² without random effects, and a report readable at 1366 px and in print (real Chromium)."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from django.core.management import call_command

from analysis import plots

OKABE_ITO = {c.lower() for c in plots.OKABE_ITO}


def _drawn(monkeypatch):
    """Capture the matplotlib figures a plot function draws (before they become PNG bytes)."""
    drawn = []
    real = plots._png

    def keep(fig):
        drawn.append(fig)
        return real(fig)

    monkeypatch.setattr(plots, "_png", keep)
    return drawn


def _colours(fig) -> set[str]:
    from matplotlib.colors import to_hex

    found = set()
    for ax in fig.axes:
        for line in ax.get_lines():
            if line.get_linestyle() != "--":  # reference lines (a target power) are grey
                found.add(to_hex(line.get_color()))
        for collection in ax.collections:
            found |= {to_hex(c) for c in collection.get_edgecolor()} | {to_hex(c) for c in collection.get_facecolor()}
    return found - {"#808080"}  # the grey joining lines of Figure 4


def test_a_probability_scale_never_draws_an_interval_outside_0_and_1(monkeypatch):
    drawn = _drawn(monkeypatch)
    table = pd.DataFrame({"modality": ["none", "box", "dia"], "estimate": [0.8, 0.5, 0.3],
                          "ci_low": [-1.7, 0.3, 0.1], "ci_high": [2.3, 0.7, 0.5]})
    figure = plots.means_with_ci(table, "modality", title="Eq. (4): soft accuracy of the models on valid items: "
                                 "marginal means by modality", ylabel="soft accuracy", bounded=True)
    ax = drawn[-1].axes[0]
    low, high = ax.get_ylim()
    assert -0.05 < low <= 0 and 1 <= high < 1.05
    segments = np.concatenate([c.get_segments() for c in ax.collections])
    assert segments[:, :, 1].min() >= 0 and segments[:, :, 1].max() <= 1
    markers = {line.get_marker() for line in ax.get_lines()}
    assert {"v", "^"} <= markers  # the cut ends are marked
    assert "cut at the axis" in figure.caption and "∅ (propositional): 0.80 [-1.70, 2.30]" in figure.alt
    assert drawn[-1].axes[0].get_title().count("\n") >= 1  # a long title is wrapped, not clipped
    assert plots.out_of_bounds(table) and not plots.out_of_bounds(table.iloc[1:])


def test_every_plot_uses_the_okabe_ito_palette_with_humans_in_black(monkeypatch):
    drawn = _drawn(monkeypatch)
    levels = ["none", "box", "dia"]
    table = pd.DataFrame([{"agent": agent, "modality": m, "estimate": 0.6, "ci_low": 0.5, "ci_high": 0.7}
                          for agent in ["human", *[f"lm-{k}" for k in range(1, 8)]] for m in levels])
    figure = plots.agents(table, "modality")
    colours = _colours(drawn[-1])
    assert colours <= OKABE_ITO and "#000000" in colours and len(colours) == 8
    human = [line for line in drawn[-1].axes[0].get_lines() if line.get_label() == "human"]
    assert human and human[0].get_color() in ("#000000", "black")
    assert figure.caption and figure.alt.startswith("Dot plot of P(correct) by agent and modality")
    curve = pd.DataFrame([{"factor": "modality", "level": m, "contrast": "lm-1 - human", "n": n, "power": p,
                           "low": p - 0.1, "high": p + 0.05}
                          for m in levels for n, p in [(10, 0.3), (20, 0.6), (40, 0.9)]])
    plots.power_curve(curve, 0.8)
    assert _colours(drawn[-1]) <= OKABE_ITO


def test_a_report_with_two_models_says_what_limits_its_fits_and_captions_every_figure(
        r_stack, make_study, tmp_path):
    study = make_study(models=2, participants=8, model_noise=0.5)  # no separation: glmer fits, not blme's (slower)
    call_command("analyze", study.slug, "--out", str(tmp_path))
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    images = re.findall(r"<figure><img alt='([^']*)' src='data:image/png;base64,[^']+'><figcaption>([^<]+)"
                        r"</figcaption></figure>", html)
    assert len(images) == html.count("<img") >= 8
    assert all(len(alt) > 40 and len(caption) > 40 for alt, caption in images)
    assert "The random effects by model rest on 2 levels (fewer than 5)" in html
    for name in ("eq4_emmeans_modality", "eq4_emmeans_argform", "eq5_emmeans_modality"):
        table = pd.read_csv(tmp_path / "tables" / f"{name}.csv")
        if plots.out_of_bounds(table):  # said beside the plot, and the table keeps the estimate as it is
            assert "reach beyond [0, 1]" in html
    (tmp_path / "report.html").write_text(html, encoding="utf-8")


def test_r2_says_when_it_leaves_out_the_random_effects(r_stack):
    from analysis import rbridge as rb

    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"y": rng.normal(size=60), "x": rng.normal(size=60),
                          "g": pd.Categorical([f"g{k % 3}" for k in range(60)])})
    frame["y"] = frame["y"] - frame.groupby("g", observed=True)["y"].transform("mean")  # no group variance at all
    singular = rb.r2(rb.fit("y ~ x + (1 | g)", frame))
    assert singular["random_effects_omitted"] is True
    frame["y"] = frame["y"] + frame["g"].cat.codes * 3.0  # a clear group effect
    fine = rb.r2(rb.fit("y ~ x + (1 | g)", frame))
    assert fine["random_effects_omitted"] is False and 0 <= fine["marginal"] <= fine["conditional"] <= 1
    assert singular["marginal"] >= 0 and np.isnan(singular["conditional"])


@pytest.mark.django_db
def test_the_report_reads_at_1366_px_and_prints_without_horizontal_scrolling(r_stack, make_study, tmp_path):
    from tests.e2e.chromium import ARGS, CHROMIUM, playwright_or_skip

    study = make_study(models=3, participants=8, appendix=True)
    call_command("analyze", study.slug, "--out", str(tmp_path))
    with playwright_or_skip()() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
        page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:")
                   else route.abort())
        page.goto((tmp_path / "report.html").as_uri())
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 1366, f"the report is {width} px wide at 1366"
        assert page.evaluate("[...document.images].every(i => i.alt && i.closest('figure').querySelector('figcaption'))")
        assert page.evaluate("[...document.images].every(i => i.getBoundingClientRect().right <= 1366)")
        page.emulate_media(media="print")
        assert page.evaluate("getComputedStyle(document.querySelector('.scroll')).overflowX") == "visible"
        page.set_viewport_size({"width": 1000, "height": 700})
        width = page.evaluate("document.documentElement.scrollWidth")
        browser.close()
    assert width <= 1000 + 1, f"the printed report is {width} px wide"


# ---- issue 47 item 6: readable as files: legends off the data, plain tick labels, integer counts, SVG and PNG

SCIENTIFIC = ("×10", "\\times", "e+", "e-0", "10^{")


def _every_plot() -> dict[str, object]:
    """Each plot function on tables shaped as the report makes them: wide and narrow ranges, three models, a
    log-scaled power curve over sizes within one decade (where matplotlib labels minor ticks "3×10¹")."""
    levels = ["none", "box", "dia"]
    agents = pd.DataFrame([{"agent": a, "modality": m, "estimate": 0.2 + 0.3 * k, "ci_low": 0.05 + 0.3 * k,
                            "ci_high": 0.35 + 0.3 * k} for a in ["human", "lm-1", "lm-2"] for k, m in enumerate(levels)])
    table1 = pd.DataFrame([{"respondent": r, "measure": "soft accuracy" if r != "human" else "proportion correct",
                            "factor": "modality", "level": m, "accuracy": 0.9 - 0.3 * k, "ci_low": 0.8 - 0.3 * k,
                            "ci_high": 0.98 - 0.3 * k} for r in ["human", "lm-1", "lm-2"] for k, m in enumerate(levels)])
    curve = pd.DataFrame([{"factor": f, "level": lv, "contrast": c, "n": n, "power": p, "low": p - 0.08,
                           "high": min(1, p + 0.05)}
                          for f, lv in [("overall", "overall"), ("modality", "none"), ("modality", "box")]
                          for c in ["lm-1 - human", "lm-2 - human"]
                          for n, p in [(10, 0.2), (20, 0.45), (30, 0.7), (40, 0.85), (60, 0.93)]])
    effects = pd.DataFrame([{"grp": g, "term": t, "mixed": 0.1 * k, "mixed_ci_low": 0.1 * k - 0.2,
                             "mixed_ci_high": 0.1 * k + 0.2, "random": 0.05 * k, "ci_low": -0.3, "ci_high": 0.3}
                            for k, g in enumerate(["lm-1", "lm-2", "lm-3"]) for t in ["perplexity_z", "(Intercept)"]])
    sequents = pd.DataFrame([{"model": m, "perplexity_real": 1000 + 300 * k, "confidence_real": 0.9 - 0.1 * k,
                              "perplexity_nonsense": 25000 + 4000 * k, "confidence_nonsense": 0.2 + 0.1 * k}
                             for m in ["lm-1", "lm-2"] for k in range(6)])
    choices = pd.DataFrame({"item_id": np.repeat(np.arange(12), 5), "chose_target": np.tile([1, 0, 1, 1, 0], 12),
                            "p_target": np.repeat(np.linspace(0.1, 0.9, 12), 5)})
    row = {"model": "lm-1", "choice_r": 0.4, "choice_r_low": 0.1, "choice_r_high": 0.6, "ceiling": 0.7,
           "ceiling_low": 0.5, "ceiling_high": 0.8}
    return {
        "means": lambda: plots.means_with_ci(agents[agents.agent == "human"], "modality", title="Eq. (6): means",
                                             ylabel="P(correct)", bounded=True),
        "overview": lambda: plots.accuracy_overview(table1, ("modality",)),
        "agents": lambda: plots.agents(agents, "modality", title="Humans vs each model"),
        "power": lambda: plots.power_curve(curve, 0.8),
        "random_effects": lambda: plots.random_effects(effects, {"lm-1": 1, "lm-2": 2, "lm-3": 3}, title="Eq. (4)"),
        "sequents": lambda: plots.sequents(sequents),
        "choices": lambda: plots.choice_scatter(choices, row),
    }


def _data_points(ax) -> np.ndarray:
    """Every plotted point of the axes' data artists (lines, markers, interval segments, bands) in display
    coordinates, reference lines (a target, a diagonal, a zero line) left out."""
    found = []
    for line in ax.get_lines():
        xy = line.get_xydata()
        if line.get_linestyle() == "--" or (len(xy) == 2 and (np.ptp(xy[:, 0]) == 0 or np.ptp(xy[:, 1]) == 0)
                                            and line.get_linestyle() not in ("None", "")):
            continue
        found.append(ax.transData.transform(xy))
    for collection in ax.collections:
        for path in collection.get_paths():
            found.append(collection.get_transform().transform(path.vertices))
        offsets = collection.get_offsets()
        if len(offsets):
            found.append(collection.get_offset_transform().transform(offsets))
    return np.concatenate(found) if found else np.empty((0, 2))


def test_every_plot_keeps_its_legend_off_the_data_and_its_tick_labels_plain(monkeypatch):
    """After a draw: no legend's window extent holds a plotted point; no tick label (major or minor) and no offset
    text is in scientific notation; the power curve's sizes are plain integers and its legend gives each contrast's
    participants needed as an integer; every figure has PNG and SVG bytes, the SVG's text kept as text."""
    from xml.etree import ElementTree

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    drawn = _drawn(monkeypatch)
    captions = []
    for name, make in _every_plot().items():
        figure = make()
        fig = drawn[-1]
        FigureCanvasAgg(fig).draw()  # the figure as drawn for its PNG (closed, so on a canvas of its own)
        renderer = fig.canvas.get_renderer()
        legends = [ax.get_legend() for ax in fig.axes if ax.get_legend()] + list(fig.legends)
        for legend in legends:
            box = legend.get_window_extent(renderer)
            for ax in fig.axes:
                points = _data_points(ax)
                inside = ((points[:, 0] > box.x0) & (points[:, 0] < box.x1) & (points[:, 1] > box.y0)
                          & (points[:, 1] < box.y1))
                assert not inside.any(), f"{name}: the legend covers {int(inside.sum())} plotted point(s)"
        for ax in fig.axes:
            labels = [t.get_text() for axis in (ax.xaxis, ax.yaxis) for minor in (False, True)
                      for t in axis.get_ticklabels(minor=minor)]
            labels += [ax.xaxis.get_offset_text().get_text(), ax.yaxis.get_offset_text().get_text()]
            assert not [t for t in labels if any(s in t for s in SCIENTIFIC)], (name, labels)
        assert figure.png.startswith(b"\x89PNG\r\n\x1a\n"), name
        svg = ElementTree.fromstring(figure.svg)
        assert svg.tag.endswith("svg"), name
        texts = "".join(t.text or "" for t in svg.iter() if t.tag.endswith("text") or t.tag.endswith("tspan"))
        assert texts and not any(s in texts for s in ("×10", "e+")), name
        captions.append(figure.caption)
        if name == "power":
            ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
            assert ticks == ["10", "20", "30", "40", "60"]
            entries = [t.get_text() for ax in fig.axes for t in ax.get_legend().get_texts()]
            assert "overall: lm-1 - human (needed: 60)" in entries and "overall: lm-2 - human (needed: 60)" in entries
            assert all(re.search(r"\(needed: \d+\)$", e) for e in entries), entries  # integers, never 60.0
    far = pd.DataFrame([{"factor": "overall", "level": "overall", "contrast": "lm-1 - human", "n": n, "power": 0.3,
                         "low": 0.2, "high": 0.4} for n in (10, 20)])
    plots.power_curve(far, 0.8)
    assert [t.get_text() for t in drawn[-1].axes[0].get_legend().get_texts()] == [
        "overall: lm-1 - human (needed: more than 20)"]
    assert len(set(captions)) == len(captions)


def test_the_same_plot_in_two_sections_gets_two_captions():
    table = pd.DataFrame([{"agent": a, "modality": m, "estimate": 0.5, "ci_low": 0.4, "ci_high": 0.6}
                          for a in ["human", "lm-1"] for m in ["none", "box"]])
    like = plots.agents(table, "modality", title="Humans vs each model")
    every = plots.agents(table, "modality", title="Sensitivity analysis: every item")
    assert like.caption != every.caption and like.caption.startswith("Humans vs each model: ")


def test_counts_are_written_and_shown_as_integers(tmp_path):
    """A count the codebook declares integer (participants needed, the largest size tried) is 10 in the CSV and on the
    page, not 10.0, and stays blank where there is none (no size reached the target)."""
    from analysis import html
    from analysis.report import _write_table

    needed = pd.DataFrame({"contrast": ["lm-1 - human", "lm-2 - human"], "needed": [10.0, float("nan")],
                           "max_n": [40.0, 40.0], "power_at_max": [1.0, 0.5]})
    _write_table(needed, tmp_path / "power_needed.csv")
    lines = (tmp_path / "power_needed.csv").read_text().splitlines()
    assert lines[1:] == ["lm-1 - human,10,40,1.0", "lm-2 - human,,40,0.5"]
    page = html._table(needed.assign(needed=[12000.0, float("nan")]))
    assert "<td>12000</td>" in page and "e+04" not in page and "<td>40</td>" in page
