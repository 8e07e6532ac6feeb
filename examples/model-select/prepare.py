"""Writes this example's data: a hospital (north) holds three features of
150 patients and, for each of three candidate models, its out-of-fold
predictions from 5-fold cross-validation (each patient predicted by the
model trained on the other four folds); the police (south) hold the labels
of 140 of the patients and of 10 others. The labels used to train each fold
stand for the output of a privacy-preserving learner (Vaidya and Clifton's,
in Yang, Zhong and Wright's protocol); only the predictions ship.

python3 prepare.py  (deterministic: seed 33)
"""
import math
import random

r = random.Random(33)
ids = [f"p{2000 + i}" for i in range(160)]
rows = {}
for i in ids:
    age = r.randint(20, 80)
    bmi = round(r.gauss(27, 4), 1)
    smoker = r.random() < 0.3
    z = 0.06 * (age - 50) + 0.25 * (bmi - 27) + (1.2 if smoker else 0) + r.gauss(0, 1.2)
    rows[i] = (age, bmi, 1.0 if smoker else 0.0, "yes" if z > 0.3 else "no")

north = ids[:150]
south = ids[10:160]
folds = {i: k % 5 for k, i in enumerate(north)}


def stump(train):
    best = None
    for f in range(3):
        for t in sorted({rows[i][f] for i in train}):
            for hi in ("yes", "no"):
                err = sum((hi if rows[i][f] > t else ("no" if hi == "yes" else "yes")) != rows[i][3] for i in train)
                if best is None or err < best[0]:
                    best = (err, f, t, hi)
    _, f, t, hi = best
    lo = "no" if hi == "yes" else "yes"
    return lambda i: hi if rows[i][f] > t else lo


def centroid(train):
    mean = [sum(rows[i][f] for i in train) / len(train) for f in range(3)]
    sd = [math.sqrt(sum((rows[i][f] - mean[f]) ** 2 for i in train) / len(train)) or 1 for f in range(3)]
    cent = {}
    for c in ("yes", "no"):
        m = [i for i in train if rows[i][3] == c]
        cent[c] = [sum((rows[i][f] - mean[f]) / sd[f] for i in m) / len(m) for f in range(3)]

    def pred(i):
        x = [(rows[i][f] - mean[f]) / sd[f] for f in range(3)]
        return min(("no", "yes"), key=lambda c: sum((x[f] - cent[c][f]) ** 2 for f in range(3)))
    return pred


def majority(train):
    yes = sum(rows[i][3] == "yes" for i in train)
    c = "yes" if yes * 2 > len(train) else "no"
    return lambda i: c


models = {"stump": stump, "centroid": centroid, "majority": majority}
preds = {m: {} for m in models}
for k in range(5):
    train = [i for i in north if folds[i] != k and i in set(south)]
    for m, learn in models.items():
        h = learn(train)
        for i in north:
            if folds[i] == k:
                preds[m][i] = h(i)

with open("data/predictions.csv", "w") as f:
    f.write("patient,centroid,majority,stump\n")
    for i in north:
        f.write(f"{i},{preds['centroid'][i]},{preds['majority'][i]},{preds['stump'][i]}\n")
with open("data/labels.csv", "w") as f:
    f.write("patient,risk\n")
    for i in sorted(south, key=lambda _: r.random()):
        f.write(f"{i},{rows[i][3]}\n")
