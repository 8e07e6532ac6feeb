#!/usr/bin/python3
"""Accuracy and AUC of scikit-learn's HistGradientBoostingClassifier and
XGBoost's hist method on FATE's default_credit split, 80/20 by id (id mod
5 = 0 is the test set, as boost's TestDefaultCredit), with boost's
settings: TREES trees of depth DEPTH, learning rate 0.3, 32 bins, lambda 1,
min_child_weight 1. Usage: compare_credit.py DATA_DIR TREES DEPTH"""
import sys
import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.metrics import roc_auc_score
import xgboost as xgb

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
p = ytr.mean()
base = float(np.log(p / (1 - p)))
res = {}
hgb = HistGradientBoostingClassifier(max_iter=trees, max_depth=depth, learning_rate=0.3, max_bins=32,
    l2_regularization=1.0, min_samples_leaf=1, early_stopping=False).fit(Xtr, ytr)
res["sklearn HistGradientBoostingClassifier"] = hgb.predict_proba(Xte)[:, 1]
bst = xgb.train({"tree_method": "hist", "max_depth": depth, "eta": 0.3, "max_bin": 32, "lambda": 1,
    "min_child_weight": 1, "objective": "binary:logistic", "base_score": p, "nthread": 1},
    xgb.DMatrix(Xtr, label=ytr), num_boost_round=trees)
res["xgboost hist"] = bst.predict(xgb.DMatrix(Xte))
for k, pr in res.items():
    print(f"{k}: accuracy {((pr > 0.5) == (yte == 1)).mean():.4f} AUC {roc_auc_score(yte, pr):.4f} on {len(yte)} rows")
