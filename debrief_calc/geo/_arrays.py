"""Type names for the numpy arrays the calculations pass around."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["FloatArray"]

FloatArray = NDArray[np.float64]
