"""The fake ``torch.nn.functional``: see ``torch/_kernels.py``."""

from .._kernels import conv2d, scaled_dot_product_attention

__all__ = ["conv2d", "scaled_dot_product_attention"]
