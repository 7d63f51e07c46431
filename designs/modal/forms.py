"""Logical-form templates of paper 003: the 24 modal syllogisms and the two Appendix C extras.

A template states the validity the paper gives it; the gold answer of every generated item is
decided by the model checker instead (see generate.py), and a disagreement is recorded.
"""
from __future__ import annotations

from dataclasses import dataclass

from logic.formula import Atom, Box, Dia, Formula, Implies, Not, Or

P, Q = Atom("p"), Atom("q")

# Paper 003's designs (their names in the designs registry, designs/<family>/design.py) and the
# argument form of Appendix C.1's rules.
SYLLOGISMS, NECESSITATION, DISTRIBUTION = "modal-syllogisms", "necessitation", "modal-distribution"
NECESSITATION_FORM = "necessitation"

MODALITIES = ("none", "box", "dia")
MODALITY_SYMBOLS = {"none": "∅", "box": "□", "dia": "◇"}

# 003 §3.3's argument forms, written once (the design's declaration, its templates and the report read them):
# (the label its templates carry, the ASCII code the models and data files use, its name), valid forms first.
ARGUMENT_FORMS = (
    ("∨⊢", "DS", "disjunctive syllogism"), ("→ᴸ⊢", "MP", "modus ponens"), ("→ᴿ⊢", "MT", "modus tollens"),
    ("∨⊬", "AD", "affirming the disjunct"), ("→ᴸ⊬", "AC", "affirming the consequent"),
    ("→ᴿ⊬", "DA", "denying the antecedent"),
)
_DS, _MP, _MT, _AD, _AC, _DA = (label for label, _, _ in ARGUMENT_FORMS)


@dataclass(frozen=True)
class Template:
    design: str
    form_id: str
    modality: str  # none / box / dia
    argument_form: str  # the grouping the analyses use: a label of ARGUMENT_FORMS, NECESSITATION_FORM, "theorem", …
    rule: str  # the individual rule, e.g. "∨ᴸ", "→ᴿ"
    premises: tuple[Formula, ...]
    conclusion: Formula
    template_valid: bool
    # The consequence relation the paper keys this form by: "global" where it treats the form as a
    # rule of inference (Appendix C.1's necessitation), else "local".
    paper_consequence: str = "local"

    @property
    def variables(self) -> tuple[str, ...]:
        names: set[str] = set()
        for formula in (*self.premises, self.conclusion):
            names |= _atoms(formula)
        return tuple(sorted(names))


def _atoms(formula: Formula) -> set[str]:
    if isinstance(formula, Atom):
        return {formula.name}
    found: set[str] = set()
    for child in ("sub", "left", "right"):
        if hasattr(formula, child):
            found |= _atoms(getattr(formula, child))
    return found


def modalise(modality: str, formula: Formula) -> Formula:
    """𝔐φ: φ itself, □φ or ◇φ."""
    if modality == "none":
        return formula
    if modality == "box":
        return Box(formula)
    if modality == "dia":
        return Dia(formula)
    raise ValueError(f"unknown modality {modality!r}; expected one of {', '.join(MODALITIES)}")


# The four rules of §3.3 and their fallacies, as functions of φ = 𝔐p and ψ = 𝔐q:
# (rule, argument-form group, valid, premises, conclusion)
def _syllogism_rules(phi: Formula, psi: Formula):
    return [
        ("∨ᴸ", _DS, True, (Or(phi, psi), Not(phi)), psi),
        ("∨ᴿ", _DS, True, (Or(phi, psi), Not(psi)), phi),
        ("→ᴸ", _MP, True, (Implies(Not(phi), psi), Not(phi)), psi),
        ("→ᴿ", _MT, True, (Implies(Not(phi), psi), Not(psi)), phi),
        ("∨ᴸ", _AD, False, (Or(phi, psi), psi), Not(phi)),
        ("∨ᴿ", _AD, False, (Or(phi, psi), phi), Not(psi)),
        ("→ᴸ", _AC, False, (Implies(Not(phi), psi), psi), Not(phi)),
        ("→ᴿ", _DA, False, (Implies(Not(phi), psi), phi), Not(psi)),
    ]


