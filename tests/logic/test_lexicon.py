"""Word lists for the logic items (paper 003 §3.4, App. B.2)."""

import re
from collections import Counter

import pytest

from designs.modal.lexicon import Lexicon, load_lines, nonsense_phrases, real_lexicon

ARTICLES = ("a", "an", "the", "some")
# Rule for real verb phrases: "<verb>ing <a|an|the|some> <one or two lower-case words>".
# Mass nouns take "some" ("some bread"), so there is no bare-object case.
VERB_PHRASE_RE = re.compile(r"^[a-z]+ing( [a-z]+){1,3}$")
FORBIDDEN = (
    " in the ",
    "inside",
    "home",
    "outside",
    "sleep",
    "sitting",
    "standing",
    "wearing",
    "driving",
    "riding",
)
LISTS = ("names", "verb_phrases", "nonsense_verbs", "nonsense_nouns")


def _indefinite(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


@pytest.mark.parametrize("name", LISTS)
def test_counts_and_no_duplicates(name):
    lines = load_lines(name)
    assert len(lines) >= 200
    assert len(set(lines)) == len(lines)
    assert all(line == line.strip() and line.isascii() for line in lines)


def test_load_lines_accepts_txt_suffix_and_rejects_unknown():
    assert load_lines("names.txt") == load_lines("names")
    with pytest.raises(ValueError):
        load_lines("no_such_list")


def test_real_lexicon_is_cached_frozen_dataclass():
    lex = real_lexicon()
    assert isinstance(lex, Lexicon)
    assert lex is real_lexicon()
    assert lex.names == load_lines("names")
    assert lex.verb_phrases == load_lines("verb_phrases")
    with pytest.raises(AttributeError):
        lex.names = ()  # type: ignore[misc]


def test_names_are_capitalised_single_words():
    names = real_lexicon().names
    for name in names:
        assert re.fullmatch(r"[A-Z][a-z]+", name), name
    assert len({n.lower() for n in names}) == len(names)


def test_verb_phrase_shape():
    for phrase in real_lexicon().verb_phrases:
        assert VERB_PHRASE_RE.match(phrase), phrase
        words = phrase.split()
        assert words[1] in ARTICLES, phrase
        assert 1 <= len(words) - 2 <= 2, phrase
        if words[1] in ("a", "an"):
            assert words[1] == _indefinite(words[2]), phrase


def test_verb_phrases_no_shared_verb_and_object_noun():
    pairs = [(p.split()[0], p.split()[-1]) for p in real_lexicon().verb_phrases]
    assert len(set(pairs)) == len(pairs)


def test_verb_variety():
    verbs = Counter(p.split()[0] for p in real_lexicon().verb_phrases)
    assert len(verbs) >= 80
    # keep "same activity, different object" rare
    assert max(verbs.values()) <= 3


def test_verb_phrases_have_no_pronouns():
    pronouns = {"his", "her", "their", "my", "your", "its", "our", "him", "them"}
    for phrase in real_lexicon().verb_phrases:
        assert not pronouns & set(phrase.split()), phrase


@pytest.mark.parametrize("name", ("verb_phrases", "nonsense_verbs", "nonsense_nouns"))
def test_forbidden_substrings(name):
    for line in load_lines(name):
        padded = f" {line} "
        assert not [f for f in FORBIDDEN if f in padded], line


def test_nonsense_verbs_shape():
    for verb in load_lines("nonsense_verbs"):
        assert re.fullmatch(r"[a-z]+ing", verb), verb
        assert " " not in verb


def test_nonsense_nouns_have_agreeing_article():
    for entry in load_lines("nonsense_nouns"):
        article, _, noun = entry.partition(" ")
        assert re.fullmatch(r"[a-z]+", noun), entry
        assert " " not in noun, entry
        assert article == _indefinite(noun), entry


def _real_stems() -> set[str]:
    stems = set()
    for phrase in real_lexicon().verb_phrases:
        stem = phrase.split()[0][: -len("ing")]
        stems |= {stem, stem + "e"}
        if len(stem) > 2 and stem[-1] == stem[-2]:
            stems.add(stem[:-1])
    return stems


def test_nonsense_stems_are_not_real_verb_stems():
    real = _real_stems()
    real_words = {w for p in real_lexicon().verb_phrases for w in p.split()}
    for verb in load_lines("nonsense_verbs"):
        stem = verb[: -len("ing")]
        assert stem not in real and stem + "e" not in real, verb
        assert verb not in real_words
    for entry in load_lines("nonsense_nouns"):
        noun = entry.split()[1]
        assert noun not in real_words and noun not in real, entry


def test_nonsense_words_are_not_names():
    names = {n.lower() for n in real_lexicon().names}
    for verb in load_lines("nonsense_verbs"):
        assert verb[: -len("ing")] not in names
    for entry in load_lines("nonsense_nouns"):
        assert entry.split()[1] not in names


def test_nonsense_phrases_mirror_verb_phrases():
    phrases = nonsense_phrases()
    assert phrases is nonsense_phrases()
    assert len(phrases) == len(real_lexicon().verb_phrases)
    assert len(set(phrases)) == len(phrases)
    verbs = load_lines("nonsense_verbs")
    nouns = load_lines("nonsense_nouns")
    for i, phrase in enumerate(phrases):
        assert phrase == f"{verbs[i]} {nouns[i]}"
        assert VERB_PHRASE_RE.match(phrase), phrase


def test_the_paper_lexicon_is_the_ssa_top_200_balanced_by_sex_with_its_provenance():
    """Issue 35: --paper-lexicon drew names.txt's first 200 lines, 165 female and 35 male. Now 003's
    "top-200 popular baby names" are the SSA's national data (003's footnote 6), 100 of each sex,
    interleaved by rank; designs/modal/lexicon/PAPER_NAMES.md says where the list was read."""
    from importlib import resources

    names = real_lexicon("paper").names
    assert names == load_lines("paper_names") and len(names) == 200 == len(set(names))
    female, male = names[0::2], names[1::2]
    assert female[:3] == ("Olivia", "Emma", "Ava") and female[-1] == "Brielle"  # yob2020.txt, F rows 1–3 and 100
    assert male[:3] == ("Liam", "Noah", "Oliver") and male[-1] == "Silas"  # M rows 1–3 and 100
    old = load_lines("names")  # names.txt: lines 1–165 female, the rest male
    assert sum(n in old[:165] for n in names) < 120 and sum(n in old[165:] for n in names) > 60
    provenance = resources.files("designs.modal.lexicon").joinpath("PAPER_NAMES.md").read_text(encoding="utf-8")
    for fact in ("aramshiva/babies", "a164b5f2e8a0842578e8e5a630d75bfc4f41d399", "names/yob2020.txt",
                 "ssa.gov/oact/babynames/names.zip"):
        assert fact in provenance
    assert real_lexicon().names == old  # the full lexicon is unchanged
