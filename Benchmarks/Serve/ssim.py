"""SSIM (Wang, Bovik, Sheikh and Simoncelli 2004) on luma, with NumPy only: an 11-tap Gaussian
window (sigma 1.5), K1 0.01, K2 0.03, the mean over the valid part of the picture. Used by the
benchmarks to compare results with a reference; 1.0 is identical."""
import numpy as np

_TAPS = np.exp(-0.5 * ((np.arange(11) - 5) / 1.5) ** 2)
_TAPS /= _TAPS.sum()


def luma(pixels):
    """Rec. 601 luma (0-255 floats) of an HxW, HxWx3 or HxWx4 uint8 array; alpha is ignored."""
    array = np.asarray(pixels, dtype=np.float64)
    if array.ndim == 2:
        return array
    if array.shape[2] < 3:
        return array[..., 0]
    return 0.299 * array[..., 0] + 0.587 * array[..., 1] + 0.114 * array[..., 2]


def _blur(plane):
    rows = sum(tap * plane[index:plane.shape[0] - 10 + index, :] for index, tap in enumerate(_TAPS))
    return sum(tap * rows[:, index:rows.shape[1] - 10 + index] for index, tap in enumerate(_TAPS))


def ssim(a, b):
    """SSIM of two pictures of the same size (uint8 arrays, any channel count)."""
    x, y = luma(a), luma(b)
    if x.shape != y.shape:
        raise ValueError(f"sizes differ: {x.shape} and {y.shape}")
    if min(x.shape) < 11:
        raise ValueError(f"too small for an 11-pixel window: {x.shape}")
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    mx, my = _blur(x), _blur(y)
    sxx = _blur(x * x) - mx * mx
    syy = _blur(y * y) - my * my
    sxy = _blur(x * y) - mx * my
    value = ((2 * mx * my + c1) * (2 * sxy + c2)) / ((mx * mx + my * my + c1) * (sxx + syy + c2))
    return float(value.mean())
