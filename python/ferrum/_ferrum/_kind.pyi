"""Element kinds (Float, Int, Bool) and storage dtypes."""

import builtins
from typing import final

class Kind:
    ...

@final
class Float(Kind):
    ...

@final
class Int(Kind):
    ...

@final
class Bool(Kind):
    ...

@final
class DType:
    F32: DType
    F64: DType
    F16: DType
    BF16: DType
    I64: DType
    I32: DType
    U8: DType
    Bool: DType
    @property
    def kind(self) -> type[Kind]: ...
    def __int__(self) -> builtins.int: ...
