#!/usr/bin/python3
"""Accuracy and AUC of scikit-learn's HistGradientBoostingClassifier and
XGBoost's hist method on a9a (train) and a9a.t (test) in LIBSVM's format,
as boost's TestA9A writes them (BOOST_A9A_OUT), with boost's settings:
TREES trees of depth DEPTH, learning rate 0.3, 32 bins, lambda 1,
min_child_weight 1. Usage: compare_a9a.py DIR TREES DEPTH"""
import sys
import numpy as np
from sklearn.datasets import load_svmlight_file
from compare import compare

d, trees, depth = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
Xtr, ytr = load_svmlight_file(f"{d}/a9a", n_features=123)
Xte, yte = load_svmlight_file(f"{d}/a9a.t", n_features=123)
Xtr, Xte = Xtr.toarray(), Xte.toarray()
ytr, yte = (ytr > 0).astype(float), (yte > 0).astype(float)
compare(Xtr, ytr, Xte, yte, trees, depth)