_RULE_SLUG = {"∨ᴸ": "orL", "∨ᴿ": "orR", "→ᴸ": "toL", "→ᴿ": "toR"}


def modal_syllogism_templates() -> tuple[Template, ...]:
    """The 24 forms of 003 §3.3, in Table A1's order (valid first, then fallacies)."""
    rows = []
    for valid in (True, False):
        for modality in MODALITIES:
            phi, psi = modalise(modality, P), modalise(modality, Q)
            for rule, group, is_valid, premises, conclusion in _syllogism_rules(phi, psi):
                if is_valid != valid:
                    continue
                rows.append(
                    Template(
                        design=SYLLOGISMS,
                        form_id=f"{modality}.{_RULE_SLUG[rule]}.{'valid' if valid else 'fallacy'}",
                        modality=modality,
                        argument_form=group,
                        rule=rule,
                        premises=premises,
                        conclusion=conclusion,
                        template_valid=valid,
                    )
                )
    return tuple(rows)


def necessitation_templates() -> tuple[Template, ...]:
    """Appendix C.1: {φ} ⊢ □φ, {φ} ⊢ ◇φ, {φ} ⊢ φ, which the paper treats as rules (gold Yes): "as
    they are all rules of inference, the ground truth answer is always Yes". That is global
    consequence (§3.1's ⊢ with the necessitation rule), the paper's key and the default here. As
    local consequence the checker finds {p} ⊬ □p in every system (and {p} ⊬ ◇p in K); every item
    stores that other answer too (Item.gold_other), and the report fits both keys where they differ.
    """
    return tuple(
        Template(
            design=NECESSITATION,
            form_id=f"{modality}.necessitation",
            modality=modality,
            argument_form=NECESSITATION_FORM,
            rule="nec",
            premises=(P,),
            conclusion=modalise(modality, P),
            template_valid=True,
            paper_consequence="global",
        )
        for modality in MODALITIES
    )


def distribution_templates() -> tuple[Template, ...]:
    """Table A3: base, theorem and spurious forms of distribution over disjunction.

    As in Appendix C.2's wording, φ ∨ ψ inside a modality is written with Eq. (2)'s equivalent
    ¬φ → ψ ("it's certain that if Freddy isn't going shopping, then Coy is making dinner").
    """
    rows = [
        ("none", "base", (Or(P, Q), Not(P)), Q, True),
        ("box", "base", (Or(Box(P), Box(Q)), Not(Box(P))), Box(Q), True),
        ("box", "theorem", (Box(Implies(Not(P), Q)), Box(Not(P))), Box(Q), True),
        ("box", "spurious", (Box(Implies(Not(P), Q)), Not(Box(P))), Box(Q), False),
        ("dia", "base", (Or(Dia(P), Dia(Q)), Not(Dia(P))), Dia(Q), True),
        ("dia", "theorem", (Dia(Implies(Not(P), Q)), Dia(Not(P))), Dia(Q), True),
        ("dia", "spurious", (Dia(Implies(Not(P), Q)), Not(Dia(P))), Dia(Q), True),
    ]
    return tuple(
        Template(
            design=DISTRIBUTION,
            form_id=f"{modality}.{form}",
            modality=modality,
            argument_form=form,
            rule="dist",
            premises=premises,
            conclusion=conclusion,
            template_valid=valid,
        )
        for modality, form, premises, conclusion, valid in rows
    )


DESIGNS = {
    SYLLOGISMS: modal_syllogism_templates,
    NECESSITATION: necessitation_templates,
    DISTRIBUTION: distribution_templates,
}


def templates_for(design: str) -> tuple[Template, ...]:
    try:
        return DESIGNS[design]()
    except KeyError:
        raise ValueError(
            f"unknown design {design!r}; choose one of: {', '.join(sorted(DESIGNS))}"
        ) from None
