"""Python envs with every Gymnasium space, for tests/envs/python_spaces_test.cc: structured
observations, uint8 images, Discrete / MultiDiscrete / MultiBinary actions echoed back, RLlib's
and SB3's action masks, and the spaces and values rlx refuses. None imports gymnasium: the spaces
are fake_spaces.py's.
"""

import numpy as np

from fake_spaces import Box, Dict, Discrete, Graph, Image, MultiBinary, MultiDiscrete, OneOf, Sequence, Text, Tuple


class _Counting:
    """reset() and step() return self._obs(t), t the episode's step; reward 0."""

    def reset(self, seed=None, options=None):
        self.t = 0
        return self._obs(0), {}

    def step(self, action):
        self.t += 1
        return self._obs(self.t), 0.0, False, False, {}


class AllLeaves(_Counting):
    """A Dict of every leaf kind, nested, its keys given unsorted (Gymnasium sorts a plain dict's)."""

    def __init__(self):
        self.observation_space = Dict({
            "sensors": Dict({"position": Box(-1, 1, (2,)), "grid": Box(0, 1, (2, 2), dtype=bool)}),
            "level": Discrete(3, start=1),
            "counts": MultiDiscrete([[2, 3], [4, 5]], start=[[0, 0], [-1, 10]]),
            "bits": MultiBinary(3),
            "history": Tuple((Box(-10, 10, (1,), np.float64), Discrete(2))),
            "image": Image(0, 255, (2, 2, 3), np.uint8),
            "steps": Box(0, 1000, (), np.int64),
        })
        self.action_space = Discrete(2)

    def _obs(self, t):
        return {  # not in the space's order: values are looked up by key
            "steps": np.int64(t),
            "sensors": {"grid": np.array([[True, False], [False, t % 2 == 1]]), "position": [0.25, -0.5]},
            "level": 1 + t % 3,
            "image": np.arange(12, dtype=np.uint8).reshape(2, 2, 3) + t,
            "history": (np.array([0.5 * t]), np.int64(t % 2)),
            "counts": np.array([[1, 2], [t % 4 - 1, 10 + t % 5]]),
            "bits": np.array([t % 2, 1, 0], dtype=np.int8),
        }


class ImageEnv(_Counting):
    """An 84x84x3 uint8 image: C-contiguous after reset, strided after a step of action 0, float64
    after a step of action 1 (the same pixels each time)."""

    def __init__(self):
        self.observation_space = Box(0, 255, (84, 84, 3), np.uint8)
        self.action_space = Discrete(2)
        self.image = (np.arange(84 * 84 * 3) % 251).astype(np.uint8).reshape(84, 84, 3)

    def step(self, action):
        strided = np.transpose(self.image.transpose(1, 0, 2).copy(), (1, 0, 2))
        assert not strided.flags.c_contiguous
        return (strided if action == 0 else self.image.astype(np.float64)), 0.0, False, False, {}

    def _obs(self, t):
        return self.image


class _ActionEcho:
    """Observes the last action it got (flattened, padded to 4); asserts its type and dtype."""

    def __init__(self):
        self.observation_space = Box(-100, 100, (4,))

    def reset(self, seed=None, options=None):
        return np.zeros(4, dtype=np.float32), {}

    def step(self, action):
        if isinstance(self.action_space, Discrete):
            assert type(action) is int, repr(action)
            obs = [action, 0, 0, 0]
        else:
            assert action.dtype == np.int64 and action.shape == self.action_space.shape, repr(action)
            obs = action.ravel()
        return np.array(obs, dtype=np.float32), 0.0, False, False, {}


class DiscreteEcho(_ActionEcho):
    action_space = Discrete(4, start=-2)


class MultiDiscreteEcho(_ActionEcho):
    action_space = MultiDiscrete([[2, 3], [4, 5]], start=[[0, 1], [-1, 10]])


class MultiBinaryEcho(_ActionEcho):
    action_space = MultiBinary([2, 2])


class _MaskFaults(_Counting):
    """mask(t): the mask at step t, or at step 2 a faulty one, as the class's fault says (short, empty)."""

    fault = None

    def mask(self, t, legal):
        if t == 2 and self.fault == "short":
            return legal[:-1]
        if t == 2 and self.fault == "empty":
            return np.zeros_like(legal)
        return legal


class RllibMasked(_MaskFaults):
    """RLlib's convention: the mask under the observation's 'action_mask' key (floats); action t % 5
    is illegal at step t."""

    def __init__(self):
        self.observation_space = Dict({"action_mask": Box(0, 1, (5,)), "observations": Box(-1, 1, (3,))})
        self.action_space = Discrete(5)

    def _obs(self, t):
        legal = np.ones(5, dtype=np.float32)
        legal[t % 5] = 0
        return {"observations": np.full(3, 0.5, dtype=np.float32), "action_mask": self.mask(t, legal)}


class RllibMaskShort(RllibMasked):
    fault = "short"


class RllibMaskEmpty(RllibMasked):
    fault = "empty"


