"""analysis/ holds no design's vocabulary (issue 46: "analysis/ names no design and holds no design's vocabulary").
Every file under analysis/ (its Python and its R, read as text: code, docstrings, comments and messages alike) is
searched for the words of every registered design, collected from the design registry: its name and title, the
factors it varies by and declares levels for (each factor's name and how the report says it), every level of them
(value, R-safe code, label, alias, and the coefficient R names after it) and its pair roles; and for the words issue 46 found there ('modality',
'argform', 'paper 003', …). What analysis needs of a design it reads from the registry (Design.factors,
factor_levels, level_code, level_labels, spoken, the registered report parts), never by name.
tests/designs/test_analysis_names_no_design.py holds the narrower check of the code alone (imports, constants)."""
from __future__ import annotations

import re
from pathlib import Path

from experiments import design_registry as registry
from experiments.models import ItemKind

ROOT = Path(__file__).resolve().parents[1]
# The words issue 46 named in analysis/, beside what the registry declares: factor names in their other spellings,
# and 003's paper and items named as a design's.
ISSUE_WORDS = ("modality", "modalities", "argform", "argument form", "rulebreaker", "paper 003", "003's", "syllogism")
# Levels spelled as everyday English words that analysis/ also writes in their everyday sense ('none' for an empty
# list, a "base rate", the "original" item of a perturbation): not searched. Each must still be a level or pair role
# a design declares (test_every_everyday_word_is_still_declared), so the list cannot outlive its reason.
EVERYDAY = frozenset({"none", "base", "original"})


def core_words() -> set[str]:
    """The core's own words that a design's name may repeat: the item kinds (experiments ItemKind: a
    'multiple-choice' item is the core's, whatever design holds it), as written in prose."""
    return {kind.replace("_", "-") for kind in ItemKind.values}


def vocabulary() -> dict[str, str]:
    """Every word of every registered design → where it comes from ('modal-syllogisms: level of modality')."""
    found: dict[str, str] = {}
    skipped = EVERYDAY | core_words()

    def add(word: str, where: str) -> None:  # a word once, whatever its letter case where case is not compared
        if word and word not in skipped and not any(_same(word, known) for known in found):
            found[word] = where

    for design in registry.all_designs():
        add(design.name, f"{design.name}: design name")
        add(design.title, f"{design.name}: title")
        for name in design.factors:
            add(name, f"{design.name}: factor")
        for role in design.pair_roles:
            add(role, f"{design.name}: pair role")
        for factor in design.factor_levels:
            add(factor.name, f"{design.name}: factor")
            add(factor.spoken, f"{design.name}: how the report says {factor.name}")
            for level in factor.levels:
                for word in (level.value, level.code, level.label, *level.aliases):
                    add(word, f"{design.name}: level of {factor.name}")
                # R's treatment coding names a level's coefficient by the factor's name then its code
                add(f"{factor.name}{level.code}", f"{design.name}: coefficient of {factor.name}")
    for word in ISSUE_WORDS:
        add(word, "issue 46")
    return found


def _same(a: str, b: str) -> bool:
    return a == b or (len(a) > 3 and a.casefold() == b.casefold())


def _pattern(word: str) -> re.Pattern:
    """`word` standing alone, not inside a longer name ('box' is not found in 'boxplot', 'scroll_box' nor
    'Psych-DS'), a plural 's' or 'es' allowed; in any letter case, but a code of three characters or fewer exactly as
    written ('DS', not 'ds')."""
    flags = 0 if len(word) <= 3 else re.IGNORECASE
    return re.compile(rf"(?<![\w-]){re.escape(word)}(?:s|es)?(?![\w-])", flags)


def findings(text: str, where: str, words: dict[str, str]) -> list[str]:
    """'where:line: word (its source)' for each design word in `text`, line by line."""
    patterns = [(word, _pattern(word)) for word in words]
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        out += [f"{where}:{number}: {word!r} ({words[word]})" for word, pattern in patterns if pattern.search(line)]
    return out


