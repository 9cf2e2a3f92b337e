"""Run a policy exported by `rlx export CHECKPOINT -o policy.rlxp`, with NumPy alone.

    from rlx_policy import Policy
    policy = Policy("policy.rlxp")
    action = policy.act(observation, action_mask=None, deterministic=True)

A recurrent policy (use_lstm, use_gru) carries a state from step to step, which the caller keeps:

    state = policy.initial_state()                # zeros, at every episode's start
    action, state = policy.act(observation, state, action_mask=None, deterministic=True)

act(observation, state) gives (action, next state) for any policy (a memoryless one's state is
empty); act(observation) refuses a recurrent policy.

act() takes one observation as Gymnasium gives it: an array for a Box (uint8 images as they
are), an int for a Discrete, a dict keyed by a Dict space's keys, a tuple for a Tuple, nested
as the space is; and, for Discrete and MultiDiscrete actions, an optional action mask (one entry
per value, nonzero = legal; MultiDiscrete: each element's values one after another). It returns
an int (Discrete), an int64 array of the space's shape (MultiDiscrete; its starts included), an
int8 array (MultiBinary) or a float32 array (Box, clipped to its bounds).

The file holds the network (its layers, spelled out in the header), the weights, the spaces and
the observation normalisation of training, so act() takes raw observations as the environment gives
them (flattened as gymnasium.spaces.flatten does, uint8 Boxes scaled to [0, 1] by their bounds, as
rlx's workers do) and returns what `rlx evaluate` would send to the environment, never an action the
mask forbids. The format: rlx's models/policy_file.h; rlx::Policy (models/policy.h) is the C++ reader.

Run as a script to check a policy against an `rlx evaluate --trace` file (rlx_trace_check.py,
beside this file): python3 rlx_policy.py policy.rlxp --check-trace steps.jsonl [--atol 1e-4]
"""

import json
import os
import struct
import sys
import zlib

try:
    import numpy as np
except ImportError as _error:  # one line saying what to install, not a traceback
    _NO_NUMPY = ("rlx_policy.py needs NumPy, which this Python (%s) lacks (%s): on Debian `apt-get install "
                 "python3-numpy` (for /usr/bin/python3), or `pip install numpy` in a venv" % (sys.executable, _error))
    if __name__ == "__main__":
        print("error: " + _NO_NUMPY, file=sys.stderr)
        sys.exit(2)
    raise ImportError(_NO_NUMPY) from None

MAGIC = b"\x89RLXP\r\n\x1a"
FORMAT_VERSION = 2
_PREAMBLE = 16
_CHECKSUM = 4


class PolicyFileError(Exception):
    """A policy file that cannot be used: truncated, damaged, or of another format."""


def _activation(name):
    if name == "tanh":
        return np.tanh
    if name == "relu":
        return lambda x: np.maximum(x, np.float32(0))
    if name == "none":
        return lambda x: x
    raise PolicyFileError("unknown activation %r" % name)


def _bounds(value, size):
    """A Box's bounds as float32 [size]: one value for every element, or a list of one per element;
    each a number or "inf" / "-inf", which float() reads too."""
    if isinstance(value, list):
        if len(value) != size:
            raise PolicyFileError("a Box of %d elements with %d bounds" % (size, len(value)))
        return np.array([float(v) for v in value], dtype=np.float32)
    return np.full(size, float(value), dtype=np.float32)


class _Dense:
    """One layer y = activation(x W^T + b), W [out, in] from the flat parameters."""

    def __init__(self, spec, params):
        n_in, n_out = int(spec["in"]), int(spec["out"])
        w, b = int(spec["weight_offset"]), int(spec["bias_offset"])
        if w + n_in * n_out > params.size or b + n_out > params.size:
            raise PolicyFileError("layer %s reaches past the parameters" % spec["name"])
        self.weight_t = params[w:w + n_in * n_out].reshape(n_out, n_in).T.copy()
        self.bias = params[b:b + n_out].copy()
        self.activation = _activation(spec["activation"])

    def __call__(self, x):
        return self.activation(x @ self.weight_t + self.bias).astype(np.float32, copy=False)


