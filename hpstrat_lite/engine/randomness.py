"""Per-run randomness: every run of a batch draws its weights and dropout masks from its own generators.

A run's seed gives two independent seeds (:func:`run_seeds`, numpy ``SeedSequence``): one for its
initial weights, drawn in the order the parameters are made, one for its dropout masks
(:class:`RunRandom`). A run therefore gives the same numbers inside any batch as trained alone.
"""
from __future__ import annotations

import math

import numpy as np
import torch


# ----------------------------------------------------------------------------------------------
# Per-run randomness
# ----------------------------------------------------------------------------------------------

def run_seeds(seed: int) -> tuple[int, int]:
    """Two independent 63-bit seeds (weights, dropout) derived from a run's seed by numpy's SeedSequence."""
    a, b = np.random.SeedSequence(int(seed)).generate_state(2, dtype=np.uint64)
    return int(a >> np.uint64(1)), int(b >> np.uint64(1))


class _RunInit:
    """Draws each run's initial weights from its own CPU generator, in the order parameters are made."""

    def __init__(self, seeds):
        self.gens = [torch.Generator().manual_seed(run_seeds(s)[0]) for s in seeds]

    def uniform(self, shape, bound: float) -> torch.Tensor:
        """``[R, *shape]`` uniform on ``[-bound, bound]``, run r from run r's generator."""
        return torch.stack([torch.empty(shape).uniform_(-bound, bound, generator=g) for g in self.gens])


def _glorot(fan_in, fan_out) -> float:
    """Bound of PyG's ``glorot`` (Xavier uniform): :math:`\\sqrt{6 / (f_{in} + f_{out})}`."""
    return math.sqrt(6.0 / (fan_in + fan_out))


def _kaiming(fan_in) -> float:
    """Bound of ``torch.nn.Linear``'s default init (weights and bias): :math:`1 / \\sqrt{f_{in}}`."""
    return 1.0 / math.sqrt(fan_in)


_SHIFTS: dict = {}


def _shift_bits(words: torch.Tensor, n: int) -> torch.Tensor:
    """The first ``n`` bits of each row of ``words`` (``[R, W]`` int64) as uint8 0/1 ``[R, n]``, least
    significant bit of each byte first, bytes in memory order, by PyTorch's shifts (any device; on CPU
    :func:`hpstrat_lite.engine.kernels.unpack_bits` gives the same bits in one pass)."""
    dev = str(words.device)
    if dev not in _SHIFTS:
        _SHIFTS[dev] = torch.arange(8, dtype=torch.uint8, device=words.device)
    bits = torch.bitwise_right_shift(words.contiguous().view(torch.uint8).unsqueeze(-1), _SHIFTS[dev])
    return bits.bitwise_and_(1).view(words.shape[0], -1)[:, :n].contiguous()


class RunRandom:
    """Per-run dropout masks: run ``r`` draws from its own generator, so its masks do not depend on
    which other runs share the batch.

    Parameters
    ----------
    seeds : sequence of int
        One seed per run (the dropout seed is derived from it with :func:`run_seeds`).
    device : torch.device
        Where the masks are drawn (a CUDA generator on GPU).
    """

    def __init__(self, seeds, device):
        self.device = torch.device(device)
        self.gens = [torch.Generator(device=self.device).manual_seed(run_seeds(s)[1]) for s in seeds]
        self._ahead: list = []  # masks drawn by peek(), not yet taken by keep()
        self._states_before_ahead = None

    def peek(self, shape, p: float) -> torch.Tensor:
        """Draw the next :meth:`keep` mask now: the next ``keep(shape, p)`` returns this very tensor, so each
        generator's sequence of draws is unchanged (GAT's evaluation pass computes the next training step's
        first attention layer with it, :func:`hpstrat_lite.engine.kernels.gat_layer_ahead`)."""
        if not self._ahead:
            self._states_before_ahead = [g.get_state() for g in self.gens]
        mask = self._draw(shape, p)
        self._ahead.append((tuple(shape), p, mask))
        return mask

    def keep(self, shape, p: float) -> torch.Tensor:
        """Keep-mask ``[R, *shape]`` of 0/1 (uint8): 1 with probability ``1 - p``.

        The dropout scale ``1 / (1 - p)`` is not applied here: the models fold it into the linear map
        that follows each dropout (a small weight tensor), so dropout is one pass over the activations.
        ``p = 0.5`` uses one random bit per entry (fast path); other ``p`` compare a uniform draw.
        Run r's mask comes from run r's generator only.
        """
        if self._ahead:
            want, p_ahead, mask = self._ahead.pop(0)
            if want != tuple(shape) or p_ahead != p:
                raise RuntimeError(f"keep({tuple(shape)}, {p}) after peek({want}, {p_ahead}): masks drawn ahead "
                                   "must be taken in the order they were drawn.")
            return mask
        return self._draw(shape, p)

    def _draw(self, shape, p: float) -> torch.Tensor:
        n, runs = math.prod(shape), len(self.gens)
        if p == 0.5:  # one random bit per entry: 64 per draw of run r's generator
            words = torch.empty(runs, (n + 63) // 64, dtype=torch.int64, device=self.device)
            for r, g in enumerate(self.gens):
                torch.randint(-2 ** 63, 2 ** 63 - 1, words.shape[1:], dtype=torch.int64, generator=g, out=words[r])
            if self.device.type == "cpu":
                from .kernels import unpack_bits

                return unpack_bits(words, n).view(runs, *shape)
            return _shift_bits(words, n).view(runs, *shape)
        out = torch.empty(runs, n, dtype=torch.uint8, device=self.device)
        for r, g in enumerate(self.gens):
            torch.ge(torch.rand(n, generator=g, device=self.device), p, out=out[r])
        return out.view(runs, *shape)

    def subset(self, index) -> None:
        """Keep the runs ``index`` (a list of positions): their generators and masks drawn ahead."""
        self.gens = [self.gens[i] for i in index]
        idx = torch.as_tensor(index, dtype=torch.long, device=self.device)
        self._ahead = [(shape, p, mask.index_select(0, idx)) for shape, p, mask in self._ahead]
        if self._states_before_ahead is not None:
            self._states_before_ahead = [self._states_before_ahead[i] for i in index]

    def states(self) -> list:
        """Each generator's state as it was before the masks drawn ahead and not yet taken (what a
        checkpoint saves: a resumed batch draws those masks again, the same bits)."""
        if self._ahead:
            return [s.clone() for s in self._states_before_ahead]
        return [g.get_state() for g in self.gens]


