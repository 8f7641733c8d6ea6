"""iteragpu.results_add / results_check / results_report: the raw-results table through the
Python module, compared with `iteragpu results` and its promises (exact costs, one-line
errors naming the keyword, locked adds that lose nothing)."""

import datetime
import html
import json
import os
import re
import subprocess
import sys
from decimal import Decimal
from fractions import Fraction

import pytest

import iteragpu
from conftest import SOURCE_DIR

# A real measurement (the H200 example): results add accepts nothing less.
with open(os.path.join(SOURCE_DIR, "examples", "results", "mesures-petit-essai.json"), encoding="utf-8") as _file:
    MEASUREMENT = _file.read()
HEADER = ",".join(iteragpu.ResultsTable.columns) + "\n"


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "m.json").write_text(MEASUREMENT)
    return tmp_path


def run_fields(folder, **overrides):
    """The keywords of one valid add: b200, 7 days, 2 lots, 3 of 10 accepted. The measurement
    is the H200 example, recorded against a B200 package on purpose (gpu_mismatch_ok): these
    tests are about the table and its prices."""
    fields = dict(
        measurement=folder / "m.json", gpu="b200", days=7, lots=2, work_unit="labelled image",
        attempted=10, accepted=3, metric="IoU", threshold=">= 0.8", observed="0.84",
        date="2026-12-01", notes="first", gpu_mismatch_ok=True,
    )
    fields.update(overrides)
    return fields


def test_add_check_report_round_trip(folder):
    table = folder / "resultats.csv"
    added = iteragpu.results_add(table, **run_fields(folder))
    assert (added.date, added.gpu, added.days, added.lots) == ("2026-12-01", "b200", 7, 2)
    assert (added.units_attempted, added.units_accepted_distinct) == (10, 3)
    assert type(added.lots) is int and type(added.units_accepted_distinct) is int
    assert added.measurement_file == "m.json"  # inside the table's folder: recorded relative
    assert len(added.measurement_sha256) == 64
    iteragpu.results_add(str(table), **run_fields(folder, accepted=0, gpu="B200", days="7",
                                                  lots="1", notes="second, with a comma"))

    checked = iteragpu.results_check(table)
    assert isinstance(checked, iteragpu.ResultsTable) and len(checked) == 2
    assert [row.line for row in checked.rows] == [2, 3]
    assert [row.notes for row in checked.rows] == ["first", "second, with a comma"]
    assert checked.rows[1].gpu == "b200"  # the catalog's key, whatever the case typed
    assert checked.rows[0].measurement_sha256 == added.measurement_sha256
    assert checked.rows[0].measured_device == "NVIDIA H200"
    assert checked.gpu_mismatches == [
        "line 2: measured on NVIDIA H200, which b200 does not cover (NVIDIA B200)",
        "line 3: measured on NVIDIA H200, which b200 does not cover (NVIDIA B200)"]

    report = iteragpu.results_report(table)
    assert isinstance(report, iteragpu.ResultsReport)
    assert report.table_path == str(table)
    assert [cost.row.line for cost in report.rows] == [2, 3]
    assert report.rows[1].quote.unit_cost is None  # nothing accepted: no cost per result
    assert report.rows[1].quote.total_cents == report.rows[0].quote.total_cents // 2
    # Recorded with gpu_mismatch_ok: the report names the GPU measured in every view.
    first = report.to_dict()["rows"][0]
    assert (first["measured_gpu"], first["gpu_mismatch"]) == (
        "NVIDIA H200", "measured on NVIDIA H200, which b200 does not cover (NVIDIA B200)")
    assert "&#9888; measured on NVIDIA H200, which b200 does not cover" in report._repr_html_()


def test_unit_cost_is_exact(folder):
    table = folder / "t.csv"
    iteragpu.results_add(table, **run_fields(folder))
    iteragpu.results_add(table, **run_fields(folder, accepted=4))
    three, four = iteragpu.results_report(table).rows
    quote = three.quote
    assert quote.total_cents == 318562 and type(quote.total_cents) is int
    assert quote.total_usd == Decimal("3185.62") and type(quote.total_usd) is Decimal
    unit = quote.unit_cost
    assert (unit.numerator_cents, unit.denominator) == (318562, 3)
    assert type(unit.numerator_cents) is int and type(unit.denominator) is int
    assert unit.cents == Fraction(318562, 3)
    assert unit.exact_usd is None  # 1061.873333...: no finite decimal form
    assert unit.display_usd == "1061.8733"
    assert four.quote.unit_cost.exact_usd == Decimal("796.405")
    assert type(four.quote.unit_cost.exact_usd) is Decimal


