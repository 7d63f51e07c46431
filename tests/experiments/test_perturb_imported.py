"""Issue 35 item 2: `perturb_items` on imported pairs, keeping the published ids — the RULEBREAKERS excerpt
(tests/data/published/rulebreakers/) and the ULogic excerpt (tests/data/published/ulogic/) as published. On
main the RULEBREAKERS import failed with "invalid literal for int() … 'RULEBREAKER_0000000'"."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from experiments.models import Item, LinkKind, Study
from logic.perturb import TokenMapping

pytestmark = pytest.mark.django_db

PUBLISHED = Path(__file__).resolve().parents[1] / "data" / "published"
RULEBREAKERS = PUBLISHED / "rulebreakers" / "RULEBREAKERS_finegrained_excerpt.csv"
ULOGIC = PUBLISHED / "ulogic" / "probing_subset_excerpt.json"


def _texts(item: Item) -> str:
    return " ".join([*item.premises, item.attributes.get("conclusion", "")])


def _imported(slug: str) -> Study:
    call_command("import_items", "rulebreakers", str(RULEBREAKERS), slug, "--variants", "follow/yes-no",
                 "follow/true-false")
    return Study.objects.get(slug=slug)


@pytest.mark.parametrize("kind", ["names", "entities"])
def test_perturb_items_on_the_published_rulebreakers_keeps_their_ids_and_wording(kind):
    study = _imported(f"rb-pub-{kind}")
    real = {i.code: i for i in study.items.filter(condition="real")}
    call_command("perturb_items", study.slug, kind)
    copies = list(study.items.filter(condition=kind).select_related("original"))
    assert len(copies) == len(real) == 26 * 2 * 2  # 26 pairs, both members, the two phrasings stored
    for copy in copies:
        original = copy.original
        assert original.code in real and copy.link_kind == LinkKind.PERTURBATION
        published = original.pair_id.rsplit(":", 1)[1]
        assert re.fullmatch(r"RULEBREAKER_\d{7}", published)
        assert copy.pair_id == f"rulebreakers:{kind}:{published}" and copy.pair_role == original.pair_role
        assert copy.variant == original.variant and copy.gold_answer == original.gold_answer
        assert copy.attributes["source_id"] == original.attributes["source_id"]
        a, b = original.attributes, copy.attributes
        changed = "name" if kind == "names" else "part"
        assert b[changed] != a[changed] and b["pronoun"] == a["pronoun"]
        # the published sentences with only the perturbed tokens changed: mapping them back gives the original
        back = {b[f]: a[f] for f in ("name", "entity_b", "whole") if b[f] != a[f]}
        assert TokenMapping.of(back).apply(_texts(copy)) == _texts(original)
        assert copy.question.endswith(f"{b['conclusion']}") or b["conclusion"] in copy.prompt
    if kind == "entities":  # the rulebreaker keeps the true country or type of its new city or instance
        from designs.paired.rulebreakers_data import alternative_cities, capitals

        facts = {p.city: p.country for p in (*capitals(), *alternative_cities())}
        for copy in copies:
            if copy.attributes["entity_kind"] == "geographical":
                true = copy.attributes["true_whole"]
                assert facts.get(copy.attributes["part"], true) == true


def test_a_mapping_perturbs_the_published_wording_and_a_second_label_is_refused(tmp_path):
    study = _imported("rb-pub-map")
    member = study.items.filter(condition="real").order_by("id").first()
    name = member.attributes["name"]
    mapping = tmp_path / "mapping.csv"
    mapping.write_text(f"from,to\n{name},Zebulon\n", encoding="utf-8")
    call_command("perturb_items", study.slug, f"mapping:{mapping}", "--label", "zeb")
    copies = study.items.filter(condition="zeb")
    assert copies.exists() and all("Zebulon" in _texts(c) and name not in _texts(c).split(" ") for c in copies)
    assert {c.original.attributes["name"] for c in copies} == {name}  # only the pairs the mapping touches
    with pytest.raises(CommandError, match="already has 'zeb' items"):
        call_command("perturb_items", study.slug, f"mapping:{mapping}", "--label", "zeb")


def test_perturb_items_on_the_imported_ulogic_rules_keeps_their_ids(tmp_path):
    call_command("import_items", "dual-sided", str(ULOGIC), "ul-pt", "--format", "ulogic-json", "--skip-problems")
    study = Study.objects.get(slug="ul-pt")
    rule = study.items.get(pair_id="dual-sided:real:ulogic-0001", pair_role="original", variant="template-3")
    word = next(w for w in re.findall(r"[A-Z][a-z]+", rule.premises[0]) if len(w) > 3)
    mapping = tmp_path / "mapping.csv"
    mapping.write_text(f"from,to\n{word},Zorblax\n", encoding="utf-8")
    call_command("perturb_items", study.slug, f"mapping:{mapping}", "--label", "zorb")
    copy = study.items.get(pair_id="dual-sided:zorb:ulogic-0001", pair_role="original", variant="template-3")
    assert copy.original == rule and copy.link_kind == LinkKind.PERTURBATION and "Zorblax" in copy.premises[0]
