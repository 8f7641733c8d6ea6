"""Peer for the start-up benchmark: a package quote in Python's standard library.

Run as `python3 -S packages_peer.py CATALOG b200 7 2`. Reads and checks the CSV catalog
like the original kit's calcul_forfaits.py, then prints lot price, lots, GPUs and total.
"""
import csv
import sys


def main(catalog, gpu, days, lots):
    with open(catalog, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        int(row["days"]), int(row["lot_price_cents"]), int(row["gpus_per_lot"])
    lots = int(lots)
    for row in rows:
        if row["gpu"] == gpu and int(row["days"]) == int(days):
            cents = int(row["lot_price_cents"]) * lots
            print(f"{row['gpu_name']} {days} days: lot {row['lot_price_cents']} cents x {lots} lots"
                  f" = {int(row['gpus_per_lot']) * lots} GPUs, {cents} cents = ${cents // 100}.{cents % 100:02d}"
                  f" ({row['source']}, snapshot {row['snapshot_date']})")
            return
    sys.exit(f"unknown gpu/days {gpu}/{days}")


if __name__ == "__main__":
    main(*sys.argv[1:5])
