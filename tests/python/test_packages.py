"""iteragpu.quote / PackageCalculator / Catalog: exact prices and their Python types."""

import json
import os
from decimal import Decimal
from fractions import Fraction

import pytest

import iteragpu


def test_two_b200_lots_are_four_gpus_at_twice_the_lot_price():
    quote = iteragpu.quote("b200", 7, lots=2)
    lot = iteragpu.Catalog.load(iteragpu.Catalog.shipped_path()).find("b200", 7)
    assert quote.entry.gpus_per_lot == 2
    assert quote.lots == 2 and type(quote.lots) is int
    assert quote.total_gpus == 4 and type(quote.total_gpus) is int
    assert quote.total_cents == 2 * lot.lot_price_cents and type(quote.total_cents) is int
    assert quote.total_usd == Decimal(quote.total_cents) / 100 and type(quote.total_usd) is Decimal
    assert quote.unit_cost is None  # no default for accepted results
    assert "illustrative" in quote.entry.source


def test_unit_cost_types_and_exactness():
    quote = iteragpu.quote("b200", 7, lots=2, accepted_results=3)
    unit = quote.unit_cost
    assert unit.accepted_results == 3 and type(unit.accepted_results) is int
    assert type(unit.numerator_cents) is int and type(unit.denominator) is int
    assert unit.cents == Fraction(quote.total_cents, 3)
    assert unit.exact_usd is None  # a repeating decimal has no finite exact form
    assert isinstance(unit.display_usd, str) and len(unit.display_usd.split(".")[1]) == 4
    assert "halves away from zero" in iteragpu.UnitCost.display_rounding

    finite = iteragpu.quote("b200", 7, lots=1, accepted_results=4).unit_cost
    assert type(finite.exact_usd) is Decimal
    assert finite.exact_usd * 4 * 100 == iteragpu.quote("b200", 7).total_cents


@pytest.mark.parametrize("accepted", [None, 3, 4])
def test_to_dict_equals_the_cli_json(cli, accepted):
    args = ["packages", "--gpu", "b200", "--days", "7", "--lots", "2", "--format", "json"]
    options = {"lots": 2}
    if accepted is not None:
        args += ["--accepted-results", str(accepted)]
        options["accepted_results"] = accepted
    completed = cli(*args)
    assert completed.returncode == 0, completed.stderr
    quote = iteragpu.quote("b200", 7, **options)
    assert quote.to_dict() == json.loads(completed.stdout)


def test_text_is_the_cli_text(cli):
    completed = cli("packages", "--gpu", "B200", "--days", "30", "--lots", "3", "--accepted-results", "7")
    assert completed.returncode == 0, completed.stderr
    assert str(iteragpu.quote("B200", "30", lots="3", accepted_results="7")) == completed.stdout


def test_json_matches_the_schemas(schema_validator):
    schema_validator(iteragpu.quote("h200", 3, accepted_results=10).to_dict(), "quote")
    schema_validator(iteragpu.PackageCalculator().catalog.to_dict(), "catalog")


def test_shipped_catalog_has_the_full_grid():
    catalog = iteragpu.Catalog.load(iteragpu.Catalog.shipped_path(), require_full_grid=True)
    assert len(catalog.entries) == 45
    assert {entry.days for entry in catalog.entries} == {3, 7, 30}
    assert all(type(entry.lot_price_cents) is int for entry in catalog.entries)


@pytest.mark.parametrize(
    "gpu, days, options, keyword",
    [
        ("zz", 7, {}, "gpu"),
        ("b200", 5, {}, "days"),
        ("b200", 7, {"lots": 0}, "lots"),
        ("b200", 7, {"accepted_results": 0}, "accepted_results"),
        ("b200", 7, {"accepted_results": -2}, "accepted_results"),
        ("b200", 7, {"accepted_results": "1.5"}, "accepted_results"),
    ],
)
def test_bad_values_raise_value_error_naming_the_keyword(gpu, days, options, keyword):
    with pytest.raises(ValueError) as raised:
        iteragpu.quote(gpu, days, **options)
    assert isinstance(raised.value, iteragpu.UsageError)
    assert raised.value.field == keyword
    assert str(raised.value).startswith(keyword + ": ")


def test_gpu_must_be_text():
    with pytest.raises(TypeError, match="gpu"):
        iteragpu.quote(200, 7)


def test_own_catalog_and_its_errors(tmp_path):
    header = "gpu,gpu_name,days,lot_price_cents,gpus_per_lot,snapshot_date,source\n"
    good = tmp_path / "mine.csv"
    good.write_text(header + "x1,My GPU,7,1000,1,2026-01-01,my provider page\n")
    quote = iteragpu.quote("x1", 7, lots=3, catalog=good)  # os.PathLike accepted
    assert quote.total_cents == 3000
    assert quote.catalog_path == str(good)
    assert iteragpu.PackageCalculator(iteragpu.Catalog.load(str(good))).quote("x1", 7).total_cents == 1000

    bad = tmp_path / "bad.csv"
    bad.write_text(header + "x1,My GPU,7,ten,1,2026-01-01,my provider page\n")
    with pytest.raises(iteragpu.DataFileError) as raised:
        iteragpu.quote("x1", 7, catalog=bad)
    assert isinstance(raised.value, ValueError)
    assert f"{bad}:2" in str(raised.value)

    with pytest.raises(iteragpu.DataFileError, match="missing.csv"):
        iteragpu.PackageCalculator(os.fspath(tmp_path / "missing.csv"))


def test_quote_html_shows_the_key_figures():
    quote = iteragpu.quote("b200", 7, lots=2, accepted_results=3)
    page = quote._repr_html_()
    assert f"{quote.total_cents:,}" in page
    assert f"{quote.total_usd:,}" in page
    assert quote.unit_cost.display_usd in page
    assert "illustrative" in page
    assert "check the provider" in page