@pytest.mark.parametrize("sort, descending", [("table", False), ("cost", False), ("cost", True), ("gpu", True)])
def test_report_equals_the_cli(folder, cli, schema_validator, sort, descending):
    table = folder / "t.csv"
    for gpu, days, accepted in [("b200", 7, 3), ("h100-sxm", 3, 0), ("h200", 30, 9), ("b200", 3, 1)]:
        iteragpu.results_add(table, **run_fields(folder, gpu=gpu, days=days, accepted=accepted))
    report = iteragpu.results_report(table, sort=sort, descending=descending)
    args = ["results", "report", "--table", str(table), "--sort", sort] + (["--descending"] if descending else [])

    completed = cli(*args, "--format", "json")
    assert completed.returncode == 0, completed.stderr
    assert report.to_dict() == json.loads(completed.stdout)
    schema_validator(report.to_dict(), "results-report")
    assert cli(*args).stdout == str(report) == report.to_text()
    assert cli(*args, "--format", "csv").stdout == report.to_csv()
    if sort == "cost":
        assert report.rows[-1].quote.unit_cost is None  # unpriced rows last, either order


def test_rows_added_by_python_pass_the_cli_check_and_the_other_way(folder, cli):
    table = folder / "t.csv"
    iteragpu.results_add(table, **run_fields(folder))
    completed = cli("results", "add", "--table", str(table), "--measurement", str(folder / "m.json"),
                    "--gpu", "h200", "--days", "3", "--work-unit", "page", "--attempted", "5",
                    "--accepted", "5", "--metric", "exact match", "--threshold", "1",
                    "--observed", "1", "--date", "2026-12-02")
    assert completed.returncode == 0, completed.stderr
    assert [row.gpu for row in iteragpu.results_check(table).rows] == ["b200", "h200"]
    assert cli("results", "check", "--table", str(table)).returncode == 0


def test_numbers_and_dates_are_written_as_text(folder):
    row = iteragpu.results_add(folder / "t.csv", **run_fields(
        folder, threshold=Decimal("0.80"), observed=0.84, date=datetime.date(2026, 1, 5)))
    assert (row.acceptance_threshold, row.observed_value, row.date) == ("0.80", "0.84", "2026-01-05")
    row = iteragpu.results_add(folder / "t.csv", **run_fields(folder, date=None))
    assert row.date == datetime.datetime.now(datetime.timezone.utc).date().isoformat()


@pytest.mark.parametrize(
    "overrides, keyword",
    [
        ({"attempted": 3, "accepted": 4}, "accepted"),
        ({"accepted": -1}, "accepted"),
        ({"attempted": 0}, "attempted"),
        ({"attempted": "1.5"}, "attempted"),
        ({"days": 5}, "days"),
        ({"gpu": "zz"}, "gpu"),
        ({"lots": 0}, "lots"),
        ({"work_unit": " "}, "work_unit"),
        ({"threshold": ""}, "threshold"),
        ({"date": "2026-02-30"}, "date"),
        ({"measurement": "missing.json"}, "measurement"),
    ],
)
def test_bad_values_raise_value_error_naming_the_keyword(folder, overrides, keyword):
    table = folder / "t.csv"
    with pytest.raises(ValueError) as raised:
        iteragpu.results_add(table, **run_fields(folder, **overrides))
    assert isinstance(raised.value, iteragpu.UsageError)
    assert raised.value.field == keyword
    assert str(raised.value).startswith(keyword + ": ")
    assert "\n" not in str(raised.value)
    assert not table.exists()  # nothing written


def test_accepted_above_attempted_says_so(folder):
    with pytest.raises(iteragpu.UsageError, match=r"^accepted: 11 distinct accepted units exceed the 10 attempted$"):
        iteragpu.results_add(folder / "t.csv", **run_fields(folder, accepted=11))


def test_a_file_that_is_not_a_measurement_is_refused(folder):
    (folder / "other.json").write_text('{"schema": "iteragpu.quote", "schema_version": 1}')
    with pytest.raises(iteragpu.UsageError) as raised:
        iteragpu.results_add(folder / "t.csv", **run_fields(folder, measurement=folder / "other.json"))
    assert raised.value.field == "measurement"


def test_wrong_types_and_missing_keywords_are_type_errors(folder):
    with pytest.raises(TypeError, match="^gpu: expected a str"):
        iteragpu.results_add(folder / "t.csv", **run_fields(folder, gpu=200))
    with pytest.raises(TypeError, match="^attempted: expected a number, got a bool"):
        iteragpu.results_add(folder / "t.csv", **run_fields(folder, attempted=True))
    with pytest.raises(TypeError, match="^date: expected"):
        iteragpu.results_add(folder / "t.csv", **run_fields(folder, date=20261201))
    fields = run_fields(folder)
    del fields["threshold"]
    with pytest.raises(TypeError):
        iteragpu.results_add(folder / "t.csv", **fields)
    assert not (folder / "t.csv").exists()