def _parameter(spec, params, suffix, shape):
    """The values of a registered kind's parameter "<name>.<suffix>", checked to have the shape."""
    name = spec["name"]
    entry = {e["name"]: e for e in spec["parameters"]}.get(name + "." + suffix)
    if entry is None or [int(d) for d in entry["shape"]] != shape:
        raise PolicyFileError("%s layer %s: no parameter %s.%s of shape %s" % (spec["kind"], name, name, suffix, shape))
    offset, count = int(entry["offset"]), int(np.prod(shape))
    if offset < 0 or offset + count > params.size:
        raise PolicyFileError("layer %s reaches past the parameters" % name)
    return params[offset:offset + count]


class _Conv2d:
    """A "conv2d" layer (rlx's models/conv2d_layer.h): images channels-last (HWC), flattened
    row-major, in and out; zero padding on every side; weight [out_channels, kernel, kernel,
    in_channels], so that one output pixel is its HWC input patch times one weight row, plus bias.
    With image_offset and passthrough (0 when absent), the image lies among other features of the
    row, which follow the output unchanged and are not activated."""

    _ATTRIBUTES = ("height", "width", "in_channels", "out_channels", "kernel", "stride", "padding")
    _OPTIONAL = ("image_offset", "passthrough")

    def __init__(self, spec, params):
        name, attributes = spec["name"], spec["attributes"]
        unknown = sorted(set(attributes) - set(self._ATTRIBUTES) - set(self._OPTIONAL))
        if unknown:
            raise PolicyFileError("conv2d layer %s: unknown attribute %r" % (name, unknown[0]))
        missing = [key for key in self._ATTRIBUTES if key not in attributes]
        if missing:
            raise PolicyFileError("conv2d layer %s: attribute %r is missing" % (name, missing[0]))
        h, w, c, o, k, s, p = (int(attributes[key]) for key in self._ATTRIBUTES)
        before, passthrough = (int(attributes.get(key, 0)) for key in self._OPTIONAL)
        if (min(h, w, c, o, k, s) < 1 or p < 0 or k > h + 2 * p or k > w + 2 * p
                or not 0 <= before <= passthrough):
            raise PolicyFileError("conv2d layer %s: bad attributes %s" % (name, json.dumps(attributes)))
        self.shape, self.kernel, self.stride, self.padding = (h, w, c), k, s, p
        self.image = (before, before + h * w * c)  # the image's features in a row
        self.out_hw = ((h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1)
        if (int(spec["in"]) != h * w * c + passthrough
                or int(spec["out"]) != self.out_hw[0] * self.out_hw[1] * o + passthrough):
            raise PolicyFileError("conv2d layer %s: in %s and out %s do not fit its attributes %s"
                                  % (name, spec["in"], spec["out"], json.dumps(attributes)))
        self.weight_t = _parameter(spec, params, "weight", [o, k, k, c]).reshape(o, k * k * c).T.copy()  # [patch, o]
        self.bias = _parameter(spec, params, "bias", [o]).copy()
        self.activation = _activation(spec["activation"])

    def __call__(self, x):
        (h, w, c), k, s, p = self.shape, self.kernel, self.stride, self.padding
        x = x.reshape(-1, x.shape[-1])
        first, end = self.image
        images = x[:, first:end].reshape(-1, h, w, c)
        if p:
            images = np.pad(images, ((0, 0), (p, p), (p, p), (0, 0)))
        images = np.ascontiguousarray(images, dtype=np.float32)
        out_h, out_w = self.out_hw
        n, row, col, channel = images.strides
        patches = np.lib.stride_tricks.as_strided(  # [N, out_h, out_w, k, k, c], read-only views
            images, shape=(images.shape[0], out_h, out_w, k, k, c),
            strides=(n, row * s, col * s, row, col, channel), writeable=False)
        y = patches.reshape(-1, k * k * c) @ self.weight_t + self.bias
        y = self.activation(y.reshape(images.shape[0], -1)).astype(np.float32, copy=False)
        if x.shape[1] == end - first:
            return y
        return np.concatenate([y, x[:, :first], x[:, end:]], axis=1).astype(np.float32, copy=False)


def _sigmoid(x):
    """sigmoid as rlx's kernel computes it: (1 + tanh(x / 2)) / 2, in float32."""
    return np.float32(0.5) + np.float32(0.5) * np.tanh(np.float32(0.5) * x)


class _Recurrent:
    """An "lstm" or "gru" layer (rlx's models/recurrent_layers.h): nn.LSTMCell or nn.GRUCell of H =
    "hidden" units, with PyTorch's parameters and gate order (i, f, g, o; r, z, n). Its state lies at
    "state_offset" in the model's: LSTM [h, c], GRU [h]; a step overwrites it and gives the new h."""

    recurrent = True

    def __init__(self, spec, params):
        name, attributes = spec["name"], spec["attributes"]
        self.lstm = spec["kind"] == "lstm"
        if sorted(attributes) != ["hidden"]:
            raise PolicyFileError("%s layer %s: attributes %s, expected {\"hidden\": H}"
                                  % (spec["kind"], name, json.dumps(attributes)))
        h, n_in = int(attributes["hidden"]), int(spec["in"])
        if h < 1 or n_in < 1 or int(spec["out"]) != h:
            raise PolicyFileError("%s layer %s: in %s and out %s do not fit hidden %d"
                                  % (spec["kind"], name, spec["in"], spec["out"], h))
        g = (4 if self.lstm else 3) * h
        self.hidden, self.state_size = h, (2 if self.lstm else 1) * h
        self.state_offset = int(spec["state_offset"])
        self.w_ih_t = _parameter(spec, params, "weight_ih", [g, n_in]).reshape(g, n_in).T.copy()
        self.w_hh_t = _parameter(spec, params, "weight_hh", [g, h]).reshape(g, h).T.copy()
        self.b_ih = _parameter(spec, params, "bias_ih", [g]).copy()
        self.b_hh = _parameter(spec, params, "bias_hh", [g]).copy()
        self.activation = _activation(spec["activation"])

    def step(self, x, state):
        """y [rows, H] for x [rows, in]; state, the model's [rows, S], read and overwritten."""
        h, first = self.hidden, self.state_offset
        own = state[:, first:first + self.state_size]  # a view: written in place
        from_input = x @ self.w_ih_t + self.b_ih
        from_state = own[:, :h] @ self.w_hh_t + self.b_hh
        if self.lstm:
            gates = from_input + from_state
            i, f, o = _sigmoid(gates[:, :h]), _sigmoid(gates[:, h:2 * h]), _sigmoid(gates[:, 3 * h:])
            c = f * own[:, h:] + i * np.tanh(gates[:, 2 * h:3 * h])
            new_h = o * np.tanh(c)
            own[:, h:] = c
        else:
            r = _sigmoid(from_input[:, :h] + from_state[:, :h])
            z = _sigmoid(from_input[:, h:2 * h] + from_state[:, h:2 * h])
            n = np.tanh(from_input[:, 2 * h:] + r * from_state[:, 2 * h:])
            new_h = (np.float32(1) - z) * n + z * own[:, :h]
        own[:, :h] = new_h
        return self.activation(new_h).astype(np.float32, copy=False)


# The layer kinds this reader runs; a file with another kind (registered in C++ only) is refused.
_LAYER_KINDS = {"dense": _Dense, "conv2d": _Conv2d, "lstm": _Recurrent, "gru": _Recurrent}


def _layer(spec, params):
    kind = spec.get("kind", "dense")
    if kind not in _LAYER_KINDS:
        raise PolicyFileError("layer %s is of kind %r, which this reader cannot run (it runs the kinds %s)"
                              % (spec["name"], kind, ", ".join(sorted(_LAYER_KINDS))))
    return _LAYER_KINDS[kind](spec, params)


def _chain(specs, params):
    """The chain's layers as one function run(x, state): x [rows, in] through every layer, the
    recurrent ones stepping state [rows, S] in place (None for a chain without them)."""
    layers = [_layer(spec, params) for spec in specs]

    def run(x, state=None):
        for layer in layers:
            x = layer.step(x, state) if getattr(layer, "recurrent", False) else layer(x)
        return x
    return run


def _read(path):
    with open(path, "rb") as f:
        data = f.read()
    name = str(path)
    if len(data) < _PREAMBLE + _CHECKSUM or data[:8] != MAGIC:
        raise PolicyFileError("%s: not an rlx policy file (no \\x89RLXP magic)" % name)
    version, header_len = struct.unpack_from("<II", data, 8)
    if version not in (FORMAT_VERSION - 1, FORMAT_VERSION):
        raise PolicyFileError("%s: format version %d, this reader reads versions %d and %d"
                              % (name, version, FORMAT_VERSION - 1, FORMAT_VERSION))
    if _PREAMBLE + header_len + _CHECKSUM > len(data):
        raise PolicyFileError("%s: truncated: %d bytes cannot hold its %d-byte header" % (name, len(data), header_len))
    try:
        header = json.loads(data[_PREAMBLE:_PREAMBLE + header_len].decode("utf-8"))
        data_floats = int(header["data_floats"])
    except (ValueError, KeyError, TypeError) as error:
        raise PolicyFileError("%s: damaged header: %s" % (name, error)) from None
    data_start = (_PREAMBLE + header_len + 7) // 8 * 8
    expected = data_start + 4 * data_floats + _CHECKSUM
    if len(data) != expected:
        raise PolicyFileError("%s: %s: %d bytes, its header promises %d"
                              % (name, "truncated" if len(data) < expected else "trailing bytes", len(data), expected))
    (crc,) = struct.unpack_from("<I", data, len(data) - _CHECKSUM)
    if zlib.crc32(data[:len(data) - _CHECKSUM]) & 0xFFFFFFFF != crc:
        raise PolicyFileError("%s: damaged: its CRC-32 does not match its contents" % name)
    if header.get("format") != "rlx-policy":
        raise PolicyFileError("%s: header format is %r" % (name, header.get("format")))
    floats = np.frombuffer(data, dtype="<f4", count=data_floats, offset=data_start).astype(np.float32)

    def array(key):
        entry = header["arrays"][key]
        offset, count = int(entry["offset"]), int(entry["count"])
        if offset < 0 or count < 0 or offset + count > data_floats:
            raise PolicyFileError("%s: array %r does not fit the data" % (name, key))
        return floats[offset:offset + count]
    if version == 1:  # rlx before model specs: the model's parts at the header's top level
        header["model"] = {"kind": header["policy"], "observation_size": header["observation_size"],
                           "action_space": header["action_space"]}
    return header, array


# The logit of an action its mask forbids (rlx's kMaskedLogit, models/action_sampling.h).
MASKED_LOGIT = np.float32(-1e8)


def _shape_size(shape):
    return int(np.prod([int(d) for d in shape], dtype=np.int64))


class _Leaf:
    """One leaf of an observation space (rlx's core/observation_layout.h): where it is stored
    (floats or bytes, from offset, slots of them) and where it lands in the flat input."""

    def __init__(self, path, space, layout):
        self.path, self.type = path, space["type"]
        self.shape = tuple(int(d) for d in space.get("shape", []))
        self.slots = 1 if self.type == "Discrete" else len(space["nvec"]) if self.type == "MultiDiscrete" \
            else _shape_size(self.shape)
        self.bytes = self.type == "MultiBinary" or (self.type == "Box" and space.get("dtype") == "uint8")
        self.offset = layout.byte_slots if self.bytes else layout.float_slots
        if self.bytes:
            layout.byte_slots += self.slots
        else:
            layout.float_slots += self.slots
        if self.type == "Discrete":
            self.counts, self.starts = [int(space["n"])], [int(space.get("start", 0))]
        elif self.type == "MultiDiscrete":
            self.counts = [int(n) for n in space["nvec"]]
            self.starts = [int(v) for v in space.get("start") or [0] * len(self.counts)]
        self.flat_size = sum(self.counts) if self.type in ("Discrete", "MultiDiscrete") else self.slots
        if self.type == "Box":
            self.low, self.high = _bounds(space["low"], self.slots), _bounds(space["high"], self.slots)
            if self.bytes:  # flat = (x - low) * (1 / (high - low)), in float32 as the workers compute it
                span = self.high - self.low
                self.scale = np.where(span > 0, np.float32(1) / np.where(span > 0, span, 1), 0).astype(np.float32)

    def describe(self):
        return "observation%s (%s)" % (self.path, self.type)

    def flatten(self, value):
        """The leaf's part of the flat input, float32 [flat_size]."""
        values = np.asarray(value).reshape(-1)
        if values.size != self.slots:
            raise ValueError("act needs %s with %d values, got %d" % (self.describe(), self.slots, values.size))
        if self.type == "Box":
            x = values.astype(np.float32)
            return (x - self.low) * self.scale if self.bytes else x
        if self.type == "MultiBinary":
            return (values != 0).astype(np.float32)
        out = np.zeros(self.flat_size, dtype=np.float32)  # one-hot per element; a value outside: all zero
        at = 0
        for v, n, start in zip(values, self.counts, self.starts):
            index = int(v) - start
            if 0 <= index < n:
                out[at + index] = 1
            at += n
        return out

    def unstore(self, floats, stored_bytes):
        """The leaf's value, as Gymnasium gives it, from a stored observation's floats and bytes."""
        part = (stored_bytes if self.bytes else floats)[self.offset:self.offset + self.slots]
        if self.type == "Discrete":
            return int(part[0])
        dtype = {"Box": np.uint8 if self.bytes else np.float32, "MultiBinary": np.int8, "MultiDiscrete": np.int64}
        return np.asarray(part, dtype=np.float64).astype(dtype[self.type]).reshape(self.shape)


class ObservationSpace:
    """An observation space from its JSON (rlx's core/space_json.h): its leaves in flatten order,
    the slots of the stored form (floats, bytes) and the flat input's width."""

    def __init__(self, space):
        self.space = space
        self.float_slots = self.byte_slots = 0
        self.leaves = []
        self._tree = self._build(space, "")
        self.flat_size = sum(leaf.flat_size for leaf in self.leaves)

    def _build(self, space, path):
        kind = space["type"]
        if kind == "Dict":
            return ("Dict", [(entry["key"], self._build(entry["space"], "%s[%r]" % (path, entry["key"])))
                             for entry in space["spaces"]])
        if kind == "Tuple":
            return ("Tuple", [self._build(child, "%s[%d]" % (path, i)) for i, child in enumerate(space["spaces"])])
        if kind not in ("Box", "Discrete", "MultiDiscrete", "MultiBinary"):
            raise PolicyFileError("unknown observation space type %r" % kind)
        leaf = _Leaf(path, space, self)
        self.leaves.append(leaf)
        return ("Leaf", leaf)

    def flatten(self, observation):
        """gymnasium.spaces.flatten of one observation (uint8 Boxes scaled), float32 [flat_size]."""
        parts = []

        def walk(node, value, path):
            kind, children = node
            if kind == "Leaf":
                parts.append(children.flatten(value))
            elif kind == "Dict":
                if not hasattr(value, "keys"):
                    raise ValueError("act needs observation%s as a dict with keys %s, got %s"
                                     % (path, [key for key, _ in children], type(value).__name__))
                for key, child in children:
                    if key not in value:
                        raise ValueError("act needs observation%s[%r], which the observation lacks" % (path, key))
                    walk(child, value[key], "%s[%r]" % (path, key))
            else:
                if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__len__") or len(value) != len(children):
                    raise ValueError("act needs observation%s as a tuple of %d values" % (path, len(children)))
                for i, child in enumerate(children):
                    walk(child, value[i], "%s[%d]" % (path, i))
        walk(self._tree, observation, "")
        return np.concatenate(parts).astype(np.float32, copy=False)

    def unstore(self, floats, stored_bytes):
        """The observation as Gymnasium gives it (dicts, tuples, arrays) from its stored form."""
        floats, stored_bytes = np.asarray(floats, dtype=np.float32), np.asarray(stored_bytes, dtype=np.int64)
        if floats.size != self.float_slots or stored_bytes.size != self.byte_slots:
            raise ValueError("a stored observation of this space has %d floats and %d bytes, got %d and %d"
                             % (self.float_slots, self.byte_slots, floats.size, stored_bytes.size))

        def walk(node):
            kind, children = node
            if kind == "Leaf":
                return children.unstore(floats, stored_bytes)
            if kind == "Dict":
                return {key: walk(child) for key, child in children}
            return tuple(walk(child) for child in children)
        return walk(self._tree)


class Policy:
    """An exported policy, ready to act on raw observations."""

    def __init__(self, path, seed=0):
        header, array = _read(path)
        try:
            self._init(header, array)
        except (KeyError, TypeError, ValueError) as error:
            raise PolicyFileError("%s: bad header: %s" % (path, error)) from None
        self._rng = np.random.default_rng(seed)

    def _init(self, header, array):
        model = header["model"]  # the model spec (rlx's models/model_spec_json.h)
        self.kind = model["kind"]
        self.env_id = header["source"]["env"]
        self.algorithm = header["source"]["algorithm"]
        self.observation_size = int(model["observation_size"])  # the flat input's width
        self.observation_space = ObservationSpace(model.get("observation_space") or {
            "type": "Box", "shape": [self.observation_size], "low": "-inf", "high": "inf", "dtype": "float32"})
        if self.observation_space.flat_size != self.observation_size:
            raise ValueError("observation space flattens to %d values, the model takes %d"
                             % (self.observation_space.flat_size, self.observation_size))
        self.trained_with_mask = bool(model.get("action_mask", False))
        space = self.action_space = model["action_space"]
        kind = space["type"]
        self.discrete_actions = kind == "Discrete"
        self.indexed_actions = kind != "Box"
        self.action_low = self.action_high = None
        if kind == "Discrete":
            self.action_size, self.action_categories = int(space["n"]), [int(space["n"])]
            self._starts = np.array([int(space.get("start", 0))], dtype=np.int64)
        elif kind == "MultiDiscrete":
            self.action_categories = [int(n) for n in space["nvec"]]
            self.action_size = len(self.action_categories)
            self._starts = np.array(space.get("start") or [0] * self.action_size, dtype=np.int64)
        elif kind == "MultiBinary":
            self.action_size = _shape_size(space["shape"])
            self.action_categories = [2] * self.action_size
            self._starts = np.zeros(self.action_size, dtype=np.int64)
        elif kind == "Box":
            self.action_size, self.action_categories = _shape_size(space["shape"]), []
            self.action_low = _bounds(space["low"], self.action_size)
            self.action_high = _bounds(space["high"], self.action_size)
        else:
            raise ValueError("unknown action space type %r" % kind)
        self._action_shape = tuple(int(d) for d in space.get("shape", [self.action_size]))
        self.mask_size = sum(self.action_categories) if kind in ("Discrete", "MultiDiscrete") else 0
        params = array("parameters")
        chains = header["chains"]
        norm = header["obs_normalization"]
        if norm is None:
            self._mean = None
        else:
            self._mean = array("obs_mean")
            self._std = np.sqrt(array("obs_var") + np.float32(norm["epsilon"])).astype(np.float32)
            self._clip = np.float32(norm["clip"])
        self.epsilon = float(header["epsilon"])
        self.state_size = int(header.get("state_size", 0))  # a recurrent model's floats of state
        self.recurrent = self.state_size > 0
        self._core = (model.get("core") or {}).get("kind", "")
        if self.kind == "actor_critic":
            self._trunk = _chain(chains["trunk"], params)
            self._policy_body = _chain(chains["policy"][:-1], params)  # to pi_out's input (gSDE's latent)
            self._policy_out = _layer(chains["policy"][-1], params)
            # A recurrent model steps every core, the value's too, so that its state is rlx's.
            self._value = _chain(chains["value"], params) if self.recurrent else None
            offset, self._sde = header["log_std_offset"], "sde" in model.get("heads", {})
            if not self.indexed_actions:  # the log-std: [A], or gSDE's [latent, A] over pi_out's inputs
                rows = int(chains["policy"][-1]["in"]) if self._sde else 1
                log_std = params[int(offset):int(offset) + rows * self.action_size].reshape(rows, self.action_size)
                self._std_dev = np.exp(log_std).astype(np.float32)
        elif self.kind == "q_network":
            self._trunk = _chain(chains["trunk"], params)
            self._heads = [_layer(spec, params) for spec in chains["heads"]]
        elif self.kind == "squashed_gaussian":
            self._policy = _chain(chains["policy"], params)
        else:
            raise PolicyFileError("unknown policy kind %r" % self.kind)
        cells = [(int(s["state_offset"]), (2 if s["kind"] == "lstm" else 1) * int(s["attributes"]["hidden"]))
                 for layers in chains.values() for s in layers if s.get("kind") in ("lstm", "gru")]
        if sum(size for _, size in cells) != self.state_size or (cells and self.kind != "actor_critic") or any(
                first < 0 or first + size > self.state_size for first, size in cells):
            raise ValueError("its recurrent layers' states (%s) do not fit its %s model's state_size %d" % (
                ", ".join("%d floats at %d" % cell for cell in cells), self.kind, self.state_size))

    def initial_state(self):
        """The state an episode starts from: float32 zeros [state_size] (empty for a memoryless policy)."""
        return np.zeros(self.state_size, dtype=np.float32)

    def _normalize(self, obs):
        if self._mean is None:
            return obs
        return np.clip((obs - self._mean) / self._std, -self._clip, self._clip)

    def _legal(self, action_mask):
        """The mask as bools [mask_size] (None: every action legal); ValueError when it does not fit
        the action space or leaves an element no legal value."""
        if action_mask is None:
            return None
        if self.mask_size == 0:
            raise ValueError("act got an action mask, but the action space %s takes none" % self.action_space["type"])
        legal = np.asarray(action_mask).reshape(-1) != 0
        if legal.size != self.mask_size:
            raise ValueError("act needs an action mask of %d values (one per value of the %s action space), got %d"
                             % (self.mask_size, self.action_space["type"], legal.size))
        at = 0
        for e, n in enumerate(self.action_categories):
            if not legal[at:at + n].any():
                raise ValueError("act got an action mask that allows no action" if len(self.action_categories) == 1
                                 else "act got an action mask that allows no value of action element %d" % e)
            at += n
        return legal

    def _categorical(self, logits, legal, deterministic):
        """One index per action element, each from its segment of the (masked) logits: the argmax,
        or a draw from the softmax."""
        if legal is not None:
            logits = np.where(legal, logits, MASKED_LOGIT)
        indices, at = [], 0
        for n in self.action_categories:
            segment = logits[at:at + n]
            if deterministic:
                indices.append(int(np.argmax(segment)))
            else:
                p = np.exp(segment.astype(np.float64) - segment.max())
                indices.append(int(self._rng.choice(n, p=p / p.sum())))
            at += n
        return np.array(indices, dtype=np.int64)

    def _indexed_action(self, indices):
        values = indices + self._starts
        if self.discrete_actions:
            return int(values[0])
        return values.reshape(self._action_shape).astype(np.int8 if self.action_space["type"] == "MultiBinary" else np.int64)

    def act(self, observation, state=None, *, action_mask=None, deterministic=True):
        """The action for one raw observation (and its optional action mask): an int (Discrete), an
        int64 array (MultiDiscrete), an int8 array (MultiBinary) or a float32 array (Box). With a
        state (initial_state() at an episode's start, then what the step before returned), the pair
        (action, next state); the state passed is left as it was. A recurrent policy needs its state."""
        if state is None:
            if self.recurrent:
                raise ValueError("act: this policy is recurrent (its %s core carries %d floats of state from step "
                                 "to step): call `action, state = policy.act(observation, state)`, with "
                                 "initial_state() at an episode's start" % (self._core, self.state_size))
            return self._act(observation, None, action_mask, deterministic)
        state = np.array(state, dtype=np.float32).reshape(-1)  # a copy, stepped in place
        if state.size != self.state_size:
            raise ValueError("act needs a state of %d floats, got %d (%s)" % (
                self.state_size, state.size, "initial_state() at an episode's start, then the state act returned"
                if self.recurrent else "this policy is memoryless: its state, initial_state(), is empty; an action "
                "mask goes by keyword, action_mask="))
        action = self._act(observation, state[None, :] if self.recurrent else None, action_mask, deterministic)
        return action, state

    def _act(self, observation, state, action_mask, deterministic):
        """act() with the model's state [1, state_size] stepped in place (None: memoryless)."""
        legal = self._legal(action_mask)
        x = self._normalize(self.observation_space.flatten(observation))[None, :]
        if self.kind == "actor_critic":
            features = self._trunk(x, state)
            latent = self._policy_body(features, state)
            out = self._policy_out(latent)[0]
            if self._value is not None:
                self._value(features, state)
            if self.indexed_actions:
                return self._indexed_action(self._categorical(out, legal, deterministic))
            if not deterministic:  # gSDE: a matrix drawn per call, so N(0, latent^2 . std^2 + 1e-6) noise
                sigma = np.sqrt(latent[0] ** 2 @ self._std_dev ** 2 + 1e-6) if self._sde else self._std_dev[0]
                out = out + sigma.astype(np.float32) * self._rng.standard_normal(out.size).astype(np.float32)
            return np.clip(out, self.action_low, self.action_high).astype(np.float32)
        if self.kind == "q_network":
            h = self._trunk(x)
            q = self._heads[0](h)[0]
            if len(self._heads) == 2:  # dueling: Q = V + A - mean(A)
                advantage = self._heads[1](h)[0]
                q = q + advantage - advantage.mean()
            choices = np.arange(self.action_size) if legal is None else np.flatnonzero(legal)
            if not deterministic and self._rng.random() < self.epsilon:
                return self._indexed_action(np.array([self._rng.choice(choices)]))
            return self._indexed_action(np.array([choices[int(np.argmax(q[choices]))]]))
        out = self._policy(x)[0]  # squashed_gaussian: A means, then A log-stds
        mean, log_std = out[:self.action_size], np.clip(out[self.action_size:], -20.0, 2.0)
        noise = 0 if deterministic else np.exp(log_std) * self._rng.standard_normal(self.action_size).astype(np.float32)
        squashed = np.tanh(mean + noise)
        half_range = np.float32(0.5) * (self.action_high - self.action_low)
        return (self.action_low + (squashed + np.float32(1)) * half_range).astype(np.float32)


if __name__ == "__main__":  # the trace check lives beside this file, in rlx_trace_check.py
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from rlx_trace_check import main
    sys.exit(main(sys.argv[1:]))