def analysis_files(root: Path) -> list[Path]:
    """Every Python and R file under analysis/."""
    return sorted(p for p in (root / "analysis").rglob("*") if p.suffix in (".py", ".R") and p.is_file())


def problems(root: Path) -> list[str]:
    words = vocabulary()
    found = []
    for path in analysis_files(root):
        found += findings(path.read_text(encoding="utf-8"), path.relative_to(root).as_posix(), words)
    return found


def test_analysis_holds_no_word_of_any_design():
    files = analysis_files(ROOT)
    assert len([p for p in files if p.suffix == ".R"]) >= 2 and len(files) >= 40  # it reads the whole folder
    assert problems(ROOT) == []


def test_the_words_are_the_registrys():
    """Every registered design's name, its factors' names and levels' codes are searched for."""
    words = vocabulary()
    assert len(registry.all_designs()) >= 7
    skipped = EVERYDAY | core_words()
    for design in registry.all_designs():
        assert design.name in words or design.name in skipped
        assert set(design.factors) <= set(words)
        assert set(design.pair_roles) - skipped <= set(words)
        for factor in design.factor_levels:
            assert {level.code for level in factor.levels} - skipped <= set(words)
    assert {"modality", "argform", "argument form", "DS", "∨⊢", "□", "box", "pair_role", "rulebreaker",
            "non-rulebreaker", "rulebreakers", "modal-syllogisms", "dual-sided", "flipped", "modalitybox",
            "argformDS"} <= set(words)


def test_every_everyday_word_is_still_declared():
    declared = {word for design in registry.all_designs()
                for word in (*design.pair_roles, design.name,
                             *(level.value for factor in design.factor_levels for level in factor.levels))}
    assert EVERYDAY <= declared and "multiple-choice" in declared & core_words()


def test_the_check_finds_design_words_in_python_and_r_and_nothing_else(tmp_path):
    """A made-up analysis/ folder: factor names in code and a docstring, a design's name, its pair roles and a
    level's code in a string, a level's label and alias and the spoken factor name in an R comment. Ordinary words
    that merely contain a design word, and a file that is neither Python nor R, are not reported."""
    (tmp_path / "analysis" / "r").mkdir(parents=True)
    (tmp_path / "analysis" / "tables.py").write_text(
        'FACTORS = ("modality", "argform")\n'
        "# none of the boxplots, Psych-DS, a base rate, the original items, ds: not design words\n"
        "def by_role(frame):\n"
        '    """Accuracy by PAIR_ROLE (Rulebreakers): each rulebreaker against its non-rulebreaker."""\n'
        '    return frame[frame["argform_code"] == "DS"]  # coefficient argformMP\n', encoding="utf-8")
    (tmp_path / "analysis" / "r" / "fit.R").write_text(
        "fit <- glm(correct ~ argument_form, data = d)\n"
        "# reference level: □ (must), the first argument form\n", encoding="utf-8")
    (tmp_path / "analysis" / "notes.txt").write_text("modality\n", encoding="utf-8")  # neither Python nor R
    words = vocabulary()

    def said(where, *found):
        return [f"{where}: {word!r} ({words[word]})" for word in found]

    assert problems(tmp_path) == [
        *said("analysis/r/fit.R:2", "□ (must)", "□", "argument form"),
        *said("analysis/tables.py:1", "modality", "argform"),
        *said("analysis/tables.py:4", "pair_role", "rulebreakers", "rulebreaker", "non-rulebreaker"),
        *said("analysis/tables.py:5", "DS", "argformMP"),
    ]


def test_the_check_finds_a_design_word_in_a_string():
    words = vocabulary()
    assert findings("x = 'necessitation'\ny = 'NEC'\nz = 'nec'\n", "made-up.py", words) == [
        f"made-up.py:1: 'necessitation' ({words['necessitation']})", f"made-up.py:2: 'NEC' ({words['NEC']})"]
    assert findings("the argument forms of Modal Syllogisms, as paper 003's Table 1\n", "m.py", words) == [
        f"m.py:1: {word!r} ({words[word]})" for word in words
        if word in ("argument form", "Modal syllogisms", "paper 003", "003's", "syllogism")]