def test_corrupt_table_is_a_data_file_error_with_file_and_line(folder):
    table = folder / "t.csv"
    iteragpu.results_add(table, **run_fields(folder))
    good = table.read_text()
    table.write_text(good + good.splitlines()[1].replace(",7,2,", ",ten,2,") + "\n")
    corrupt = table.read_text()
    for call in (lambda: iteragpu.results_check(table), lambda: iteragpu.results_report(table),
                 lambda: iteragpu.results_add(table, **run_fields(folder))):
        with pytest.raises(iteragpu.DataFileError) as raised:
            call()
        assert isinstance(raised.value, ValueError)
        assert str(raised.value).startswith(f"{table}:3: days: ")
    assert table.read_text() == corrupt  # the failed add changed nothing

    table.write_text(good)
    (folder / "m.json").write_text(MEASUREMENT + " ")
    with pytest.raises(iteragpu.DataFileError, match=f"^{re.escape(str(table))}:2: measurement_sha256: .* has changed"):
        iteragpu.results_check(table)

    with pytest.raises(iteragpu.DataFileError, match="missing.csv"):
        iteragpu.results_check(folder / "missing.csv")


def test_unknown_sort_names_the_keyword(folder):
    iteragpu.results_add(folder / "t.csv", **run_fields(folder))
    with pytest.raises(iteragpu.UsageError) as raised:
        iteragpu.results_report(folder / "t.csv", sort="price")
    assert raised.value.field == "sort"
    assert "table, cost, date or gpu" in str(raised.value)


def test_own_catalog(folder):
    catalog = folder / "prices.csv"
    catalog.write_text("gpu,gpu_name,days,lot_price_cents,gpus_per_lot,snapshot_date,source\n"
                       "x1,My GPU,7,1000,1,2026-01-01,my provider page\n")
    table = folder / "t.csv"
    iteragpu.results_add(table, **run_fields(folder, gpu="x1", lots=3), catalog=catalog)
    with pytest.raises(iteragpu.DataFileError, match=f"^{re.escape(str(table))}:2: gpu: "):
        iteragpu.results_check(table)  # the shipped catalog has no x1
    assert len(iteragpu.results_check(table, catalog=iteragpu.Catalog.load(catalog))) == 1
    report = iteragpu.results_report(table, catalog=catalog)
    assert report.catalog_path == str(catalog)
    assert report.rows[0].quote.total_cents == 3000
    assert report.rows[0].quote.unit_cost.cents == Fraction(1000)


