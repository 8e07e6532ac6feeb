#!/usr/bin/env python3
"""Prepares the sjc experiments' data from ../shared/data (see README.md here).

    python3 examples/sjc-real/prepare.py /work/shared/data

writes mondial/data, breast/data and credit/data under this directory. Every
split is deterministic (no randomness): Mondial countries sorted by code, every
third one (positions 2, 5, 8, ...) is a test country; FATE records with
id % 3 == 0 are test records.
"""
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# Religions of Christian origin (Mondial's religion names).
CHRISTIAN = {
    "Catholic", "Protestant", "Christian Orthodox", "Jehovas Witnesses", "Mormon",
    "Christian", "New Apostolic", "Tewahedo Christian Orthodox", "Coptic Christian", "Quaker",
}


def read(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def write(path, header, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def mondial(src):
    m = lambda name: read(os.path.join(src, "mondial", name + ".csv"))
    share = {}
    for r in m("religion"):
        c = share.setdefault(r["Country"], [0.0, 0.0])
        c[0 if r["Name"] in CHRISTIAN else 1] += float(r["Percentage"])
    # The class: christian when religions of Christian origin have at
    # least half the population, else other. Countries without religion
    # rows have no class and are left out.
    cls = {k: ("christian" if v[0] >= 50 else "other") for k, v in share.items()}
    codes = sorted(cls)
    test = {c for i, c in enumerate(codes) if i % 3 == 2}
    split = {"": lambda c: c in cls and c not in test, "_test": lambda c: c in test}
    full = lambda r, cols: all(r[c] != "" for c in cols)  # rows with an empty cell are left out
    for suffix, keep in split.items():
        d = os.path.join(HERE, "mondial", "data")
        write(f"{d}/country{suffix}.csv", ["code", "area", "population", "religion"],
              [[r["Code"], r["Area"], r["Population"], cls[r["Code"]]] for r in m("country")
               if keep(r["Code"]) and full(r, ["Area", "Population"])])
        write(f"{d}/encompasses{suffix}.csv", ["country", "continent", "percentage"],
              [[r["Country"], r["Continent"], r["Percentage"]] for r in m("encompasses") if keep(r["Country"])])
        ecol = ["GDP", "Agriculture", "Service", "Industry", "Inflation"]
        write(f"{d}/economy{suffix}.csv", ["country", "gdp", "agriculture", "service", "industry", "inflation"],
              [[r["Country"]] + [r[c] for c in ecol] for r in m("economy") if keep(r["Country"]) and full(r, ecol)])
        pcol = ["Population_Growth", "Infant_Mortality"]
        write(f"{d}/population{suffix}.csv", ["country", "growth", "infant_mortality"],
              [[r["Country"]] + [r[c] for c in pcol] for r in m("population") if keep(r["Country"]) and full(r, pcol)])
        write(f"{d}/politics{suffix}.csv", ["country", "government", "independent", "dependent"],
              [[r["Country"], r["Government"] or "unknown", "yes" if r["Independence"] else "no",
                "yes" if r["Dependent"] else "no"] for r in m("politics") if keep(r["Country"])])
        write(f"{d}/language{suffix}.csv", ["country", "language", "percentage"],
              [[r["Country"], r["Name"], r["Percentage"]] for r in m("language")
               if keep(r["Country"]) and full(r, ["Percentage"])])


def fate(src, name, out):
    for side in ("guest", "host"):
        rows = read(os.path.join(src, "fate", f"{name}_hetero_{side}.csv"))
        header = list(rows[0].keys())
        for suffix, keep in (("", lambda i: i % 3 != 0), ("_test", lambda i: i % 3 == 0)):
            write(os.path.join(HERE, out, "data", f"{side}{suffix}.csv"), header,
                  [[r[h] for h in header] for r in rows if keep(int(r["id"]))])


if __name__ == "__main__":
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "..", "shared", "data")
    mondial(src)
    fate(src, "breast", "breast")
    fate(src, "default_credit", "credit")
