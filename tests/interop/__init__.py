"""Interop with Burn itself: files Burn wrote, and Burn's own tests ported."""