class RllibMaskedMultiDiscrete(_Counting):
    """A MultiBinary mask of MultiDiscrete([3 2]) actions, beside a Tuple."""

    def __init__(self):
        self.observation_space = Dict({"action_mask": MultiBinary(5), "state": Tuple((Discrete(4), Box(-1, 1, (1,))))})
        self.action_space = MultiDiscrete([3, 2])

    def _obs(self, t):
        return {"action_mask": np.array([1, 1, 0, 0, 1], dtype=np.int8), "state": (t % 4, np.zeros(1))}


class Sb3Masked(_MaskFaults):
    """SB3's convention: action_masks() (bools); action 1 is illegal on odd steps."""

    def __init__(self):
        self.observation_space = Box(-1, 1, (2,))
        self.action_space = Discrete(3)
        self.mask_calls = 0

    def _obs(self, t):
        return np.array([t, 0], dtype=np.float32) / 10

    def action_masks(self):
        self.mask_calls += 1
        return self.mask(self.t, np.array([True, self.t % 2 == 0, True]))


class Sb3MaskShort(Sb3Masked):
    fault = "short"


class Sb3MaskEmpty(Sb3Masked):
    fault = "empty"


class BothMasks(RllibMasked):
    """Both conventions: the observation's key wins, and action_masks() is never called."""

    def action_masks(self):
        raise AssertionError("action_masks() was called although the observation carries the mask")


class _Broken(_Counting):
    """A Dict observation, broken at step 1 as the class's fault says."""

    fault = None

    def __init__(self):
        self.observation_space = Dict({
            "pos": Box(-1, 1, (2,)),
            "pair": Tuple((Discrete(2), Box(0, 255, (2,), np.uint8))),
            "level": Discrete(3, start=1),
        })
        self.action_space = Discrete(2)

    def _obs(self, t):
        obs = {"pos": np.zeros(2, dtype=np.float32), "pair": (1, np.array([3, 4], dtype=np.uint8)), "level": 1}
        if t == 0:
            return obs
        if self.fault == "shape":
            obs["pos"] = np.zeros(3, dtype=np.float32)
        elif self.fault == "missing":
            del obs["level"]
        elif self.fault == "tuple":
            obs["pair"] = (1, np.array([3, 4], dtype=np.uint8), 5)
        elif self.fault == "byte":
            obs["pair"] = (1, np.array([300, 4]))
        elif self.fault == "not_dict":
            return [0.0, 0.0]
        elif self.fault == "discrete":
            obs["level"] = 7
        return obs


class WrongLeafShape(_Broken):
    fault = "shape"


class MissingKey(_Broken):
    fault = "missing"


class LongTuple(_Broken):
    fault = "tuple"


class NotAByte(_Broken):
    fault = "byte"


class NotADict(_Broken):
    fault = "not_dict"


class DiscreteOutOfRange(_Broken):
    fault = "discrete"


class _Refused:
    """Spaces rlx refuses, set by the subclasses; never stepped."""

    action_space = Discrete(2)

    def reset(self, seed=None, options=None):
        raise AssertionError("never reset")

    def step(self, action):
        raise AssertionError("never stepped")


class Weird:
    pass


class TextInDict(_Refused):
    observation_space = Dict({"sensors": Dict({"caption": Text(10), "x": Box(-1, 1, (1,))}), "y": Box(-1, 1, (1,))})


class GraphInTuple(_Refused):
    observation_space = Tuple((Box(-1, 1, (1,)), Graph(Box(-1, 1, (2,)), Discrete(3))))


class SequenceInDict(_Refused):
    observation_space = Dict({"events": Sequence(Discrete(2))})


class OneOfInTuple(_Refused):
    observation_space = Tuple((Discrete(2), OneOf((Discrete(2), Box(-1, 1, (1,))))))


class UnknownSpace(_Refused):
    observation_space = Weird()


class ComplexBox(_Refused):
    observation_space = Box(-1, 1, (2,), np.complex64)


class DictActions(_Refused):
    observation_space = Box(-1, 1, (1,))
    action_space = Dict({"a": Discrete(2)})


class IntBoxActions(_Refused):
    observation_space = Box(-1, 1, (1,))
    action_space = Box(-3, 3, (2,), np.int64)


class MaskWithBoxActions(_Refused):
    observation_space = Dict({"action_mask": Box(0, 1, (2,)), "observations": Box(-1, 1, (1,))})
    action_space = Box(-1, 1, (2,))


class MaskWrongSize(_Refused):
    observation_space = Dict({"action_mask": Box(0, 1, (4,)), "observations": Box(-1, 1, (1,))})
    action_space = Discrete(5)


class MaskOnly(_Refused):
    observation_space = Dict({"action_mask": MultiBinary(2)})


class Sb3MaskMultiBinary(_Refused):
    observation_space = Box(-1, 1, (1,))
    action_space = MultiBinary(3)

    def action_masks(self):
        return np.ones(6, dtype=bool)
