"""Tests of dpadmm_lite.topology against closed forms (no networkx)."""

import numpy as np
import pytest
import scipy.sparse

from dpadmm_lite import topology


def _basic_invariants(g, n):
    A = g.adjacency
    assert scipy.sparse.issparse(A) and A.format == "csr" and A.shape == (n, n)
    dense = A.toarray()
    np.testing.assert_array_equal(dense, dense.T)
    assert set(np.unique(dense)) <= {0.0, 1.0}
    assert not dense.diagonal().any()
    np.testing.assert_array_equal(g.degrees, dense.sum(axis=1))
    L = g.laplacian.toarray()
    np.testing.assert_allclose(L.sum(axis=1), 0.0)  # Laplacian rows sum to zero
    np.testing.assert_allclose(L, np.diag(dense.sum(axis=1)) - dense)
    assert g.edges.shape == (dense.sum() / 2, 2) and np.all(g.edges[:, 0] < g.edges[:, 1])
    assert g.layout.shape == (n, 2) and np.all(np.isfinite(g.layout))
    assert g.n_agents == n


@pytest.mark.parametrize("name", topology.NAMES)
@pytest.mark.parametrize("n", [2, 3, 4, 7, 16, 30])
def test_every_topology_is_a_connected_simple_graph(name, n):
    g = topology.make(name, n, seed=1)
    _basic_invariants(g, n)
    assert g.is_connected and g.check_connected() is g
    zeros = np.sum(np.abs(g.laplacian_eigenvalues) < 1e-9)
    assert zeros == 1  # one zero Laplacian eigenvalue ⇔ connected
    assert g.algebraic_connectivity > 1e-9


def test_closed_form_degrees_and_edge_counts():
    n = 9
    ring = topology.make("ring", n)
    np.testing.assert_array_equal(ring.degrees, 2)
    assert ring.n_edges == n
    complete = topology.make("complete", n)
    np.testing.assert_array_equal(complete.degrees, n - 1)
    assert complete.n_edges == n * (n - 1) // 2
    star = topology.make("star", n)
    assert star.degrees[0] == n - 1 and np.all(star.degrees[1:] == 1)
    np.testing.assert_allclose(star.layout[0], 0.0)  # the hub in the middle
    grid = topology.make("grid", n)  # 3 × 3
    assert grid.params["cols"] == 3
    assert sorted(grid.degrees) == [2] * 4 + [3] * 4 + [4]
    assert grid.n_edges == 2 * 3 * 2
    grid = topology.make("grid", 10, cols=4)  # rows of 4, 4, 2
    assert grid.n_edges == (3 + 3 + 1) + (4 + 2)


def test_closed_form_spectra():
    n = 8
    # ring: eigenvalues 2 − 2cos(2πk/n); complete: 0 and n (n−1 times); star: 0, 1 (n−2 times), n
    ring = topology.make("ring", n).laplacian_eigenvalues
    np.testing.assert_allclose(ring, np.sort(2 - 2 * np.cos(2 * np.pi * np.arange(n) / n)), atol=1e-12)
    np.testing.assert_allclose(topology.make("complete", n).laplacian_eigenvalues, [0] + [n] * (n - 1), atol=1e-12)
    np.testing.assert_allclose(topology.make("star", n).laplacian_eigenvalues, [0] + [1] * (n - 2) + [n],
                               atol=1e-12)


def test_laplacian_is_the_neighbour_disagreement():
    g = topology.make("erdos_renyi", 12, seed=3)
    W = np.random.default_rng(0).standard_normal((12, 5))
    slow = np.array([sum(W[i] - W[j] for j in g.neighbors(i)) for i in range(12)])
    np.testing.assert_allclose(g.laplacian @ W, slow, atol=1e-12)
    np.testing.assert_allclose(g.adjacency @ W, [W[g.neighbors(i)].sum(axis=0) for i in range(12)], atol=1e-12)
    P = g.transition_matrix.toarray()
    np.testing.assert_allclose(P.sum(axis=1), 1.0)


