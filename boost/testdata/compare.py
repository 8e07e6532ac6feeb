"""The reference boosters compare_credit.py and compare_a9a.py run:
scikit-learn's HistGradientBoostingClassifier and XGBoost's hist method
with boost's settings (TREES trees of depth DEPTH, learning rate 0.3, 32
bins, lambda 1, min_child_weight 1, the base score the training rate),
each one's test accuracy and AUC printed."""
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.metrics import roc_auc_score
import xgboost as xgb


def compare(Xtr, ytr, Xte, yte, trees, depth):
    p = ytr.mean()
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
