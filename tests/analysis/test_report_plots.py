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
