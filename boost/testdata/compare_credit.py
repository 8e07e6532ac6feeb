#!/usr/bin/python3
"""Accuracy and AUC of scikit-learn's HistGradientBoostingClassifier and
XGBoost's hist method on FATE's default_credit split, 80/20 by id (id mod
5 = 0 is the test set, as boost's TestDefaultCredit), with boost's
settings: TREES trees of depth DEPTH, learning rate 0.3, 32 bins, lambda 1,
min_child_weight 1. Usage: compare_credit.py DATA_DIR TREES DEPTH"""
import sys
import numpy as np
from compare import compare

d, trees, depth = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def load(name):
    with open(f"{d}/default_credit_hetero_{name}.csv") as f:
        head = f.readline().strip().split(",")
    return head, np.loadtxt(f"{d}/default_credit_hetero_{name}.csv", delimiter=",", skiprows=1)
gh, g = load("guest")
hh, h = load("host")
h = h[np.argsort(h[:, 0])]
g = g[np.argsort(g[:, 0])]
assert (g[:, 0] == h[:, 0]).all()
y = g[:, 1]
X = np.hstack([g[:, 2:], h[:, 1:]])
test = (g[:, 0].astype(int) % 5) == 0
Xtr, ytr, Xte, yte = X[~test], y[~test], X[test], y[test]
compare(Xtr, ytr, Xte, yte, trees, depth)
