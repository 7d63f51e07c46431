"""Golden values: published lme4 fits on datasets that ship with lme4 (Bates et al. 2015)."""
import pytest


def _dataset(rbridge, name):
    with rbridge.r_session() as r:
        return rbridge.to_pandas(r, r.ro.r(f"lme4::{name}"))


def test_sleepstudy_lmer_matches_lme4(r_stack):
    data = _dataset(r_stack, "sleepstudy")
    fit = r_stack.fit("Reaction ~ Days + (Days | Subject)", data)
    estimates = dict(zip(fit.coefs["term"], fit.coefs["Estimate"]))
    assert estimates["(Intercept)"] == pytest.approx(251.405, abs=5e-4)
    assert estimates["Days"] == pytest.approx(10.467, abs=5e-4)
    assert fit.groups == {"Subject": 18} and fit.n_obs == 180
    assert fit.converged and fit.attempts == ["bobyqa"]


def test_cbpp_glmer_matches_lme4(r_stack):
    data = _dataset(r_stack, "cbpp")
    fit = r_stack.fit("cbind(incidence, size - incidence) ~ period + (1 | herd)", data, family="binomial")
    assert list(fit.coefs["Estimate"]) == pytest.approx([-1.3983, -0.9919, -1.1282, -1.5797], abs=5e-4)
    herd = fit.variances.set_index("group").loc["herd", "Std"]
    assert float(herd) == pytest.approx(0.642, abs=5e-4)
    means = r_stack.emmeans(fit, "~ period", response=True)
    assert list(means["period"]) == ["1", "2", "3", "4"]
    assert means["estimate"].iloc[0] == pytest.approx(1 / (1 + 2.718281828 ** 1.3983), abs=1e-3)
    assert (means["ci_low"] < means["estimate"]).all() and (means["estimate"] < means["ci_high"]).all()


def test_a_failed_convergence_tries_the_second_optimizer_and_keeps_every_warning(r_stack):
    import numpy as np

    data = _dataset(r_stack, "cbpp")
    data["unscaled"] = np.arange(len(data)) * 50.0  # an unscaled predictor: lme4 cannot converge
    fit = r_stack.fit("cbind(incidence, size - incidence) ~ period + unscaled + (1 | herd)", data, family="binomial")
    assert fit.attempts == ["bobyqa", "Nelder_Mead"]
    assert not fit.converged
    assert any(w.startswith("[bobyqa] Model failed to converge") for w in fit.warnings)
    assert any(w.startswith("[Nelder_Mead]") for w in fit.warnings)
