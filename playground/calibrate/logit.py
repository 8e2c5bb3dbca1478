"""A small L2-penalised logistic regression, fitted by Newton's method (IRLS): deterministic, numpy only.

Model: ``P(y = 1 | x) = sigma(b + w . z)`` with ``z = (x - mean) / sd`` the features standardised on the
training rows (a feature of zero spread gets ``sd = 1``) and ``sigma(t) = 1 / (1 + exp(-t))``.  The fit
minimises the penalised negative log-likelihood::

    L(b, w) = - sum_i [y_i log p_i + (1 - y_i) log(1 - p_i)] + (l2 / 2) * |w|^2      (b is not penalised)

by Newton steps ``theta <- theta - H^-1 g`` from ``theta = 0`` until the largest step is below ``tol`` (at
most ``max_iter`` steps).  With ``l2 = 0`` this is the maximum-likelihood fit (a test checks it against
``statsmodels``' ``Logit``).  Used by :mod:`playground.calibrate.ranker_cv`; no library random stream.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["LogisticModel", "fit_logistic"]


@dataclass(frozen=True)
class LogisticModel:
    """A fitted model: standardisation, intercept and weights (on the standardised features)."""

    mean: np.ndarray
    sd: np.ndarray
    intercept: float
    weights: np.ndarray

    def predict(self, x: np.ndarray) -> np.ndarray:
        """``P(y = 1 | x)`` of each row of ``x``."""
        z = (np.asarray(x, dtype=float) - self.mean) / self.sd
        p: np.ndarray = 1.0 / (1.0 + np.exp(-(self.intercept + z @ self.weights)))
        return p


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0, *, max_iter: int = 100,
                 tol: float = 1e-10) -> LogisticModel:
    """Fit the model of the module docstring to rows ``x`` (n by k) and labels ``y`` (0/1)."""
    x = np.asarray(x, dtype=float)
    t = np.asarray(y, dtype=float)
    if x.ndim != 2 or len(x) != len(t):
        raise ValueError(f"x must be n by k with one label per row, got {x.shape} and {t.shape}")
    if len(t) == 0 or t.min() == t.max():
        raise ValueError("a logistic fit needs both classes among the labels")
    mean = x.mean(axis=0)
    sd = x.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    a = np.hstack([np.ones((len(x), 1)), (x - mean) / sd])
    pen = np.full(a.shape[1], float(l2))
    pen[0] = 0.0
    theta = np.zeros(a.shape[1])
    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(-(a @ theta)))
        grad = a.T @ (p - t) + pen * theta
        hess = (a * (p * (1.0 - p))[:, None]).T @ a + np.diag(pen)
        step = np.linalg.solve(hess, grad)
        theta = theta - step
        if float(np.abs(step).max()) < tol:
            break
    return LogisticModel(mean, sd, float(theta[0]), theta[1:].copy())
