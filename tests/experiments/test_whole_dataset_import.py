"""Whole datasets in one step (issue 37 item 1): a published RULEBREAKERS file is streamed, checked and
written in batches inside one transaction (it completes, or is rolled back whole), pairs kept across
batches (the file puts a block's rulebreakers thousands of rows after their partners), progress printed;
the bounds are the deployment's settings."""
from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db.models import Count

from experiments import design_registry as registry
from experiments.items import sources
from experiments.models import Item, Study

from .rulebreakers_full import full_size_csv

pytestmark = pytest.mark.django_db

TEN = 10


def _check_pairs(study: Study, pairs: int) -> None:
    items = Item.objects.filter(study=study)
    assert items.count() == pairs * 2 * TEN
    assert items.values("pair_id").distinct().count() == pairs
    by_role = dict(items.values_list("pair_role").annotate(n=Count("id")))
    assert by_role == {"rulebreaker": pairs * TEN, "non-rulebreaker": pairs * TEN}
    assert set(items.values_list("pair_role", "gold_answer").distinct()) == {("rulebreaker", "no"),
                                                                            ("non-rulebreaker", "yes")}
    per_variant = set(items.values_list("variant").annotate(n=Count("id")).values_list("n", flat=True))
    assert per_variant == {pairs * 2}
    last = items.get(pair_id=f"rulebreakers:real:RULEBREAKER_{pairs - 1:07d}", pair_role="rulebreaker",
                     variant="follow/yes-no")  # the last pair: its members are a block apart in the file
    assert last.attributes["source_id"] == f"RULEBREAKER_{pairs - 1:07d}_rb" and last.link_kind == "pair_member"


@pytest.mark.postgres_only
def test_the_full_size_published_file_imports_in_one_command_and_in_one_admin_upload(tmp_path, capsys, client):
    """Done when: 25,600 rows in the published format → one study of 256,000 items in 12,800 pairs, by
    import_items and by the admin's upload (the real multipart POST: previewed, then written), from one file."""
    from django.contrib.auth import get_user_model
    from django.urls import reverse

    path = tmp_path / "RULEBREAKERS_finegrained_format.csv"
    path.write_bytes(full_size_csv())
    call_command("import_items", "rulebreakers", str(path), "rb-whole")
    out = capsys.readouterr().out
    assert ("Imported 12800 pairs from rulebreakers-finegrained of 'rulebreakers' into 'rb-whole': 256000 items "
            "(10 prompt variant(s) each") in out
    assert "Importing: 25,600 rows read (100% of the file), 256,000 items written" in out
    assert "as one transaction" in out
    _check_pairs(Study.objects.get(slug="rb-whole"), 12_800)

    user = get_user_model().objects.create_user("whole", password="x-" * 8, is_staff=True, is_superuser=True)
    client.force_login(user)
    study = Study.objects.create(slug="rb-whole-admin", title="rb", design="rulebreakers")
    upload = reverse("admin:experiments_study_upload", args=[study.pk])
    with path.open("rb") as handle:
        page = client.post(upload, {"design": "rulebreakers", "o-csv_file": handle}).content.decode()
    assert "Preview: 256000 items would be written" in page and not study.items.exists()
    token = page.split('name="upload" value="')[1].split('"')[0]
    done = client.post(upload, {"design": "rulebreakers", "upload": token, "filename": path.name,
                                "previewed": "rulebreakers-finegrained", "write": "Write"}, follow=True)
    assert "Imported 12800 pairs from rulebreakers-finegrained" in done.content.decode()
    _check_pairs(study, 12_800)
    progress = reverse("admin:experiments_study_upload_progress", args=[study.pk])
    line = client.get(progress, {"upload": token}).json()["progress"]
    assert line.startswith("25,600 rows read (100% of the file), 256,000 items written, ")


@pytest.fixture
def small_batches(monkeypatch):
    from designs.paired import published, rulebreakers_source

    monkeypatch.setattr(published, "PAIRS_PER_BATCH", 20)  # 400 items a batch (200 pairs, 4,000, in use)


