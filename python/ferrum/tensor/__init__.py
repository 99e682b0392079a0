"""Helpers around the native ``Tensor``: its rank markers and the tools that read or show tensors.

- ``ferrum.tensor.rank``: ``D1`` .. ``D6`` and ``Rank``, the rank of ``Tensor[B, D2]``
- ``ferrum.tensor.named``: ``NamedTensor`` and ``Dim``, dimension names in the type
- ``ferrum.tensor.print_options``: how ``str(tensor)`` shows values
- ``ferrum.tensor.transaction``: ``Transaction``, several tensors read in one go
- ``ferrum.tensor.report``: ``check_closeness``, how closely two tensors agree

``Tensor`` itself is native (``ferrum._ferrum``); ``ferrum`` re-exports all of
these names, so most code imports them from there.

Example:
    >>> from ferrum import D2
    >>> from ferrum.tensor.rank import D2 as rank_two
    >>> rank_two is D2, rank_two.rank
    (True, 2)
"""
