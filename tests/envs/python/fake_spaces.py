"""Gymnasium's space classes as rlx's bridge sees them, without gymnasium: the same class names and
attributes (Gymnasium 0.29 / 1.x), for the bridge tests (space_envs.py, reference_envs.py).
"""

import numpy as np


class Box:
    def __init__(self, low, high, shape=None, dtype=np.float32):
        self.dtype = np.dtype(dtype)
        self.shape = tuple(shape) if shape is not None else np.shape(low)
        self.low = np.broadcast_to(np.asarray(low), self.shape).astype(self.dtype)
        self.high = np.broadcast_to(np.asarray(high), self.shape).astype(self.dtype)

    def __repr__(self):
        return f"Box({self.low.min()}, {self.high.max()}, {self.shape}, {self.dtype})"


class Discrete:
    def __init__(self, n, start=0):
        self.n = np.int64(n)
        self.start = np.int64(start)
        self.shape = ()
        self.dtype = np.dtype(np.int64)

    def __repr__(self):
        return f"Discrete({self.n}, start={self.start})"


class MultiDiscrete:
    def __init__(self, nvec, start=None):
        self.nvec = np.array(nvec, dtype=np.int64)
        self.start = np.zeros_like(self.nvec) if start is None else np.array(start, dtype=np.int64)
        self.shape = self.nvec.shape
        self.dtype = np.dtype(np.int64)

    def __repr__(self):
        return f"MultiDiscrete({self.nvec})"


class MultiBinary:
    def __init__(self, n):
        self.n = n
        self.shape = (n,) if isinstance(n, int) else tuple(n)
        self.dtype = np.dtype(np.int8)

    def __repr__(self):
        return f"MultiBinary({self.n})"


class Tuple:
    def __init__(self, spaces):
        self.spaces = tuple(spaces)

    def __repr__(self):
        return "Tuple(" + ", ".join(map(repr, self.spaces)) + ")"


class Dict:
    """Keys sorted for a plain dict, kept in order for a list of pairs, as Gymnasium's Dict does."""

    def __init__(self, spaces):
        self.spaces = dict(sorted(spaces.items())) if isinstance(spaces, dict) else dict(spaces)

    def __repr__(self):
        return "Dict(" + ", ".join(f"{k!r}: {v!r}" for k, v in self.spaces.items()) + ")"


class Text:
    def __init__(self, max_length, min_length=1):
        self.max_length = max_length
        self.min_length = min_length
        self.character_set = frozenset("abc")

    def __repr__(self):
        return f"Text({self.min_length}, {self.max_length}, charset=abc)"


class Graph:
    def __init__(self, node_space, edge_space):
        self.node_space = node_space
        self.edge_space = edge_space

    def __repr__(self):
        return f"Graph({self.node_space!r}, {self.edge_space!r})"


class Sequence:
    def __init__(self, feature_space):
        self.feature_space = feature_space
        self.stack = False

    def __repr__(self):
        return f"Sequence({self.feature_space!r}, stack=False)"


class OneOf:
    """Gymnasium 1.x: one of several spaces; has `spaces` as a Tuple does, and rlx refuses it."""

    def __init__(self, spaces):
        self.spaces = tuple(spaces)

    def __repr__(self):
        return "OneOf(" + ", ".join(map(repr, self.spaces)) + ")"


class Image(Box):
    """A subclass of Box, as users write them: read as a Box."""