def test_pairs_are_kept_across_batches_and_progress_is_printed(small_batches, tmp_path, capsys):
    """100 pairs, the first block 50 long: every rulebreaker comes after 50 rows of non-rulebreakers,
    past the batch of 20 pairs that is written at once."""
    data = full_size_csv(100)
    design = registry.get("rulebreakers")
    study = Study.objects.create(slug="rb-batches", title="rb", design="rulebreakers")
    seen = []
    report = design.importer(study=study, data=io.BytesIO(data), on_progress=lambda m: seen.append(m.written))
    assert (report.pairs, report.items) == (100, 2_000)
    assert len(seen) == 5 and seen[-1] == 2_000 and seen == sorted(seen)  # written batch by batch
    _check_pairs(study, 100)
    path = tmp_path / "rb.csv"
    path.write_bytes(data)
    call_command("import_items", "rulebreakers", str(path), "rb-cli", "--variants", "follow/yes-no")
    out = capsys.readouterr().out
    assert out.startswith("Importing: ") and out.count("Importing: ") >= 2  # the first and the last
    assert "Importing: 200 rows read (100% of the file), 200 items written, " in out
    preview = design.import_preview(study=Study.objects.create(slug="rb-p", title="p", design="rulebreakers"),
                                    data=io.BytesIO(data), rows=3)
    assert (preview.count, len(preview.items), preview.problems) == (2_000, 3, ())


def test_a_problem_found_at_the_end_of_the_file_rolls_the_whole_import_back(tmp_path, small_batches):
    """The partner of the first pair is missing, which only the end of the file tells: the batches already
    written are rolled back (no partial import is left to resume); --skip-problems writes the rest."""
    text = full_size_csv(100).decode("utf-8")
    start = text.index("RULEBREAKER_0000000_rb,")
    end = text.index("RULEBREAKER_0000001_rb,")
    path = tmp_path / "rb.csv"
    path.write_text(text[:start] + text[end:], encoding="utf-8")
    with pytest.raises(CommandError, match=r"RULEBREAKER_0000000_nonrb, id: its partner RULEBREAKER_0000000_rb is "
                                           r"not in the file"):
        call_command("import_items", "rulebreakers", str(path), "rb-rollback")
    assert not Study.objects.filter(slug="rb-rollback").exists() and not Item.objects.exists()
    call_command("import_items", "rulebreakers", str(path), "rb-rollback", "--skip-problems")
    assert Item.objects.filter(study__slug="rb-rollback").count() == 99 * 2 * TEN


def test_the_bounds_are_the_deployments_settings_and_name_them(tmp_path, monkeypatch):
    path = tmp_path / "rb.csv"
    path.write_bytes(full_size_csv(30))
    monkeypatch.setenv("DUET_IMPORT_MAX_RECORDS", "50")
    with pytest.raises(CommandError, match=r"more than 50 data rows, the deployment's bound \(the setting "
                                           r"DUET_IMPORT_MAX_RECORDS\)"):
        call_command("import_items", "rulebreakers", str(path), "rb-bounds")
    monkeypatch.setenv("DUET_IMPORT_MAX_RECORDS", "60")
    monkeypatch.setenv("DUET_IMPORT_MAX_MB", "0.01")
    with pytest.raises(CommandError, match=r"larger than 0.01 MB, the deployment's bound \(the setting "
                                           r"DUET_IMPORT_MAX_MB"):
        call_command("import_items", "rulebreakers", str(path), "rb-bounds")
    monkeypatch.delenv("DUET_IMPORT_MAX_MB")
    monkeypatch.setenv("DUET_IMPORT_MAX_ITEMS", "500")
    with pytest.raises(CommandError, match=r"This import would write 600 items; at most 500 are written at once "
                                           r"\(the deployment's setting DUET_IMPORT_MAX_ITEMS\)"):
        call_command("import_items", "rulebreakers", str(path), "rb-bounds")
    assert not Item.objects.exists()
    monkeypatch.setenv("DUET_IMPORT_MAX_ITEMS", "600")
    call_command("import_items", "rulebreakers", str(path), "rb-bounds")
    assert Item.objects.count() == 600


def test_import_items_puts_a_new_study_in_the_named_team(tmp_path):
    from experiments.models import Team

    lab = Team.objects.create(name="Reasoning lab")
    path = tmp_path / "rb.csv"
    path.write_bytes(full_size_csv(10))
    with pytest.raises(CommandError, match=r"No team is called 'Nobody'"):
        call_command("import_items", "rulebreakers", str(path), "rb-team", "--team", "Nobody")
    call_command("import_items", "rulebreakers", str(path), "rb-team", "--team", "Reasoning lab", "--variants",
                 "follow/yes-no")
    assert Study.objects.get(slug="rb-team").team == lab
    call_command("generate_items", "rulebreakers", "rb-gen-team", "--pairs", "2", "--variants", "follow/yes-no",
                 "--team", "Reasoning lab")
    assert Study.objects.get(slug="rb-gen-team").team == lab
    with pytest.raises(CommandError, match=r"belongs to the team 'Reasoning lab', not 'Default team'"):
        Team.objects.get_or_create(name="Default team")
        call_command("generate_items", "rulebreakers", "rb-gen-team", "--pairs", "2", "--team", "Default team")
    assert sources.max_records() == 100_000  # the default bound: the whole published file fits


