"""The module system: ``Module``, ``Param``, ``ParamId``, visitors and mappers.

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import NdArray
    >>> from ferrum.module import Param
    >>> Param(Tensor.zeros((2, 2), NdArray.device())).val().dims()
    (2, 2)
"""

from ferrum.module.base import Module, ModuleMapper, ModuleVisitor
from ferrum.module.param import Param, ParamId, RunningState
from ferrum.module.reinit import Reinitializer

__all__ = ["Module", "ModuleMapper", "ModuleVisitor", "Param", "ParamId", "Reinitializer", "RunningState"]