def test_erdos_renyi_density_and_seed():
    n, p = 60, 0.2
    g = topology.make("erdos_renyi", n, seed=0, p=p)
    density = g.n_edges / (n * (n - 1) / 2)
    assert abs(density - p) < 0.03
    h = topology.make("erdos_renyi", n, seed=0, p=p)
    assert (g.adjacency != h.adjacency).nnz == 0
    k = topology.make("erdos_renyi", n, seed=1, p=p)
    assert (g.adjacency != k.adjacency).nnz > 0


def test_erdos_renyi_gives_up_with_a_clear_error():
    with pytest.raises(ValueError, match="disconnected in all 100 draws; raise p"):
        topology.make("erdos_renyi", 50, p=0.01)


def test_small_world_rewires_and_keeps_edge_count():
    n, k = 40, 6
    lattice = topology.make("small_world", n, k=k, beta=0.0)
    np.testing.assert_array_equal(lattice.degrees, k)
    g = topology.make("small_world", n, seed=2, k=k, beta=0.3)
    assert g.n_edges == n * k // 2  # rewiring moves edges, never adds or removes them
    assert (g.adjacency != lattice.adjacency).nnz > 0
    assert g.degrees.std() > 0
    assert g.is_connected
    # rewiring shortens paths: the mean shortest path is smaller than the lattice's
    dist = scipy.sparse.csgraph.shortest_path(g.adjacency, unweighted=True)
    dist0 = scipy.sparse.csgraph.shortest_path(lattice.adjacency, unweighted=True)
    assert dist.mean() < dist0.mean()


def test_disconnected_custom_graph_and_check_connected():
    A = np.zeros((4, 4))
    A[0, 1] = A[1, 0] = A[2, 3] = A[3, 2] = 1
    g = topology.from_adjacency(A)
    assert not g.is_connected and g.n_components == 2
    assert np.sum(np.abs(g.laplacian_eigenvalues) < 1e-9) == 2
    with pytest.raises(ValueError, match="topology 'custom' with 4 agents is disconnected"):
        g.check_connected()


@pytest.mark.parametrize("adjacency, match", [
    (np.ones((3, 2)), "square"),
    (np.array([[0, 1], [0, 0]]), "symmetric"),
    (np.array([[1, 1], [1, 0]]), "zero diagonal"),
    (np.array([[0, 2], [2, 0]]), "only 0 and 1"),
    (np.zeros((1, 1)), "at least 2 agents"),
])
def test_from_adjacency_errors(adjacency, match):
    with pytest.raises(ValueError, match=match):
        topology.from_adjacency(adjacency)


@pytest.mark.parametrize("args, kwargs, match", [
    (("ring", 1), {}, "n_agents must be a whole number >= 2"),
    (("torus", 5), {}, r"name must be one of \['complete', 'erdos_renyi', 'grid', 'ring', 'small_world', 'star'\]"),
    (("erdos_renyi", 5), {"p": 0.0}, r"p must be in \(0, 1\]"),
    (("erdos_renyi", 5), {"p": 1.5}, r"p must be in \(0, 1\]"),
    (("small_world", 10), {"k": 3}, r"k must be an even number in \[2, n_agents−1=9\]"),
    (("small_world", 10), {"k": 10}, "k must be an even number"),
    (("small_world", 10), {"beta": 1.5}, r"beta must be in \[0, 1\]"),
    (("grid", 5), {"cols": 6}, r"cols must be in \[1, n_agents=5\]"),
    (("ring", 5), {"p": 0.5}, "topology 'ring' takes options none"),
    (("ring", 5.5), {}, "n_agents must be a whole number"),
])
def test_make_errors(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        topology.make(*args, **kwargs)


def test_draw_frame():
    g = topology.make("star", 5)
    nodes, edges = g.draw_frame()
    assert list(nodes.columns) == ["agent", "x", "y", "degree"] and len(nodes) == 5
    assert list(edges.columns) == ["source", "target", "x", "y", "x2", "y2"] and len(edges) == 4
    np.testing.assert_allclose(edges[["x", "y"]].to_numpy(), 0.0)  # every edge starts at the hub
    np.testing.assert_allclose(edges[["x2", "y2"]].to_numpy(), g.layout[edges["target"]])
    assert "star" in repr(g)