def test_one_admin_upload_writes_the_file_in_batches_and_shows_its_progress(client, small_batches):
    """The admin's upload of a published file: previewed (nothing written), then written in batches, the
    progress line served to the uploader's page while it runs (the last one is kept for the page)."""
    from django.contrib.auth import get_user_model
    from django.urls import reverse

    user = get_user_model().objects.create_user("importer", password="x-" * 8, is_staff=True, is_superuser=True)
    client.force_login(user)
    study = Study.objects.create(slug="rb-admin", title="rb", design="rulebreakers")
    upload = reverse("admin:experiments_study_upload", args=[study.pk])
    data = io.BytesIO(full_size_csv(100))
    data.name = "RULEBREAKERS_finegrained_format.csv"
    page = client.post(upload, {"design": "rulebreakers", "o-csv_file": data}).content.decode()
    assert "Preview: 2000 items would be written" in page and not Item.objects.exists()
    progress = reverse("admin:experiments_study_upload_progress", args=[study.pk])
    assert f'id="import-progress" aria-live="polite"\n data-url="{progress}"' in page
    token = page.split('name="upload" value="')[1].split('"')[0]
    filename = page.split('name="filename" value="')[1].split('"')[0]
    assert client.get(progress, {"upload": token}).json() == {"progress": ""}  # nothing written yet
    done = client.post(upload, {"design": "rulebreakers", "upload": token, "filename": filename,
                                "previewed": "rulebreakers-finegrained", "write": "Write"}, follow=True)
    assert "Imported 100 pairs from rulebreakers-finegrained" in done.content.decode()
    _check_pairs(study, 100)
    line = client.get(progress, {"upload": token}).json()["progress"]
    assert line.startswith("200 rows read (100% of the file), 2,000 items written, ") and "items/s" in line
    other = get_user_model().objects.create_user("other", password="x-" * 8, is_staff=True, is_superuser=True)
    client.force_login(other)
    assert client.get(progress, {"upload": token}).json() == {"progress": ""}  # the uploader's own


def test_the_batched_rows_are_the_rows_django_writes(small_batches):
    """The batched import writes its rows without model instances (storage.ItemRows, from paired.py's
    member_values and variant_values); the same members stored through Item instances and bulk_create
    (paired.paired_items_store) give the same rows, every column but the id, study and time."""
    from designs.paired import published, rulebreakers_source
    from experiments.items import pairs as paired

    data = full_size_csv(30)
    batched = Study.objects.create(slug="rb-rows-a", title="a", design="rulebreakers")
    registry.get("rulebreakers").importer(study=batched, data=io.BytesIO(data))
    members = [published._imported_member(row) for row in rulebreakers_source.read_rulebreakers(data.decode("utf-8")).rows]
    django = Study.objects.create(slug="rb-rows-b", title="b", design="rulebreakers")
    paired.paired_items_store(study=django, items=members)
    columns = [f.attname for f in Item._meta.concrete_fields if f.attname not in ("id", "study_id", "created_at")]

    def rows(study):
        return list(Item.objects.filter(study=study).order_by("code").values_list(*columns))

    assert len(rows(batched)) == 600 and rows(batched) == rows(django)
    batched.refresh_from_db()
    django.refresh_from_db()
    assert batched.settings == django.settings and batched.settings["human_variant"] == "follow/yes-no"


def test_a_text_too_long_for_its_column_refuses_the_batched_import_by_member(tmp_path):
    """The batched rows are checked against their columns' lengths (a longer one is a DataError on
    PostgreSQL): a pair id of 150 characters names the member and the column, and nothing is written."""
    long_id = "P" * 150
    text = full_size_csv(3).decode("utf-8").replace("RULEBREAKER_0000001_", f"{long_id}_")
    path = tmp_path / "rb.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CommandError, match=rf"Nothing was stored: rulebreakers:real:{long_id}:rulebreaker: pair_id is "
                                           r"168 characters long; at most 120 fit \(stored as Item.pair_id\)"):
        call_command("import_items", "rulebreakers", str(path), "rb-long")
    assert not Item.objects.exists()