def test_concurrent_adds_from_several_processes_lose_nothing(folder):
    table = folder / "t.csv"
    processes, adds_each = 6, 5
    code = (
        "import sys, iteragpu\n"
        "folder, worker = sys.argv[1], sys.argv[2]\n"
        f"for i in range({adds_each}):\n"
        "    iteragpu.results_add(folder + '/t.csv', measurement=folder + '/m.json', gpu='h200',\n"
        "        days=7, work_unit='image', attempted=10, accepted=i, metric='IoU',\n"
        "        threshold='>= 0.8', observed='0.9', date='2026-12-01', notes=f'{worker}-{i}')\n"
    )
    workers = [
        subprocess.Popen([sys.executable, "-c", code, str(folder), str(worker)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for worker in range(processes)
    ]
    for worker in workers:
        _, errors = worker.communicate(timeout=120)
        assert worker.returncode == 0, errors
    rows = iteragpu.results_check(table).rows
    expected = {f"{worker}-{i}" for worker in range(processes) for i in range(adds_each)}
    assert len(rows) == processes * adds_each
    assert {row.notes for row in rows} == expected
    assert table.read_text().count("\n") == processes * adds_each + 1  # header + rows, nothing mixed
    assert sorted(os.listdir(folder)) == ["m.json", "t.csv"]  # no stray temporary file


def test_add_waits_for_the_lock_without_holding_the_gil(folder, run_python):
    # The table's directory is locked by this process's main thread; an add in another
    # thread must wait for it while the main thread keeps running Python.
    completed = run_python(
        "import fcntl, os, threading, time, iteragpu\n"
        f"folder = {str(folder)!r}\n"
        "lock = os.open(folder, os.O_RDONLY)\n"
        "fcntl.flock(lock, fcntl.LOCK_EX)\n"
        "added = []\n"
        "worker = threading.Thread(target=lambda: added.append(iteragpu.results_add(\n"
        "    folder + '/t.csv', measurement=folder + '/m.json', gpu='h200', days=7,\n"
        "    work_unit='image', attempted=1, accepted=1, metric='IoU', threshold='1', observed='1')))\n"
        "worker.start()\n"
        "ticks = 0\n"
        "deadline = time.monotonic() + 0.5\n"
        "while time.monotonic() < deadline:\n"
        "    ticks += 1\n"
        "print(worker.is_alive(), os.path.exists(folder + '/t.csv'), ticks > 1000)\n"
        "fcntl.flock(lock, fcntl.LOCK_UN)\n"
        "worker.join(30)\n"
        "print(worker.is_alive(), len(added), len(iteragpu.results_check(folder + '/t.csv')))\n",
        timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == ["True", "False", "True", "False", "1", "1"]


def test_report_html_shows_the_key_figures(folder):
    table = folder / "t.csv"
    iteragpu.results_add(table, **run_fields(folder))
    iteragpu.results_add(table, **run_fields(folder, accepted=0, work_unit="<b>page</b>"))
    report = iteragpu.results_report(table)
    page = report._repr_html_()
    assert "1061.8733" in page and "318562/3 cents" in page
    assert "318,562 cents" in page and "NVIDIA B200" in page
    assert "nothing accepted" in page
    assert "&lt;b&gt;page&lt;/b&gt;" in page and "<b>page</b>" not in page
    for caveat in report.to_dict()["caveats"]:  # the core's caveats, escaped
        assert html.escape(caveat) in page
    assert "check the provider" in page


def test_keywords_are_documented_and_types_exported():
    signature = iteragpu.ResultsTable.add_result.__doc__.splitlines()[0]
    for keyword in ["table", "measurement", "gpu", "days", "lots", "work_unit", "attempted", "accepted",
                    "metric", "threshold", "observed", "date", "notes", "catalog"]:
        assert f"{keyword}:" in signature, keyword
    assert "lots: handle = '1'" in signature  # the default comes from ResultRowRequest
    for name in ["ResultRow", "ResultsTable", "ResultCost", "ResultsReport",
                 "results_add", "results_check", "results_report"]:
        assert name in iteragpu.__all__


def test_a_measurement_from_another_gpu_is_refused_unless_allowed(folder):
    table = folder / "t.csv"
    with pytest.raises(iteragpu.UsageError) as raised:
        iteragpu.results_add(table, **run_fields(folder, gpu_mismatch_ok=False))
    assert raised.value.field == "gpu"
    assert "measured on NVIDIA H200, which b200 does not cover (NVIDIA B200)" in str(raised.value)
    assert not table.exists()
    row = iteragpu.results_add(table, **run_fields(folder, gpu="h200", gpu_mismatch_ok=False))
    assert (row.measured_device, row.gpu_mismatch) == ("NVIDIA H200", "")
    assert iteragpu.results_check(table).gpu_mismatches == []


def test_a_test_double_measurement_is_refused_and_fails_the_check(folder):
    fake = json.loads(MEASUREMENT)
    fake["environment"]["backend"]["identity"] = "test-double"
    (folder / "fake.json").write_text(json.dumps(fake))
    table = folder / "t.csv"
    with pytest.raises(iteragpu.UsageError, match="test-double backend") as raised:
        iteragpu.results_add(table, **run_fields(folder, measurement=folder / "fake.json"))
    assert raised.value.field == "measurement"
    assert not table.exists()
    # A row pointing at one (written by hand) makes the table invalid.
    iteragpu.results_add(table, **run_fields(folder))
    os.replace(folder / "fake.json", folder / "m.json")
    text = table.read_text().splitlines()
    import hashlib
    digest = hashlib.sha256((folder / "m.json").read_bytes()).hexdigest()
    table.write_text("\n".join([text[0], re.sub("[0-9a-f]{64}", digest, text[1])]) + "\n")
    with pytest.raises(iteragpu.DataFileError, match=":2: measurement_file: .*test-double backend"):
        iteragpu.results_check(table)


def test_the_shipped_catalog_names_the_devices_of_every_model():
    for entry in iteragpu.PackageCalculator().catalog.entries:
        assert entry.device_names, entry.gpu
    h200 = next(e for e in iteragpu.PackageCalculator().catalog.entries if e.gpu == "h200")
    assert h200.device_names == ["NVIDIA H200"]


def test_a_test_double_measurement_is_marked_in_every_python_view(tmp_path, fake_backend):
    # Made in a child process: the mark survives the trip back (pickle) as well.
    measurement = iteragpu.measure(output=tmp_path / "m.json", backend_path=fake_backend,
                                   progress=False, batch=1, context=16, width=64, warmup=1, repeats=2)
    assert measurement.environment.from_test_double
    assert measurement.environment.stack.backend_identity == "test-double"
    assert measurement.to_dict()["environment"]["backend"]["identity"] == "test-double"
    assert "TEST DOUBLE" in str(measurement)
    assert "TEST DOUBLE" in str(measurement.environment)
    assert "TEST DOUBLE" in measurement._repr_html_()
    with pytest.raises(iteragpu.UsageError, match="test-double backend"):
        iteragpu.results_add(tmp_path / "t.csv", **run_fields(tmp_path, gpu_mismatch_ok=True))
