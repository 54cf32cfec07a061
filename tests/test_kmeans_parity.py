"""FIOS's weighted K-means (Rust, ``wafer.api.kmeans``) against scikit-learn's
Lloyd K-means on the same points, weights and initial centres."""

import numpy as np
import pytest
from sklearn.cluster import KMeans

from wafer.api import kmeans


def blobs(seed: int, n: int = 400, d: int = 4, k: int = 5):
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-10, 10, size=(k, d))
    x = np.vstack([c + rng.normal(scale=1.0 + j, size=(n // k, d)) for j, c in enumerate(centres)])
    w = rng.uniform(0.1, 5.0, size=len(x))
    return x, w


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("k", [2, 5, 8])
def test_same_init_same_centres_labels_and_inertia(seed, k):
    x, w = blobs(seed)
    init = x[np.random.default_rng(seed + 100).choice(len(x), size=k, replace=False)]
    ours = kmeans(x.tolist(), w.tolist(), k, init=init.tolist(), max_iter=300)
    sk = KMeans(n_clusters=k, init=init, n_init=1, algorithm="lloyd", tol=0.0, max_iter=300).fit(x, sample_weight=w)
    assert ours["converged"]
    np.testing.assert_allclose(np.array(ours["centers"]), sk.cluster_centers_, rtol=1e-9, atol=1e-9)
    assert ours["labels"] == sk.labels_.tolist()
    assert ours["inertia"] == pytest.approx(sk.inertia_, rel=1e-9)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kmeans_plus_plus_is_as_good_as_sklearns_best_of_ten(seed):
    x, w = blobs(seed)
    ours = kmeans(x.tolist(), w.tolist(), 5, seed=seed)
    sk = KMeans(n_clusters=5, n_init=10, random_state=seed).fit(x, sample_weight=w)
    # One seeded k-means++ run against the best of ten: within 2% on separated blobs.
    assert ours["inertia"] <= 1.02 * sk.inertia_
    # Same input and seed, same output.
    assert kmeans(x.tolist(), w.tolist(), 5, seed=seed) == ours


def test_no_more_points_than_clusters_and_bad_input():
    ours = kmeans([[0.0], [1.0]], [1.0, 1.0], 3)
    assert sorted(ours["labels"]) == [0, 1] and ours["inertia"] == 0
    import wafer

    with pytest.raises(wafer.ConfigError, match="point 1 has 2 coordinates, point 0 has 1"):
        kmeans([[0.0], [1.0, 2.0]], None, 2)
    with pytest.raises(wafer.ConfigError, match="k = 0; must be at least 1"):
        kmeans([[0.0]], None, 0)
    with pytest.raises(wafer.ConfigError, match="no points"):
        kmeans([], None, 2)
    with pytest.raises(wafer.ConfigError, match="not finite"):
        kmeans([[float("nan")], [1.0]], None, 1)
