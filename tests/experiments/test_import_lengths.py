"""Importers check every text against its column's length before writing (issue 17 hole 12): on
PostgreSQL a longer value was a DataError (a 500 in the admin); now it is a row-and-column error and
nothing is written. Runs on SQLite and again on PostgreSQL."""
from __future__ import annotations

import pytest

from designs.csv_bank.items import items_import_csv
from designs.multiple_choice import items as mc_items
from designs.paired import items as paired_designs
from logic.csv_table import CsvImportError
from experiments.models import Item
from tests.factories import StudyFactory

pytestmark = pytest.mark.django_db

MC_HEADER = "id,context,question,answer,option_a,option_b,option_c,option_d,type,domain\n"
MC_ROW = '"m{n}","Every whale is a mammal. No trout is a mammal.","Which of these is a mammal?","B","a trout","a whale","a heron","a newt","{type}","biology"\n'


def test_a_multiple_choice_type_longer_than_its_column_is_a_row_error_and_nothing_is_written():
    study = StudyFactory()
    data = MC_HEADER + MC_ROW.format(n=0, type="syllogism") + MC_ROW.format(n=1, type="aaaaaaaa a aaaaaa aaaaaa aaaaaa")
    with pytest.raises(CsvImportError) as error:
        mc_items.items_import_multiple_choice(study=study, data=data)
    assert "row 3, column 'type': is 31 characters long; at most 30 fit" in str(error.value)
    assert "nothing was imported" in str(error.value) and not Item.objects.exists()
    mc_items.items_import_multiple_choice(study=study, data=MC_HEADER + MC_ROW.format(n=0, type="a" * 30))
    assert Item.objects.filter(study=study).count() == 4  # 30 characters fit: four circular mutants


def test_a_yes_no_bank_cell_longer_than_its_column_names_row_and_column():
    study = StudyFactory()
    data = ("item_id,premise_1,question,gold_answer,form_id,argument_form\n"
            f"ok,Anna reads.,Can we infer that Anna reads?,yes,short,MP\n"
            f"long,Tom bakes.,Can we infer that Tom bakes?,yes,{'f' * 61},{'a' * 31}\n")
    with pytest.raises(CsvImportError) as error:
        items_import_csv(study=study, data=data)
    assert "row 3, column 'form_id'" in str(error.value) and "row 3, column 'argument_form'" in str(error.value)
    assert not Item.objects.exists()


def test_a_dual_sided_rule_id_too_long_for_the_pair_column_is_refused():
    study = StudyFactory()
    data = f"premise,conclusion,flipped_conclusion,rule_id\nA is heated,A expands,A does not expand,{'r' * 119}\n"
    with pytest.raises(CsvImportError, match=r"row 2, column 'rule_id'"):
        paired_designs.dual_sided_import(study=study, data=data, templates=[1])
    assert not Item.objects.exists()
