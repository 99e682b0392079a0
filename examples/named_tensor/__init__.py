"""Burn's ``named-tensor`` example: dimension names checked by the type checker and at run time."""
